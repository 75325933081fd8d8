//! The Session facade and everything behind it. Its rooms, leaf first:
//!
//! - `options`, `error`: what a session is started with, reports, and fails with;
//! - `state`: the core made first — the event channel, the shared state, the saved id;
//! - `setup`: the typed parts a started session keeps;
//! - `actor`: the task that owns the agent, one step per command;
//! - `facade`: [`Session`] itself — prompts, events, status; `command`: its shared commands;
//! - the start pipeline: `steps` and `tools_step` (each returns a part), `resume`, and
//!   `start` (their composition);
//! - `handles`: the sub-handles [`Session`] hands out for everything beyond its core, and
//!   their verbs by feature: `approvals` (and the permission mode and rules), `conversation`,
//!   `rewind`, `memory`, `mcp`, `skills` (and what waits for trust), `hooks`, `tools` (and the
//!   end of a session).
//!
//! This module only names them.

mod actor;
mod approvals;
mod ask;
mod budget;
mod command;
mod context;
mod conversation;
mod error;
mod export;
mod facade;
mod handles;
mod hooks;
mod mcp;
mod memory;
mod options;
mod resume;
mod rewind;
mod setup;
mod skills;
mod start;
mod state;
mod steps;
mod tools;
mod tools_step;
mod turns;

pub use context::{ContextPart, ContextReport, GLYPHS as CONTEXT_GLYPHS};
pub use error::SessionError;
pub use export::ExportError;
pub use facade::Session;
pub use handles::{Approvals, Conversation, Memories, Permissions, Servers, Skills, Tools, Trust};
pub use hooks::HookInfo;
pub use memory::DreamPlan;
pub use options::{RunResult, SessionOptions, State, Status};
pub use rewind::{FileUndo, RewindPlan, RewindReport, RewindWhat, TurnInfo};
pub use steps::protected_dirs;
