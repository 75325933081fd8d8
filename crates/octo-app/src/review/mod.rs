//! Code review (`/review`, `octo review`): octo gathers the diff with `git` (the working tree, the
//! staged changes, a branch against its base, or one commit), the model reviews it in plan mode
//! (read-only tools), and its findings come back in a fixed shape — file, line, severity, title,
//! explanation, suggested change — with a verdict, so front ends render a list, print JSON, or
//! fail a CI step (`--fail-on`).
//!
//! A user's own command or skill named `review` wins in the REPL (it runs as written); elsewhere
//! its prompt replaces octo's review instructions, the diff and the shape still added.
//!
//! Rooms: `diff` (what to review) → `findings` (reading the answer) → here (the prompt and the
//! session's verb).

mod diff;
mod findings;

pub use diff::{gather, Diff};
pub use findings::{parse, Finding, Review, Severity, Verdict};

use crate::permissions::Mode;
use crate::session::Session;
use std::path::PathBuf;
use thiserror::Error;

/// What to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewTarget {
    /// Everything not committed: staged, unstaged and untracked files.
    WorkingTree,
    /// The staged changes only.
    Staged,
    /// The current branch against this one (from where they part).
    Base(String),
    /// One commit.
    Commit(String),
}

impl ReviewTarget {
    /// The target in words ("the uncommitted changes", "commit 1a2b3c").
    pub fn describe(&self) -> String {
        match self {
            Self::WorkingTree => "the uncommitted changes".into(),
            Self::Staged => "the staged changes".into(),
            Self::Base(b) => format!("this branch's changes against {b}"),
            Self::Commit(c) => format!("commit {}", c.get(..12).unwrap_or(c)),
        }
    }

    /// Reads `/review`'s argument: nothing (the working tree), `--staged`, `--base REF`,
    /// `--commit SHA`, or a bare name — a branch is a base, anything else a commit.
    pub fn parse(arg: &str, workspace: &std::path::Path) -> Result<Self, ReviewError> {
        let words: Vec<&str> = arg.split_whitespace().collect();
        Ok(match words.as_slice() {
            [] => Self::WorkingTree,
            ["--staged" | "staged"] => Self::Staged,
            ["--base", r] => Self::Base((*r).to_owned()),
            ["--commit", c] => Self::Commit((*c).to_owned()),
            [name] if !name.starts_with('-') => {
                let branch = std::process::Command::new("git")
                    .current_dir(workspace)
                    .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
                    .arg(format!("refs/heads/{name}"))
                    .output()
                    .is_ok_and(|o| o.status.success());
                let remote = name.contains('/')
                    && std::process::Command::new("git")
                        .current_dir(workspace)
                        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
                        .arg(format!("refs/remotes/{name}"))
                        .output()
                        .is_ok_and(|o| o.status.success());
                if branch || remote {
                    Self::Base((*name).to_owned())
                } else {
                    Self::Commit((*name).to_owned())
                }
            }
            _ => return Err(ReviewError::Usage(arg.to_owned())),
        })
    }
}

/// Why there is no review.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// The workspace is not in a git repository.
    #[error("{} is not in a git repository, so there is no diff to review (run git init, or review a file by asking for it)", .0.display())]
    NotARepository(PathBuf),
    /// Git refused (an unknown ref, a broken repository); its message.
    #[error("git: {0}")]
    Git(String),
    /// An argument `/review` does not take.
    #[error("`/review {0}` is not a review target. Usage: /review [--staged | --base REF | --commit SHA | BRANCH | SHA]")]
    Usage(String),
    /// The turn could not run.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    /// The user's `review` command could not be prepared (or asks what nobody can answer here).
    #[error("the review command: {0}")]
    Command(String),
}

/// What a review came to.
#[derive(Debug, Clone)]
pub struct ReviewOutcome {
    /// What was reviewed.
    pub diff: Diff,
    /// The model's whole answer.
    pub answer: String,
    /// The findings, or why the answer did not hold them.
    pub review: Result<Review, String>,
    /// The turn.
    pub summary: crate::fold::TurnSummary,
}

/// octo's review instructions.
const INSTRUCTIONS: &str = "\
Review these changes as a careful senior engineer would before they are merged. Look for bugs, \
wrong edge cases, security problems, data loss, races, broken error handling, missing tests for \
new behaviour, and anything that contradicts the rest of the code base. Read the surrounding code \
with your read-only tools whenever the diff alone does not settle a question. Report only real \
problems, each once, with the file and line it is on; leave out praise and matters of taste.";

/// The shape the answer must end with.
const SHAPE: &str = "\
End your answer with exactly one JSON object in a ```json block, shaped like this:
{\"verdict\": \"approve\" | \"request_changes\" | \"comment\",
 \"findings\": [{\"file\": \"path/in/repo\", \"line\": 12, \"severity\": \"high\" | \"medium\" | \"low\",
   \"title\": \"one line\", \"explanation\": \"why it is a problem\", \"suggestion\": \"what to change\"}]}
high: a bug, a security hole or data loss; medium: a real problem in a corner case or a missing \
test; low: small clean-ups. With nothing to report, findings is [] and the verdict approve.";

/// The prompt for reviewing `diff`; `custom` replaces octo's instructions (a user's `review`
/// command).
pub fn prompt(diff: &Diff, custom: Option<&str>) -> String {
    let instructions = custom.map(str::trim).filter(|c| !c.is_empty()).unwrap_or(INSTRUCTIONS);
    format!(
        "{instructions}\n\nThe changes: {} ({} file(s)).\n\n<diff>\n{}\n</diff>\n\n{SHAPE}",
        diff.description,
        diff.files,
        diff.text.trim_end()
    )
}

impl Session {
    /// Whether the user has a command or skill named `review` (which then wins over octo's).
    pub fn has_own_review(&self) -> bool {
        self.skills().get("review").is_some()
    }

    /// Reviews `target` in this session: `None` when there is nothing to review (no model call).
    /// The turn runs in plan mode, and the mode is put back after.
    pub async fn review(&self, target: &ReviewTarget) -> Result<Option<ReviewOutcome>, ReviewError> {
        let Some(diff) = gather(self.workspace(), target)? else { return Ok(None) };
        let custom = self.own_review_prompt(target).await?;
        let text = prompt(&diff, custom.as_deref());
        let before = self.status().mode;
        self.set_mode(Mode::Plan);
        let summary = self.run(&text).await;
        self.set_mode(before);
        let summary = summary?;
        let answer = summary.answer.clone();
        let review = if summary.failed() {
            Err(summary.error.clone().unwrap_or_else(|| "the review turn failed".into()))
        } else {
            parse(&answer)
        };
        Ok(Some(ReviewOutcome { diff, answer, review, summary }))
    }

    /// The user's `review` command's prompt, when there is one (its steps must need no yes).
    async fn own_review_prompt(&self, target: &ReviewTarget) -> Result<Option<String>, ReviewError> {
        if !self.has_own_review() {
            return Ok(None);
        }
        let arg = match target {
            ReviewTarget::WorkingTree => String::new(),
            ReviewTarget::Staged => "--staged".into(),
            ReviewTarget::Base(b) => b.clone(),
            ReviewTarget::Commit(c) => c.clone(),
        };
        let Some(invocation) = self.invoke("review", &arg).await else { return Ok(None) };
        let invocation = invocation.map_err(|e| ReviewError::Command(e.to_string()))?;
        if let Some(step) = invocation.questions().next() {
            return Err(ReviewError::Command(format!(
                "it would {}, and nobody can answer here",
                step.action
            )));
        }
        let prepared =
            self.finish_invocation(invocation).await.map_err(|e| ReviewError::Command(e.to_string()))?;
        Ok(Some(prepared.message.text()))
    }
}
