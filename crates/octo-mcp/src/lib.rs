//! Model Context Protocol for octo, on the official Rust SDK (`rmcp`).
//!
//! - [`config`]: servers as configured — `[mcp_servers.<name>]` in octo's TOML files, or a
//!   project's `.mcp.json` in Claude Code's format — with `${VAR}` expansion and fingerprints for
//!   approving a project's servers.
//! - [`McpHub`]: the servers of a session, started in parallel in the background, supervised
//!   (restarted on next use after an exit, a few times, with backoff; their process groups
//!   killed with them), each failure reported once; [`McpSource`] offers their tools to the
//!   agent as `mcp__<server>__<tool>`, and changes generation when a server's list changes.
//! - [`oauth`] and [`mod@login`]: OAuth 2.1 for HTTP servers (`octo mcp login NAME`), tokens in
//!   the front end's key store, refreshed as they expire; the older HTTP+SSE transport for
//!   `type: "sse"` servers.
//! - [`elicit`]: a server's questions mid-call (form elicitation), asked through the running
//!   call's front end.
//! - [`serve`]: octo's own tools served over MCP on stdio (`octo mcp serve`), behind a
//!   permission gate.
//!
//! No JSON-RPC framing is written here: the SDK does it.

mod client;
pub mod config;
pub mod elicit;
mod error;
mod explain;
mod hub;
mod legacy_sse;
pub mod login;
mod names;
pub mod oauth;
pub mod prompts;
pub mod serve;
mod session_http;
mod tool;
mod tool_cache;

pub use config::{parse_mcp_json, McpJson, Origin, ServerConfig, ServerSpec, Transport};
pub use elicit::{ElicitAnswer, Elicitation, Elicitor};
pub use error::{PromptError, ServeError, SpecError};
pub use hub::{McpHub, ServerStatus};
pub use login::{login, open_browser, Login, LoginError};
pub use names::tool_name;
pub use oauth::{OAuthSettings, OAuthSpec, SecretStore};
pub use tool::McpSource;
