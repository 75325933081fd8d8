//! One config file as written: the TOML shape of every key and table (all optional), parsed
//! with errors that name the file, line and key.

use super::endpoints::EndpointConfig;
use super::types::ConfigError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The `[permissions]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsConfig {
    /// Rules that allow without asking.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules that always ask.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Rules that refuse.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The `[shell_env]` table: which environment variables the commands the model runs see.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellEnvConfig {
    /// `all` (default), `core` (PATH, HOME, locale and a few more) or `none`.
    pub inherit: Option<String>,
    /// More names to remove (`*` matches any run of characters, case ignored).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Names to keep although they look secret.
    #[serde(default)]
    pub include: Vec<String>,
    /// Variables set for every command.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

/// The `[subagents]` table: limits on the sub-agents the `task` tool runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentsConfig {
    /// How deep sub-agents may nest (1: a sub-agent cannot start another).
    pub max_depth: Option<u32>,
    /// How many sub-agents may run at once.
    pub max_running: Option<u32>,
    /// Model requests per sub-agent, unless its definition sets fewer.
    pub max_turns: Option<u32>,
}

/// One `[[hooks.<Event>]]` table: a matcher and a command (or Claude Code's `hooks` list).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookToml {
    /// A regular expression over the tool name (or `*`; empty: every call).
    pub matcher: Option<String>,
    /// The shell command.
    pub command: Option<String>,
    /// Seconds it may run (default 60).
    pub timeout: Option<f64>,
    /// Whether it may use the network in the sandbox.
    pub network: Option<bool>,
    /// Claude Code's `if`: a rule (`Bash(git *)`) the tool call must match for it to run.
    #[serde(rename = "if")]
    pub condition: Option<String>,
    /// Claude Code's `async`: run in the background, never waited for and deciding nothing.
    #[serde(rename = "async")]
    pub background: Option<bool>,
    /// Commands as Claude Code lists them (`{ type = "command", command = "…" }`).
    #[serde(default)]
    pub hooks: Vec<HookCommandToml>,
}

/// A command in a [`HookToml`]'s `hooks` list.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookCommandToml {
    /// `command` (the only kind).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The shell command.
    pub command: String,
    /// Seconds it may run.
    pub timeout: Option<f64>,
    /// Whether it may use the network in the sandbox.
    pub network: Option<bool>,
    /// Claude Code's `if`: a rule (`Bash(git *)`) the tool call must match for it to run.
    #[serde(rename = "if")]
    pub condition: Option<String>,
    /// Claude Code's `async`: run in the background, never waited for and deciding nothing.
    #[serde(rename = "async")]
    pub background: Option<bool>,
}

/// One config file as written (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `endpoint:model` used when none is chosen.
    pub default: Option<String>,
    /// `default`, `accept-edits`, `plan` or `auto`.
    pub permission_mode: Option<String>,
    /// Model requests per turn.
    pub max_turns: Option<u32>,
    /// `off`, `low`, `medium`, `high`, `max`.
    pub reasoning_effort: Option<String>,
    /// Output cap per request.
    pub max_tokens: Option<u32>,
    /// Spending limit per session in USD: a turn stops before the request that would pass it.
    pub max_cost: Option<f64>,
    /// Compact when the context is this full (0.75 = 75 %); negative turns automatic compaction
    /// off.
    pub compact_threshold: Option<f64>,
    /// `endpoint:model` used for summaries (a cheaper model); default: the main one.
    pub lite_model: Option<String>,
    /// How the REPL says a long turn is over: `auto`, `bell`, `osc9` or `off`.
    pub notify: Option<String>,
    /// Seconds a turn must take before it is announced (default 30).
    pub notify_after: Option<f64>,
    /// Lines of a command's output the REPL shows under it (default 4; 0: none).
    pub tool_output_lines: Option<usize>,
    /// Named endpoints.
    #[serde(default)]
    pub endpoints: BTreeMap<String, EndpointConfig>,
    /// Permission rules.
    #[serde(default)]
    pub permissions: PermissionsConfig,
    /// The commands' environment.
    #[serde(default)]
    pub shell_env: ShellEnvConfig,
    /// MCP servers.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, octo_mcp::ServerSpec>,
    /// Seconds the first request waits for MCP servers to start (default 5).
    pub mcp_startup_wait: Option<f64>,
    /// Sub-agent limits.
    #[serde(default)]
    pub subagents: SubagentsConfig,
    /// Hooks by event.
    #[serde(default)]
    pub hooks: BTreeMap<String, Vec<HookToml>>,
    /// Append every event of a session to `logs/<session>.jsonl` in octo's home.
    pub log_events: Option<bool>,
    /// How hooks see tool calls: `"claude"` (Claude Code's tool and argument names, the
    /// default) or `"octo"` (octo's own).
    pub hook_format: Option<String>,
    /// The OS sandbox for commands: `workspace-write`, `read-only`, `off` or `required`.
    pub sandbox: Option<String>,
    /// Whether sandboxed commands may use the network.
    pub sandbox_network: Option<bool>,
    /// More directories sandboxed commands may write.
    #[serde(default)]
    pub sandbox_writable_roots: Vec<String>,
    /// Whether the workspace's `.git` is writable in the sandbox.
    pub sandbox_git_writable: Option<bool>,
    /// Whether hook scripts run in the sandbox too (default yes).
    pub sandbox_hooks: Option<bool>,
    /// More secret places sandboxed commands may not read (beside `~/.ssh`, `~/.aws`, …).
    #[serde(default)]
    pub sandbox_deny_read: Vec<String>,
    /// Whether each turn's file changes are checkpointed for `/rewind` (default yes).
    pub checkpoints: Option<bool>,
    /// How many days checkpoints are kept (default 30).
    pub checkpoint_keep_days: Option<u64>,
    /// How large all checkpoint stores may grow, in MB (default 2048).
    pub checkpoint_max_mb: Option<u64>,
    /// Language servers (user config only).
    #[serde(default)]
    pub lsp: BTreeMap<String, octo_lsp::ServerConfig>,
    /// What an edit's result gets from them: `errors` (the default), `warnings` or `off`.
    pub lsp_diagnostics: Option<String>,
    /// How long an edit waits for its diagnostics, in milliseconds (default 1500).
    pub lsp_wait_ms: Option<u64>,
    /// Whether the `repo_map` tool is offered where the workspace has source files (default yes).
    pub repo_map: Option<bool>,
    /// The REPL's status line.
    pub status_line: Option<super::status_line::StatusLineToml>,
    /// Where `--worktree` makes worktrees (user config only; relative: to the repository).
    pub worktree_dir: Option<String>,
    /// Chat-app bridges `octo serve` starts (user config only).
    #[serde(default)]
    pub channels: BTreeMap<String, super::channels::ChannelToml>,
}

/// Parses one config file's text; errors name the file, line and key.
pub fn parse_file(path: &Path, text: &str) -> Result<FileConfig, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
        ConfigError::Invalid { path: path.to_path_buf(), line, column, message: e.message().to_owned() }
    })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

pub(super) fn read_file(path: &Path) -> Result<Option<FileConfig>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_file(path, &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::Read { path: path.to_path_buf(), reason: e.to_string() }),
    }
}
