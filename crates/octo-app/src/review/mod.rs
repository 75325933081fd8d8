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
mod target;

pub use diff::{gather, Diff};
pub use findings::{parse, Finding, FindingsError, Review, Severity, Verdict};
pub use target::{ReviewError, ReviewTarget};

use crate::permissions::Mode;
use crate::session::Session;

/// What a review came to.
#[derive(Debug, Clone)]
pub struct ReviewOutcome {
    /// What was reviewed.
    pub diff: Diff,
    /// The model's whole answer.
    pub answer: String,
    /// The findings, or why the answer did not hold them.
    pub review: Result<Review, FindingsError>,
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

/// Whether the user has a command or skill named `review` (which then wins over octo's).
pub fn has_own(session: &Session) -> bool {
    session.skills().catalog().get("review").is_some()
}

/// Reviews `target` in this session: `None` when there is nothing to review (no model call).
/// The turn runs in plan mode, and the mode is put back after.
pub async fn run(session: &Session, target: &ReviewTarget) -> Result<Option<ReviewOutcome>, ReviewError> {
    let Some(diff) = gather(session.workspace(), target)? else { return Ok(None) };
    let custom = own_review_prompt(session, target).await?;
    let text = prompt(&diff, custom.as_deref());
    let before = session.status().mode;
    session.permissions().set_mode(Mode::Plan);
    let summary = session.run(&text).await;
    session.permissions().set_mode(before);
    let summary = summary?;
    let answer = summary.answer.clone();
    let review = if summary.failed() {
        Err(FindingsError::Turn(summary.error.clone().unwrap_or_else(|| "the review turn failed".into())))
    } else {
        parse(&answer)
    };
    Ok(Some(ReviewOutcome { diff, answer, review, summary }))
}

/// The user's `review` command's prompt, when there is one (its steps must need no yes).
async fn own_review_prompt(session: &Session, target: &ReviewTarget) -> Result<Option<String>, ReviewError> {
    if !has_own(session) {
        return Ok(None);
    }
    let arg = match target {
        ReviewTarget::WorkingTree => String::new(),
        ReviewTarget::Staged => "--staged".into(),
        ReviewTarget::Base(b) => b.clone(),
        ReviewTarget::Commit(c) => c.clone(),
    };
    let Some(invocation) = session.skills().invoke("review", &arg).await else { return Ok(None) };
    let invocation = invocation.map_err(|e| ReviewError::Command(e.to_string()))?;
    if let Some(step) = invocation.questions().next() {
        return Err(ReviewError::Command(format!("it would {}, and nobody can answer here", step.action)));
    }
    let prepared =
        session.skills().finish(invocation).await.map_err(|e| ReviewError::Command(e.to_string()))?;
    Ok(Some(prepared.message.text()))
}
