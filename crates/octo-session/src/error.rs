//! What a session operation can fail with.

/// A session operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading or writing failed.
    #[error("session file {path}: {reason}")]
    Io {
        /// The file or directory.
        path: String,
        /// What failed.
        reason: String,
    },
    /// The file is not a session file.
    #[error("{path} is not a usable session file: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The file was written by a newer octo.
    #[error("{path} was written by a newer octo (session format {found}; this octo reads up to {supported}). Update octo to open it; the file was not changed.")]
    FutureVersion {
        /// The file.
        path: String,
        /// Its version.
        found: u32,
        /// The newest this build reads.
        supported: u32,
    },
    /// Another octo process is writing this session.
    #[error("session {id} is in use by another octo process; start a new session or close the other one")]
    InUse {
        /// The session.
        id: String,
    },
    /// No session matches.
    #[error("no session matches `{query}`")]
    NotFound {
        /// What was looked for.
        query: String,
    },
}
