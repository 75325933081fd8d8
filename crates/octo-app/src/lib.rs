//! # octo-app
//!
//! The one place that turns configuration into a working agent, and the API every front end
//! drives: the `octo` CLI now, a web server and chat bridges later, and programs that embed octo.
//!
//! - [`Launcher`]: one call from a front end's wish to a ready [`Session`]: the home layout
//!   ([`Home`]), the key store, the workspace, finding a saved session, configuration.
//! - [`config`]: `~/.octo/config.toml` (or `OCTO_HOME`), the project's `.octo/config.toml`,
//!   environment variables and flags, merged flag > env > project > user > default, each value
//!   knowing its source; unknown keys and wrong types are errors naming file, line and key.
//! - [`credentials`]: keys from the OS keyring (or a key file), else the vendor's environment
//!   variable.
//! - [`factory`]: endpoint + model + key → the right provider adapter, as a `Sender`.
//! - [`tools`]: the session's tools, assembled from sources (built-ins now; MCP, skills and
//!   sub-agents plug in as more sources).
//! - [`permissions`]: allow / ask / deny rules, modes, and remembered answers, as the agent's
//!   permission gate; tools are checked by what they declare, never by name.
//! - [`prompt`]: the system prompt, assembled once per session in a fixed order.
//! - [`hooks`]: hook files (octo's config, Claude Code's settings.json), trusting a project's,
//!   the event log.
//! - [`memory`]: the user's and the workspace's memory: the prompt section, the model's tools,
//!   `/remember`, the dream.
//! - [`subagents`]: the `task` tool: child agents of named types, limited, in parallel or in the
//!   background, never with more rights than the session.
//! - [`skills`]: skills and custom commands from Claude Code's and octo's folders; `/name args`
//!   checked by the permission engine before anything runs.
//! - [`session`]: the [`Session`] facade: a small core (prompts, queued; events; commands;
//!   abort; status) and sub-handles for the rest (`approvals()`, `conversation()`,
//!   `memories()`, `servers()`, `skills()`, `trust()`, `tools()`, `permissions()`).
//! - [`commands`]: the one command vocabulary (`/status`, `/mode`, `/model`, …) every front end
//!   parses, runs on the session and renders.
//! - `fold`: one fold of a turn's events into a [`TurnSummary`], and the [`TurnRenderer`] trait
//!   every output implements.
//!
//! **Layer:** bootstrap. It depends on every adapter (providers, tools) and on the core; front
//! ends depend on it and on nothing below it except the core types it re-exports.
//!
//! A complete tool-using session, with approvals answered by the program. Here it runs against
//! a scripted mock endpoint (hidden setup); point `config.toml` at any real endpoint instead:
//!
//! ```
//! use octo_app::config::{Config, Overrides};
//! use octo_app::credentials::MemoryStore;
//! use octo_app::{AgentEvent, Session, SessionOptions};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use octo_testkit::{anthropic::Reply, MockLlm, Scripted};
//! # let llm = MockLlm::start().await;
//! # llm.script_anthropic([
//! #     Scripted::sse(Reply::new().tool_use("t1", "write_file", serde_json::json!({"path": "hello.txt", "content": "hi\n"})).sse()),
//! #     Scripted::sse(Reply::new().text("Wrote hello.txt.").sse()),
//! # ]).await;
//! # let tmp = tempfile::tempdir()?;
//! # let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
//! # std::fs::create_dir_all(&home)?;
//! # std::fs::create_dir_all(&ws)?;
//! # std::fs::write(home.join("config.toml"), format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n", llm.uri()))?;
//! let env = |name: &str| (name == "MOCK_KEY").then(|| "sk-mock".to_owned());
//! let config = Config::load(&home, &ws, &env, &Overrides::default())?;
//! let options = SessionOptions { workspace: Some(ws.clone()), ..SessionOptions::default() };
//! let session = Session::start(config, options, &MemoryStore::default(), &env)?;
//! let mut events = session.subscribe();
//! session.prompt("Create hello.txt")?;
//! while let Ok(event) = events.recv().await {
//!     match event {
//!         AgentEvent::ApprovalRequired { approval_id, .. } => session.approvals().approve(&approval_id)?,
//!         AgentEvent::TextDelta { text } => print!("{text}"),
//!         AgentEvent::TurnEnd { .. } => break,
//!         _ => {}
//!     }
//! }
//! assert_eq!(std::fs::read_to_string(ws.join("hello.txt"))?, "hi\n");
//! # Ok(())
//! # }
//! ```

pub(crate) mod checkpoints;
mod claude_imports;
pub mod claude_plugins;
mod command_diagnostics;
pub mod commands;
pub mod config;
/// The chat-app bridges' settings (`[channels.<name>]`), part of the configuration.
pub use config::channels;
pub mod credentials;
pub mod factory;
pub(crate) mod fold;
mod hook_guard;
pub mod hooks;
pub mod marketplaces;
pub mod mcp;
pub mod mcp_serve;
pub mod memory;
#[cfg(feature = "local")]
pub mod models;
/// Where an MCP server is configured.
pub use octo_mcp::{Origin as McpOrigin, ServerStatus as McpServerStatus};
/// What `toml_edit` tables `octo mcp add` builds.
pub use toml_edit;
pub(crate) mod claude_schema;
pub(crate) mod git_cli;
mod git_head;
mod home;
pub mod init;
mod launcher;
pub mod lsp;
pub use octo_permissions as permissions;
mod nested_rules;
mod persist;
pub mod plugin_parts;
mod plugin_source;
pub mod plugins;
pub mod prompt;
pub(crate) use octo_permissions::protected;
mod repomap;
pub mod review;
pub mod sandbox;
pub mod session;
pub mod setup;
pub mod skills;
pub mod status_line;
pub mod subagents;
pub mod tools;
pub(crate) mod turn_models;
pub mod worktree;

/// The saved-session store: listing, finding, exporting and branching (`octo-session`).
pub use octo_session as session_store;

pub use fold::{Change, McpProblem, ToolCallRecord, TurnFold, TurnRenderer, TurnSummary};
pub use home::Home;
pub use launcher::{Env, Launch, LaunchError, Launcher, Resume};
/// Skills and custom commands (`octo-skills`).
pub use octo_skills as skill_files;
/// Reading the clipboard for a paste.
pub use octo_tools::clipboard;
/// Preparing images to attach (checked, capped, downscaled).
pub use octo_tools::image;
/// octo's trash of previous file contents (for `octo trash`).
pub use octo_tools::trash;
/// What undoing a file change does.
pub use octo_tools::trash::Undo;
/// The model's task list, as [`crate::session::Conversation::todos`] returns it.
pub use octo_tools::{Todo, TodoStatus};
pub use permissions::{Mode, PermissionEngine};
pub use session::{
    DreamPlan, FileUndo, HookInfo, RewindPlan, RewindReport, RewindWhat, RunResult, Session, SessionError,
    SessionOptions, State, Status, TurnInfo,
};

/// Where `read_file` reads before the disk (an editor's buffers), and the attribute to implement it.
pub use octo_agent::async_trait;
/// How a tool describes itself (what it touches, whether it only reads), for front ends that
/// show calls by kind.
pub use octo_agent::{Access, Subject, ToolMeta};
/// The core types front ends name, re-exported so they need not depend on `octo-agent`.
pub use octo_agent::{
    AgentEvent, ApprovalDecision, ApprovalRequest, CancellationToken, CompactReason, ContentBlock, ErrorKind,
    ImageSource, Message, OutputKind, ReasoningEffort, Role, StopReason, ToolOutcome, ToolResultPart,
    TurnEndReason, Usage,
};
/// An MCP server's settings as written (for servers a front end supplies, see
/// [`Launcher::start_with_servers`]).
pub use octo_mcp::ServerSpec as McpServerSpec;
pub use octo_tools::Buffers;

/// A call as Claude Code names it (`terminal` with `path`… as `Bash`, `Write` with
/// `file_path`), for outputs read by programs written for Claude Code; `None` for a tool it does
/// not have.
pub fn claude_tool_call(tool: &str, input: &serde_json::Value) -> Option<(String, serde_json::Value)> {
    octo_tools::claude::hook_call(tool, input)
}

/// A tool's Claude Code name (`terminal` is `Bash`), when it has one.
pub fn claude_tool_name(tool: &str) -> Option<String> {
    octo_tools::claude::claude_names(tool).first().cloned().or_else(|| {
        octo_tools::claude::OUTSIDE
            .iter()
            .find(|(_, octo)| *octo == tool)
            .map(|(claude, _)| (*claude).to_owned())
    })
}

/// An HTTP client set up like the providers' (TLS roots, proxies from the environment, no overall
/// timeout), for front ends that talk to other services, such as the chat bridges.
pub fn http_client() -> Result<reqwest::Client, HttpClientError> {
    octo_provider::build_client(&octo_provider::HttpConfig::default())
}

/// Why an HTTP client could not be set up (the TLS configuration, a proxy setting).
pub use octo_provider::SetupError as HttpClientError;
