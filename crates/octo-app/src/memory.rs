//! Memory in a session: the two scopes (`~/.octo/memory` and the workspace's), the prompt
//! section read once when the session starts, the model's tools, `/remember`, and the dream
//! that consolidates an index (its previous text kept in octo's trash).

use crate::home::Home;
use octo_memory::{Memory, ToolEnv};
use std::path::Path;
use std::sync::Arc;

/// What the model is told about memory, before the indexes.
const GUIDANCE: &str =
    "Saved by earlier sessions (memory_search finds details, memory_delete removes what is wrong).";

/// The memory of `workspace`.
pub fn open(home: &Home, workspace: &Path) -> Memory {
    Memory::for_workspace(&home.memory(), &crate::worktree::memory_path(workspace))
}

/// The prompt's memory section (`None` when nothing is saved and the model cannot save), and
/// notices about what was left out.
pub(crate) fn prompt_section(memory: &Memory, tools: bool) -> (Option<String>, Vec<String>) {
    let (indexes, notices) = memory.prompt(octo_memory::PROMPT_BUDGET);
    let text = match (indexes, tools) {
        (Some(i), true) => Some(format!("{GUIDANCE}\n\n{i}")),
        (Some(i), false) => Some(i),
        (None, true) => Some(format!("{GUIDANCE} Nothing is saved yet.")),
        (None, false) => None,
    };
    (text, notices)
}

/// What the memory tools are given: the credential check and the clock.
pub(crate) fn tool_env() -> ToolEnv {
    ToolEnv { guard: Arc::new(octo_tools::secrets::credential_in), now: Arc::new(now) }
}

/// The time now, `YYYY-MM-DD HH:MM` (UTC).
pub(crate) fn now() -> String {
    let secs = octo_session::now();
    let (y, m, d) = octo_session::civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", secs % 86_400 / 3600, secs % 3600 / 60)
}

/// Why `/remember`, `/memory --here` or a dream did nothing; the message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryActionError {
    /// The session has no memory (it was built around a custom agent).
    #[error("this session has no memory")]
    NoMemory,
    /// `/remember` without text.
    #[error("/remember needs the text to remember, e.g. /remember the CI needs NODE_ENV=test")]
    Empty,
    /// The text looks like a credential.
    #[error("not remembered: it seems to contain {0}, and memory is read into later prompts in plain text")]
    Secret(String),
    /// The note could not be written.
    #[error("not remembered: {0}")]
    NotSaved(#[source] octo_memory::MemoryError),
    /// `/memory --here` would overwrite a file.
    #[error("{0} exists already; move the files yourself")]
    Exists(String),
    /// A file operation failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was tried (`create`, `copy to`, `write`).
        action: &'static str,
        /// The file or folder.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The workspace's choice could not be recorded.
    #[error("cannot record the choice: {0}")]
    Record(#[source] std::io::Error),
    /// There is no model to dream with.
    #[error("no model to dream with")]
    NoModel,
    /// The dream's model call took too long.
    #[error("the dream's model call took longer than 3 minutes; nothing was written")]
    DreamTimeout,
    /// The dream's model call failed.
    #[error("the dream's model call failed; nothing was written")]
    DreamFailed,
    /// The model's answer is no index.
    #[error("{0}; nothing was written")]
    NotAnIndex(#[source] octo_memory::DreamError),
    /// The index cannot be read (it is never replaced then).
    #[error("{0}; nothing was written")]
    Index(#[source] octo_memory::MemoryError),
    /// The previous index could not be kept in the trash.
    #[error("could not keep the previous index in the trash, so nothing was written: {0}")]
    Trash(String),
    /// The new index could not be written.
    #[error("{0}")]
    Replace(#[source] octo_memory::MemoryError),
    /// The session has ended.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
}

/// `/remember TEXT`: a dated line in the workspace's Scratch Notes, without a model call.
/// Refused when it looks like a credential.
pub(crate) fn remember(memory: &Memory, text: &str) -> Result<String, MemoryActionError> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err(MemoryActionError::Empty);
    }
    if let Some(what) = octo_tools::secrets::credential_in(&text) {
        return Err(MemoryActionError::Secret(what.to_string()));
    }
    let line = format!("- {}: {text}", &now()[..10]);
    memory.workspace.note(&line).map_err(MemoryActionError::NotSaved)?;
    Ok(line)
}
