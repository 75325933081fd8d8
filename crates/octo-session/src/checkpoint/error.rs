//! What a checkpoint operation can fail with.

use std::path::Path;

/// A checkpoint operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// `git` is not installed.
    #[error("checkpoints need git, which is not installed (install git, or set `checkpoints = false`)")]
    NoGit,
    /// A git command failed.
    #[error("checkpoint store: `git {args}` failed: {reason}")]
    Git {
        /// The command's arguments.
        args: String,
        /// What git said.
        reason: String,
    },
    /// The store cannot be used.
    #[error("the checkpoint store {path} cannot be used: {reason}. Move it away to start a new one; the workspace was not touched")]
    Corrupt {
        /// The store.
        path: String,
        /// Why.
        reason: String,
    },
    /// The workspace cannot change, so there is nothing to checkpoint.
    #[error("{path} is on a read-only file system; checkpoints are off")]
    ReadOnly {
        /// The workspace.
        path: String,
    },
    /// Reading or writing a file failed.
    #[error("checkpoints: {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        reason: String,
    },
    /// No such checkpoint.
    #[error("no checkpoint {seq} in session {session}")]
    NotFound {
        /// The session.
        session: String,
        /// The sequence number asked for.
        seq: u32,
    },
}

pub(super) fn io_err(path: &Path, e: &std::io::Error) -> CheckpointError {
    CheckpointError::Io { path: path.display().to_string(), reason: e.to_string() }
}
