//! # octo-app
//!
//! The one place that turns configuration into a working agent, and the API every front end
//! drives: the `octo` CLI now, a web server and chat bridges later, and programs that embed octo.
//!
//! - [`config`]: `~/.octo/config.toml` (or `OCTO_HOME`), the project's `.octo/config.toml`,
//!   environment variables and flags, merged flag > env > project > user > default, each value
//!   knowing its source; unknown keys and wrong types are errors naming file, line and key.
//! - [`credentials`]: keys from the OS keyring, else the vendor's environment variable.
//! - [`factory`]: endpoint + model + key → the right provider adapter, as a `Sender`.
//! - [`permissions`]: allow / ask / deny rules, modes, and remembered answers, as the agent's
//!   permission gate.
//! - [`prompt`]: the system prompt, assembled once per session in a fixed order.
//! - [`session`]: the [`Session`] facade: prompts (queued), events, approvals, abort, status.
//!
//! **Layer:** bootstrap. It depends on every adapter (providers, tools) and on the core; front
//! ends depend on it and on nothing below it except the core types it re-exports.
//!
//! A complete tool-using session against an endpoint, with approvals answered by the program:
//!
//! ```no_run
//! use octo_app::{config::{Config, Overrides, process_env}, credentials::OsKeyring, Session, SessionOptions};
//! use octo_app::AgentEvent;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let ws = std::env::current_dir()?;
//! let config = Config::load(&octo_app::config::octo_home(), &ws, &process_env, &Overrides::default())?;
//! let session = Session::start(config, SessionOptions::default(), &OsKeyring, &process_env)?;
//! let mut events = session.subscribe();
//! session.prompt("Add a README section about testing")?;
//! while let Ok(event) = events.recv().await {
//!     match event {
//!         AgentEvent::ApprovalRequired { approval_id, .. } => session.approve(&approval_id)?,
//!         AgentEvent::TextDelta { text } => print!("{text}"),
//!         AgentEvent::TurnEnd { .. } => break,
//!         _ => {}
//!     }
//! }
//! # Ok(())
//! # }
//! ```

pub mod config;
pub mod credentials;
pub mod factory;
pub mod permissions;
mod persist;
pub mod prompt;
pub mod session;

/// Saved sessions: listing, finding, exporting and branching (`octo-session`).
pub use octo_session as sessions;

pub use permissions::{Mode, PermissionEngine};
pub use session::{RunResult, Session, SessionError, SessionOptions, State, Status};

/// The core types front ends name, re-exported so they need not depend on `octo-agent`.
pub use octo_agent::{
    AgentEvent, ApprovalDecision, ApprovalRequest, ContentBlock, ErrorKind, Message, ReasoningEffort, Role,
    StopReason, TurnEndReason, Usage,
};
