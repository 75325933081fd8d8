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

pub mod checkpoint;
mod error;
mod format;
mod load;
pub mod private;
mod store;
mod writer;

pub use error::StoreError;
pub use format::{age, civil_from_days, new_id, now, Meta, Record, FORMAT_VERSION};
pub use load::Loaded;
pub use store::{first_lines, title_from_prompt, Found, SessionStore, Summary};
pub use writer::{SessionWriter, HANDOVER};
