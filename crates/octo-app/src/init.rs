//! `/init`, `octo init`: the model surveys the repository with read-only tools (plan mode) and
//! proposes its `AGENTS.md` — how to build and test it, how it is laid out, the conventions the
//! code follows — or changes to the one there is, shown as a diff. Nothing is written until the
//! user says yes ([`crate::init::write`]); the file it replaces goes to octo's trash.

use crate::permissions::Mode;
use crate::session::{Session, SessionError};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The file `/init` writes.
pub(crate) const AGENTS_FILE: &str = "AGENTS.md";

/// Why there is no proposal.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum InitError {
    /// Nothing in the folder to survey.
    #[error("{} is empty: there is nothing to survey yet (add the code first, then run /init)", .0.display())]
    Empty(PathBuf),
    /// The model's answer held no file.
    #[error("the model's answer held no {AGENTS_FILE} in a ```markdown block; nothing was written (try /init again)")]
    NoFile,
    /// The survey's turn failed.
    #[error("the survey failed: {0}")]
    Failed(String),
    /// The session ended.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Writing the file failed.
    #[error("could not write {path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// What `/init` proposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitProposal {
    /// The file to write.
    pub path: PathBuf,
    /// Its text now, when there is one.
    pub before: Option<String>,
    /// The proposed text.
    pub after: String,
    /// A unified diff from before to after (the whole file as added when there is none).
    pub diff: String,
    /// Whether the workspace is a git repository (a survey without one has less to go on).
    pub repository: bool,
}

/// octo's survey instructions.
fn prompt(existing: Option<&str>) -> String {
    let task = match existing {
        Some(text) => format!(
            "This repository already has an {AGENTS_FILE}. Check it against the code and improve it: correct what is wrong or stale, add what is missing, keep what is right, and keep its author's structure where it works.\n\n<current-agents-md>\n{}\n</current-agents-md>",
            text.trim_end()
        ),
        None => format!("Write this repository's {AGENTS_FILE}."),
    };
    format!(
        "{task}\n\n{AGENTS_FILE} is read at the start of every coding-agent session in this repository, so it holds what an engineer new to the code needs on day one and cannot guess: the exact commands that build, test (a whole suite and one test), lint and format it; how the code is laid out and where things live; the conventions the code follows (naming, errors, tests, dependencies); anything surprising (generated files, environment variables, services a test needs). Survey the repository with your read-only tools first: the build files, the CI configuration, the README and other docs, and a sample of the code. State only what you found in the repository, not general advice. Keep it short: about 20 to 60 lines of Markdown, headed `# {AGENTS_FILE}`.\n\nEnd your answer with the complete file in one ```markdown block and nothing after it."
    )
}

/// The last ```markdown (or ```md) block of `answer`.
fn file_in(answer: &str) -> Option<String> {
    let start =
        answer.rfind("```markdown").map(|i| i + 11).or_else(|| answer.rfind("```md").map(|i| i + 5))?;
    let body = answer[start..].strip_prefix('\n').unwrap_or(&answer[start..]);
    // The closing fence is the last one: the file may hold code blocks of its own.
    let end = body.rfind("```")?;
    let text = body[..end].trim_end();
    (!text.trim().is_empty()).then(|| format!("{text}\n"))
}

/// Whether `dir` holds anything but a `.git` folder.
fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map(|mut d| d.all(|e| e.is_ok_and(|e| e.file_name() == ".git"))).unwrap_or(true)
}

/// A survey about to run: the file it is for, its text now, and the prompt.
#[derive(Debug, Clone)]
pub struct Survey {
    /// The file to propose.
    pub path: PathBuf,
    /// Its text now.
    pub before: Option<String>,
    /// What the model is asked.
    pub prompt: String,
}

impl Survey {
    /// The survey of `workspace`; an error when there is nothing in it.
    pub fn of(workspace: &Path) -> Result<Self, InitError> {
        if is_empty(workspace) {
            return Err(InitError::Empty(workspace.to_path_buf()));
        }
        let path = workspace.join(AGENTS_FILE);
        let before = std::fs::read_to_string(&path).ok();
        let prompt = prompt(before.as_deref());
        Ok(Self { path, before, prompt })
    }

    /// The proposal in the survey's `answer` (its turn's summary).
    pub fn proposal(self, summary: &crate::fold::TurnSummary) -> Result<InitProposal, InitError> {
        if summary.failed() {
            return Err(InitError::Failed(summary.error.clone().unwrap_or_else(|| "the turn failed".into())));
        }
        let after = file_in(&summary.answer).ok_or(InitError::NoFile)?;
        let diff =
            octo_tools::atomic::unified_diff(AGENTS_FILE, self.before.as_deref().unwrap_or(""), &after);
        let repository = self.path.parent().is_some_and(|w| w.join(".git").exists());
        Ok(InitProposal { path: self.path, before: self.before, after, diff, repository })
    }
}

/// Surveys the workspace (in plan mode; the mode is put back after) and proposes its
/// `AGENTS.md`. Writes nothing.
pub async fn propose(session: &Session) -> Result<InitProposal, InitError> {
    let survey = Survey::of(session.workspace())?;
    let mode = session.status().mode;
    session.permissions().set_mode(Mode::Plan);
    let summary = session.run(survey.prompt.clone()).await;
    session.permissions().set_mode(mode);
    survey.proposal(&summary?)
}

/// Writes what [`propose`] proposed, once the user said yes; the file it
/// replaces is kept in octo's trash. Refuses when the file changed since the proposal.
pub fn write(session: &Session, proposal: &InitProposal) -> Result<(), InitError> {
    let failed = |message: String| InitError::Write { path: proposal.path.clone(), message };
    let now = std::fs::read_to_string(&proposal.path).ok();
    if now != proposal.before {
        return Err(failed("it changed since the proposal; run /init again".into()));
    }
    if let (Some(trash), Some(old)) = (session.trash(), proposal.before.as_deref()) {
        trash
            .record(&proposal.path, Some(old.as_bytes()), proposal.after.as_bytes(), "init")
            .map_err(|e| failed(e.to_string()))?;
    }
    // Beneath the workspace's handle: a link swapped in meanwhile cannot send it elsewhere.
    let written = match proposal.path.strip_prefix(session.workspace()) {
        Ok(rel) => octo_tools::beneath::write_beneath(session.workspace(), rel, proposal.after.as_bytes()),
        Err(_) => octo_tools::atomic::write_atomic(&proposal.path, proposal.after.as_bytes()),
    };
    written.map_err(|e| failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_last_markdown_block_with_its_own_code_blocks_kept() {
        let answer = "I read the Makefile.\n```markdown\n# AGENTS.md\n\nRun:\n```sh\nmake test\n```\n```";
        assert_eq!(file_in(answer).unwrap(), "# AGENTS.md\n\nRun:\n```sh\nmake test\n```\n");
        assert_eq!(file_in("no file here"), None);
        assert_eq!(file_in("```markdown\n\n```"), None);
    }

    #[test]
    fn a_folder_with_only_git_is_empty() {
        let d = tempfile::tempdir().unwrap();
        assert!(is_empty(d.path()));
        std::fs::create_dir(d.path().join(".git")).unwrap();
        assert!(is_empty(d.path()));
        std::fs::write(d.path().join("main.rs"), "fn main() {}").unwrap();
        assert!(!is_empty(d.path()));
    }
}
