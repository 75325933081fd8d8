//! The effective configuration and how it is loaded: the user's file, the project's `.mcp.json`
//! and file, the environment and the flags, in that order.

use super::endpoints::EndpointConfig;
use super::file::read_file;
use super::sections::{Notify, SubagentLimits};
use super::types::{ConfigError, EnvLookup, Source, Sourced};
use crate::permissions::{Mode, RuleSet};
use octo_agent::ReasoningEffort;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Values given on the command line; `None` leaves the lower layers in charge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--endpoint` (with or without `:model`).
    pub endpoint: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--permission-mode`.
    pub permission_mode: Option<String>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--reasoning-effort`.
    pub reasoning_effort: Option<String>,
    /// `--max-tokens`.
    pub max_tokens: Option<u32>,
    /// `--max-budget-usd`, as written (checked when applied).
    pub max_budget_usd: Option<String>,
    /// `--sandbox`.
    pub sandbox: Option<String>,
    /// `--allowedTools`: Claude Code's entries (`Bash(git:*)`, `Read`), allowed without asking.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools`: Claude Code's entries, denied.
    pub disallowed_tools: Vec<String>,
    /// `--plugin-dir`: Claude Code plugin folders used for this run.
    pub plugin_dirs: Vec<PathBuf>,
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// octo's home (`~/.octo`, or `OCTO_HOME`).
    pub home: PathBuf,
    /// The workspace the config was loaded for.
    pub workspace: PathBuf,
    /// `endpoint:model` to use, when one is chosen anywhere.
    pub default: Option<Sourced<String>>,
    /// Permission mode.
    pub permission_mode: Sourced<Mode>,
    /// Model requests per turn.
    pub max_turns: Sourced<u32>,
    /// Reasoning effort.
    pub reasoning_effort: Sourced<ReasoningEffort>,
    /// Output cap per request.
    pub max_tokens: Option<Sourced<u32>>,
    /// Spending limit per session in USD (`max_cost`, `--max-budget-usd`).
    pub max_cost: Option<Sourced<f64>>,
    /// Compaction threshold (fraction of the context window).
    pub compact_threshold: Sourced<f64>,
    /// Model for summaries.
    pub lite_model: Option<Sourced<String>>,
    /// How a long turn's end is announced.
    pub notify: Notify,
    /// Lines of a command's output the REPL shows under it.
    pub tool_output_lines: usize,
    /// Endpoints by id (user's, then the project's added or replacing).
    pub endpoints: BTreeMap<String, Sourced<EndpointConfig>>,
    /// Permission rules, user's and project's.
    pub rules: RuleSet,
    /// The environment of the commands the model runs.
    pub shell_env: octo_tools::shell::env::ShellEnv,
    /// MCP servers: the user's, the project's `.mcp.json`, the project's config (later entries of
    /// one name replace earlier ones).
    pub mcp_servers: Vec<octo_mcp::ServerConfig>,
    /// How long the first request waits for MCP servers to start.
    pub mcp_startup_wait: std::time::Duration,
    /// Sub-agent limits (a project may lower them, not raise them).
    pub subagents: SubagentLimits,
    /// Hooks from the config files (`settings.json` hooks are added by the session).
    pub hooks: octo_hooks::HookSet,
    /// Whether every event is logged.
    pub log_events: bool,
    /// Whether hooks see calls in octo's own names rather than Claude Code's (`hook_format`).
    pub hooks_native: bool,
    /// The OS sandbox's settings.
    pub sandbox: super::sandbox::SandboxSettings,
    /// How turns are checkpointed for `/rewind`.
    pub checkpoints: super::sections::CheckpointSettings,
    /// The language servers.
    pub lsp: super::lsp::LspSettings,
    /// Whether the `repo_map` tool is offered (`repo_map`).
    pub repo_map: bool,
    /// The REPL's status line (`None`: not configured; octo's own is shown).
    pub status_line: Option<super::status_line::StatusLine>,
    /// Where `--worktree` makes worktrees (`None`: `<repo>.worktrees` beside the repository).
    pub worktree_dir: Option<PathBuf>,
    /// The chat-app bridges to start with `octo serve`.
    pub channels: Vec<super::channels::ChannelSpec>,
    /// Folders outside the workspace whose files are read without asking (Claude Code's
    /// `permissions.additionalDirectories`, from the user's settings).
    pub additional_dirs: Vec<PathBuf>,
    /// A project's Claude Code allow rules and `defaultMode` waiting for the user's trust.
    pub project_allow: Option<super::project_allow::ProjectAllow>,
    /// The Claude Code settings file whose `permissions.disableBypassPermissionsMode` is
    /// `"disable"`: auto mode (Claude Code's bypassPermissions) is then off, whatever asks for it.
    pub bypass_disabled_by: Option<String>,
    /// The Claude Code plugins in use (their commands, agents, skills, hooks and servers).
    pub plugins: Vec<crate::claude_plugins::InstalledPlugin>,
    /// The plugin folders that could not be used (each also named in `warnings`).
    pub plugin_errors: Vec<crate::plugins::Problem>,
    /// Notes for the user (ignored or suspicious settings).
    pub warnings: Vec<String>,
    /// The files that were read.
    pub files: Vec<PathBuf>,
}

impl Config {
    /// Loads the configuration for `workspace` from `home`, the project, `env` and `overrides`.
    pub fn load(
        home: &Path,
        workspace: &Path,
        env: EnvLookup<'_>,
        overrides: &Overrides,
    ) -> Result<Self, ConfigError> {
        let user_path = crate::home::Home::new(home).config_file();
        let project_path = workspace.join(crate::protected::OCTO_DIR).join("config.toml");
        let user = read_file(&user_path)?;
        let project = if project_path == user_path { None } else { read_file(&project_path)? };
        let mut cfg = Config {
            home: home.to_path_buf(),
            workspace: workspace.to_path_buf(),
            default: None,
            permission_mode: Sourced::new(Mode::Default, Source::Default),
            max_turns: Sourced::new(octo_agent::DEFAULT_MAX_TURNS, Source::Default),
            reasoning_effort: Sourced::new(ReasoningEffort::Off, Source::Default),
            max_tokens: None,
            max_cost: None,
            compact_threshold: Sourced::new(0.75, Source::Default),
            lite_model: None,
            notify: Notify::default(),
            tool_output_lines: 4,
            endpoints: BTreeMap::new(),
            rules: RuleSet::default(),
            shell_env: octo_tools::shell::env::ShellEnv::default(),
            mcp_servers: Vec::new(),
            mcp_startup_wait: std::time::Duration::from_secs(5),
            subagents: SubagentLimits::default(),
            hooks: octo_hooks::HookSet::default(),
            log_events: false,
            hooks_native: false,
            sandbox: super::sandbox::SandboxSettings::default(),
            lsp: super::lsp::LspSettings::default(),
            repo_map: true,
            status_line: None,
            worktree_dir: None,
            checkpoints: super::sections::CheckpointSettings::default(),
            channels: Vec::new(),
            plugins: Vec::new(),
            plugin_errors: Vec::new(),
            additional_dirs: Vec::new(),
            project_allow: None,
            bypass_disabled_by: None,
            warnings: Vec::new(),
            files: Vec::new(),
        };
        let layers = [
            user.map(|f| (f, Source::User(user_path.clone()))),
            project.map(|f| (f, Source::Project(project_path.clone()))),
        ];
        for (file, source) in layers.into_iter().flatten() {
            // A project's `.mcp.json` (Claude Code's) sits between the user's and the project's
            // octo config.
            if matches!(source, Source::Project(_)) {
                cfg.read_mcp_json(workspace);
            }
            cfg.apply_file(file, &source)?;
            if let Source::User(p) | Source::Project(p) = &source {
                cfg.files.push(p.clone());
            }
        }
        if !cfg.files.contains(&project_path) {
            cfg.read_mcp_json(workspace);
        }
        cfg.read_plugins(env, &overrides.plugin_dirs);
        cfg.read_claude_settings(workspace, env);
        cfg.apply_env(env)?;
        cfg.apply_overrides(overrides)?;
        if let (Mode::Auto, Some(file)) = (cfg.permission_mode.value, &cfg.bypass_disabled_by) {
            cfg.warnings.push(format!(
                "{file} sets `disableBypassPermissionsMode`: auto mode (bypassPermissions) is off, so this session runs in the default mode"
            ));
            cfg.permission_mode = Sourced::new(Mode::Default, Source::User(PathBuf::from(file)));
        }
        Ok(cfg)
    }
}
