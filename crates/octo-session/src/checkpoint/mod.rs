//! Checkpoints: the workspace's files as they were before and after each turn, kept in a git
//! object store of octo's own (`~/.octo/checkpoints/<workspace-id>/`), so anything a turn changed
//! — through octo's file tools, shell commands, sub-agents or hooks — can be put back.
//!
//! The shadow repository is driven with the system `git` (`git.rs`): its own `GIT_DIR`, one index
//! file per session, the workspace as the work tree, `.gitignore` and `.octo/ignore` honoured,
//! and none of the user's git configuration. The user's `.git` is never read for writing: git
//! itself never descends into a `.git`. A snapshot of an unchanged workspace costs one stat per
//! file (git's index cache); unchanged files are stored once across every turn and session.
//!
//! A turn's [`Checkpoint`] is a commit whose tree is the state after the turn, whose parent holds
//! the state before it, and whose message is the turn's record (JSON: session, sequence number,
//! the prompt's first line, time, files changed and by whom, files skipped). It is found by the
//! ref `refs/octo/<session>/<seq>`.

mod error;
mod git;
mod prune;
mod record;
mod restore;
mod snapshot;
mod store;

pub use error::CheckpointError;
pub use prune::{prune, PruneReport};
pub use record::{Change, Checkpoint, TurnRecord};
pub use restore::{FileRestore, RestoreAction, RestorePlan, RestoreReport};
pub use snapshot::{Skipped, Snapshot};
pub use store::{workspace_id, CheckpointStore, DEFAULT_MAX_FILE_BYTES};
