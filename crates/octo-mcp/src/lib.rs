//! Model Context Protocol for octo, on the official Rust SDK (`rmcp`).
//!
//! - [`config`]: servers as configured — `[mcp_servers.<name>]` in octo's TOML files, or a
//!   project's `.mcp.json` in Claude Code's format — with `${VAR}` expansion and fingerprints for
//!   approving a project's servers.
//! - [`McpHub`]: the servers of a session, started in parallel in the background, supervised
//!   (restarted on next use after an exit, a few times, with backoff; their process groups
//!   killed with them), each failure reported once; [`McpSource`] offers their tools to the
//!   agent as `mcp__<server>__<tool>`, and changes generation when a server's list changes.
//! - [`serve`]: octo's own tools served over MCP on stdio (`octo mcp serve`), behind a
//!   permission gate.
//!
//! No JSON-RPC framing is written here: the SDK does it.

mod client;
pub mod config;
mod error;
mod hub;
mod names;
pub mod prompts;
pub mod serve;
mod session_http;
mod tool;

pub use config::{parse_mcp_json, McpJson, Origin, ServerConfig, ServerSpec, Transport};
pub use error::{PromptError, ServeError, SpecError};
pub use hub::{McpHub, ServerStatus};
pub use names::tool_name;
pub use tool::McpSource;
