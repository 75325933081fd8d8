//! # octo-memory
//!
//! Memory that lasts across sessions, for the octo coding agent. Two scopes — the user's
//! (`~/.octo/memory`) and the workspace's (under `~/.octo/memory/workspaces/<key>`, or the
//! workspace's own `.octo/memory` when the user asks for it) — each a folder of entries (one
//! Markdown file each, frontmatter `name`, `description`, `type`, `updated`) and an index,
//! `MEMORY.md`, with the sections User, Project, Constraints, Consolidated Facts and Scratch Notes.
//!
//! - [`Memory::prompt`]: both indexes for the system prompt, within a budget (the newest lines
//!   win).
//! - [`tools`]: `memory_save`, `memory_delete`, `memory_search` for the model.
//! - [`Store`]: one scope's folder; saves are locked and atomic, so two processes lose nothing.
//! - [`dream`]: the consolidation request and the check of its answer.
//!
//! **Layer:** adapter. Depends on `octo-agent` only (plus a YAML parser).
//!
//! ```
//! use octo_memory::{Entry, Kind, Memory};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let home = tempfile::tempdir()?;
//! let ws = tempfile::tempdir()?;
//! let memory = Memory::for_workspace(home.path(), ws.path());
//! memory.workspace.save(&Entry {
//!     name: "test-command".into(),
//!     description: "run the tests with make test".into(),
//!     kind: Kind::Project,
//!     updated: "2026-11-30 12:00".into(),
//!     body: "`make test` runs everything offline.".into(),
//! })?;
//! let (prompt, _) = memory.prompt(octo_memory::PROMPT_BUDGET);
//! assert!(prompt.ok_or("empty")?.contains("[test-command](test-command.md): run the tests with make test"));
//! # Ok(())
//! # }
//! ```

pub mod dream;
mod entry;
pub mod index;
mod memory;
mod store;
mod tools;

pub use dream::DreamError;
pub use entry::{valid_name, Entry, EntryError, Kind};
pub use memory::{in_repository, opt_in_here, workspace_key, Hit, Memory, Scope, PROMPT_BUDGET};
pub use store::{MemoryError, Saved, Store};
pub use tools::{tools, ToolEnv};
