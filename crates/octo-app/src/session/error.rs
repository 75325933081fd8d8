//! Why a session could not start or act.

use crate::factory::EndpointError;
use thiserror::Error;

/// Why a session could not start or act.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// No usable endpoint.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The session's task has ended.
    #[error("the session has ended")]
    Closed,
    /// The conversation changed between planning an action and carrying it out.
    #[error("the conversation moved on since; look again and retry")]
    Moved,
    /// A saved session could not be resumed.
    #[error(transparent)]
    Store(#[from] octo_session::StoreError),
    /// The checkpoints could not be read or used.
    #[error("checkpoints: {0}")]
    Checkpoint(String),
    /// The session to resume belongs to another directory.
    #[error("session {id} belongs to {dir}; continue it there (cd {dir} && octo -c={id}) or pass --workspace {dir}")]
    OtherDirectory {
        /// The session.
        id: String,
        /// Its directory.
        dir: String,
    },
}

impl SessionError {
    /// Whether the user must fix how the session was asked for (configuration, endpoint, the
    /// directory of a resumed session), as opposed to a failure.
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Config(_) | Self::Endpoint(_) | Self::OtherDirectory { .. })
    }
}
