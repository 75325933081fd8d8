//! # octo-session
//!
//! Crash-safe persistence of octo conversations: one append-only JSONL file per session under
//! `~/.octo/sessions/`, a meta record first (id, creation time, directory, endpoint and model,
//! parent when branched, format version), then one record per message. Every round is written and
//! `fsync`ed as it completes, so a crash loses at most the round in flight.
//!
//! Loading is forgiving where a crash can leave damage and strict where data could be misread: a
//! torn last line is dropped (and said), a corrupt line in the middle is skipped (and its number
//! said), a file from a newer format version is refused without being touched. A writer holds an
//! exclusive advisory lock, so two octo processes never interleave writes into one file.
//!
//! **Layer:** adapter. Depends on `octo-agent` only.
//!
//! ```
//! use octo_agent::Message;
//! use octo_session::SessionStore;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = SessionStore::new(dir.path());
//! let mut writer = store.create(dir.path(), "anthropic", "claude-sonnet-4-5", None)?;
//! writer.append(&[Message::user("hello"), Message::assistant("hi!")])?;
//! let loaded = store.load(writer.id())?;
//! assert_eq!(loaded.messages.len(), 2);
//! # Ok(())
//! # }
//! ```

mod format;
mod load;
pub mod private;
mod store;
mod writer;

pub use format::{age, civil_from_days, new_id, now, Meta, Record, FORMAT_VERSION};
pub use load::Loaded;
pub use store::{first_lines, title_from_prompt, Found, SessionStore, Summary};
pub use writer::SessionWriter;

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
