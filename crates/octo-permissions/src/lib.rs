//! # octo-permissions
//!
//! The permission engine of the octo coding agent: rules, modes and remembered answers,
//! consulted before every tool call (built-in, MCP, skill or sub-agent), and the one list of
//! what a model must not change unasked ([`protected`]), which the OS sandbox keeps read-only
//! too.
//!
//! **Layer:** above the built-in tools (it reads a URL's host and the secret locations from
//! `octo-tools`), below the application: `octo-app` wires an engine into every session and
//! re-exports this crate as `octo_app::permissions`.
//!
//! The engine knows no tool by name. What it checks comes from the tool's own description
//! ([`octo_agent::ToolMeta`]): whether it only reads, and its subject — a command (checked against
//! command rules and the hard-deny list), a path (path rules, the workspace boundary, protected
//! paths) or a URL (host rules). Deny beats ask beats allow; see [`rules`] for the rule syntax.

mod check;
mod engine;
mod hint;
mod limits;
mod mode;
mod protect;
pub mod protected;
pub mod rules;
mod scope;
mod taint;
mod target;
#[cfg(test)]
mod tests;

pub use engine::PermissionEngine;
pub use hint::allow_hint;
pub use mode::{Mode, UnknownMode};
pub use rules::{normalize_command, Action, Rule, RuleError, RuleSet};
pub use scope::Scope;
