//! What a tool operation can fail with. Each message is written for the model: what failed and
//! what to do instead. A failure becomes an error result with [`ToolError::into_output`].

use octo_agent::{ToolOutcome, ToolOutput};
use thiserror::Error;

/// Why a tool operation failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The call cannot work as asked: a bad pattern or URL, an edit that matches nothing.
    #[error("{0}")]
    Invalid(String),
    /// The file system refused or failed: a missing file, a file that is not text, a failed write.
    #[error("{0}")]
    Io(String),
    /// A network request failed or answered with an error.
    #[error("{0}")]
    Network(String),
    /// What the call names does not exist (a background shell id).
    #[error("{0}")]
    NotFound(String),
    /// The user did not approve what the call needed (a write outside the workspace).
    #[error("{0}")]
    NotApproved(String),
    /// What the call needed had to be approved, and nobody could be asked (a headless run).
    #[error("{0}")]
    Unattended(String),
    /// The turn was cancelled while the call waited for an approval.
    #[error("{0}")]
    Interrupted(String),
}

impl ToolError {
    /// The error result the model sees; a refusal carries the outcome that says so.
    pub fn into_output(self) -> ToolOutput {
        match self {
            Self::NotApproved(m) => ToolOutput::refused(m, ToolOutcome::DeniedByUser),
            Self::Unattended(m) => ToolOutput::refused(m, ToolOutcome::DeniedUnattended),
            Self::Interrupted(m) => ToolOutput::refused(m, ToolOutcome::Interrupted),
            other => ToolOutput::error(other.to_string()),
        }
    }
}

impl From<ToolError> for ToolOutput {
    fn from(e: ToolError) -> Self {
        e.into_output()
    }
}
