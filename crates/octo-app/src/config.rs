//! Configuration: `~/.octo/config.toml`, the project's `.octo/config.toml`, environment
//! variables and flags, merged with precedence flag > env > project > user > built-in default,
//! each value remembering where it came from.

use crate::permissions::{Mode, RuleSet};
use octo_agent::ReasoningEffort;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A configuration problem, naming the file, line and key.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file is not valid TOML, has an unknown key or a value of the wrong type.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong (names the key).
        message: String,
    },
    /// A value is out of range or malformed (from a file, the environment or a flag).
    #[error("{source_desc}: {message}")]
    Value {
        /// Where the value came from.
        source_desc: String,
        /// What is wrong and what is accepted.
        message: String,
    },
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// octo's built-in default.
    Default,
    /// The user's config file.
    User(PathBuf),
    /// The project's config file.
    Project(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::User(p) => write!(f, "user config {}", p.display()),
            Self::Project(p) => write!(f, "project config {}", p.display()),
            Self::Env(v) => write!(f, "env {v}"),
            Self::Flag => f.write_str("flag"),
        }
    }
}

/// Which wire protocol an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    Openai,
    /// A GGUF model run inside octo (llama.cpp).
    Local,
}

impl Protocol {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::Local => "local",
        }
    }
}

/// One `[endpoints.<id>]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// Wire protocol; defaults from the preset or the id (`anthropic` → Anthropic, else OpenAI).
    pub protocol: Option<Protocol>,
    /// An OpenAI-compatible preset to start from (`deepseek`, `ollama`, ...).
    pub preset: Option<String>,
    /// Base URL.
    pub base_url: Option<String>,
    /// Environment variable holding the key (default: the preset's, e.g. `DEEPSEEK_API_KEY`).
    pub api_key_env: Option<String>,
    /// Extra HTTP headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Models offered by this endpoint (the first is its default).
    #[serde(default)]
    pub models: Vec<String>,
    /// Context window per model, overriding the catalog.
    #[serde(default)]
    pub context_windows: BTreeMap<String, u64>,
    /// Window, output cap and prices per model, overriding the catalog.
    #[serde(default)]
    pub model_info: BTreeMap<String, ModelOverride>,
    /// Output cap per request.
    pub max_tokens: Option<u32>,
    /// Seconds allowed to open a connection (fractions allowed; default 15).
    pub connect_timeout: Option<f64>,
    /// Seconds a stream may stay silent before it counts as stalled (default 120).
    pub stall_timeout: Option<f64>,
    /// Seconds to wait for the response headers (default 600; a streamed request also waits at
    /// most the stall timeout, since a streaming server answers at once).
    pub request_timeout: Option<f64>,
    /// A local model's GGUF file or name (`protocol = "local"`; default: `--model`, then the
    /// first pulled model).
    pub file: Option<String>,
    /// A local model's context size in tokens (default 8192, at most the model's own).
    pub context_size: Option<u32>,
    /// A local model's CPU threads (default: the physical cores).
    pub threads: Option<usize>,
    /// A local model's sampling temperature (default 0.2; 0 is greedy).
    pub temperature: Option<f32>,
}

/// The timeouts of an endpoint, checked: positive, finite seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timeouts {
    /// Opening a connection.
    pub connect: Option<std::time::Duration>,
    /// Silence in a stream.
    pub stall: Option<std::time::Duration>,
    /// Waiting for the response headers.
    pub request: Option<std::time::Duration>,
}

impl EndpointConfig {
    /// The configured timeouts; an invalid one names its key.
    pub fn timeouts(&self, id: &str) -> Result<Timeouts, String> {
        let check = |key: &str, v: Option<f64>| -> Result<Option<std::time::Duration>, String> {
            match v {
                None => Ok(None),
                Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Some(std::time::Duration::from_secs_f64(s))),
                Some(s) => Err(format!(
                    "[endpoints.{id}] {key} = {s}: give a number of seconds above 0 (fractions allowed), at most a day"
                )),
            }
        };
        Ok(Timeouts {
            connect: check("connect_timeout", self.connect_timeout)?,
            stall: check("stall_timeout", self.stall_timeout)?,
            request: check("request_timeout", self.request_timeout)?,
        })
    }
}

/// One `[endpoints.<id>.model_info.<model>]` table: what octo should assume about a model the
/// catalog does not know, or knows differently (a fine-tune, a proxy with other prices).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelOverride {
    /// Tokens the prompt and output may occupy together.
    pub context_window: Option<u64>,
    /// Most output tokens per response.
    pub max_output: Option<u32>,
    /// USD per million uncached input tokens.
    pub input_price: Option<f64>,
    /// USD per million output tokens.
    pub output_price: Option<f64>,
    /// USD per million input tokens read from cache (default: the catalog's, else the input price).
    pub cache_read_price: Option<f64>,
    /// USD per million input tokens written to cache (default: the catalog's, else the input price).
    pub cache_write_price: Option<f64>,
}

impl ModelOverride {
    /// `info` with these fields applied. A price given for a model without one starts from zero
    /// for the other parts, with cache prices defaulting to the input price.
    pub fn apply(&self, mut info: octo_provider::ModelInfo) -> octo_provider::ModelInfo {
        if let Some(w) = self.context_window {
            info.context_window = w;
        }
        if let Some(m) = self.max_output {
            info.max_output = m;
        }
        let any_price = self.input_price.is_some()
            || self.output_price.is_some()
            || self.cache_read_price.is_some()
            || self.cache_write_price.is_some();
        if any_price {
            let had = info.price;
            let mut p = had.unwrap_or(octo_provider::Price {
                input: 0.0,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
            });
            if let Some(v) = self.input_price {
                p.input = v;
            }
            if let Some(v) = self.output_price {
                p.output = v;
            }
            p.cache_read =
                self.cache_read_price.unwrap_or(if had.is_some() { p.cache_read } else { p.input });
            p.cache_write =
                self.cache_write_price.unwrap_or(if had.is_some() { p.cache_write } else { p.input });
            info.price = Some(p);
        }
        info
    }
}

/// How the REPL announces the end of a long turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyMethod {
    /// A desktop notification (OSC 9) where the terminal is known to show one, else the bell.
    Auto,
    /// The terminal bell.
    Bell,
    /// OSC 9 (iTerm2, WezTerm, Ghostty, Windows Terminal).
    Osc9,
    /// Nothing.
    Off,
}

impl std::str::FromStr for NotifyMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "bell" => Ok(Self::Bell),
            "osc9" => Ok(Self::Osc9),
            "off" | "none" => Ok(Self::Off),
            other => Err(format!("notify must be auto, bell, osc9 or off, not `{other}`")),
        }
    }
}

/// `notify` and `notify_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notify {
    /// How.
    pub method: NotifyMethod,
    /// After how long a turn.
    pub after: std::time::Duration,
}

impl Default for Notify {
    fn default() -> Self {
        Self { method: NotifyMethod::Auto, after: std::time::Duration::from_secs(30) }
    }
}

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
}

/// The limits sub-agents run under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentLimits {
    /// How deep sub-agents may nest (default 1).
    pub max_depth: u32,
    /// How many may run at once (default 4).
    pub max_running: u32,
    /// Model requests per sub-agent (default 30).
    pub max_turns: u32,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        Self { max_depth: 1, max_running: 4, max_turns: 30 }
    }
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
    /// Compact when the context is this full (0.75 = 75 %); negative turns automatic compaction
    /// off.
    pub compact_threshold: Option<f64>,
    /// `endpoint:model` used for summaries (a cheaper model); default: the main one.
    pub lite_model: Option<String>,
    /// How the REPL says a long turn is over: `auto`, `bell`, `osc9` or `off`.
    pub notify: Option<String>,
    /// Seconds a turn must take before it is announced (default 30).
    pub notify_after: Option<f64>,
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
    /// Chat-app bridges `octo serve` starts (user config only).
    #[serde(default)]
    pub channels: BTreeMap<String, crate::channels::ChannelToml>,
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

fn read_file(path: &Path) -> Result<Option<FileConfig>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_file(path, &text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::Read { path: path.to_path_buf(), reason: e.to_string() }),
    }
}

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
    /// `--sandbox`.
    pub sandbox: Option<String>,
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its origin.
    pub source: Source,
}

impl<T> Sourced<T> {
    pub(crate) fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
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
    /// Compaction threshold (fraction of the context window).
    pub compact_threshold: Sourced<f64>,
    /// Model for summaries.
    pub lite_model: Option<Sourced<String>>,
    /// How a long turn's end is announced.
    pub notify: Notify,
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
    /// The OS sandbox's settings.
    pub sandbox: crate::sandbox::SandboxSettings,
    /// The chat-app bridges to start with `octo serve`.
    pub channels: Vec<crate::channels::ChannelSpec>,
    /// Notes for the user (ignored or suspicious settings).
    pub warnings: Vec<String>,
    /// The files that were read.
    pub files: Vec<PathBuf>,
}

/// `OCTO_HOME`, else `~/.octo`.
pub fn octo_home() -> PathBuf {
    if let Some(h) = std::env::var_os("OCTO_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
    home.unwrap_or_else(|| PathBuf::from(".")).join(".octo")
}

/// Reads environment variables through a function, so tests need not touch the process env.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
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
        let project_path = workspace.join(".octo").join("config.toml");
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
            compact_threshold: Sourced::new(0.75, Source::Default),
            lite_model: None,
            notify: Notify::default(),
            endpoints: BTreeMap::new(),
            rules: RuleSet::default(),
            shell_env: octo_tools::shell::env::ShellEnv::default(),
            mcp_servers: Vec::new(),
            mcp_startup_wait: std::time::Duration::from_secs(5),
            subagents: SubagentLimits::default(),
            hooks: octo_hooks::HookSet::default(),
            log_events: false,
            sandbox: crate::sandbox::SandboxSettings::default(),
            channels: Vec::new(),
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
        cfg.apply_env(env)?;
        cfg.apply_overrides(overrides)?;
        Ok(cfg)
    }

    fn apply_file(&mut self, f: FileConfig, source: &Source) -> Result<(), ConfigError> {
        let desc = source.to_string();
        let is_project = matches!(source, Source::Project(_));
        if let Some(d) = f.default {
            self.default = Some(Sourced::new(d, source.clone()));
        }
        if let Some(m) = f.permission_mode {
            let mode = parse_mode(&m, &desc)?;
            if is_project && mode == Mode::Auto {
                // A repository must not be able to turn off the user's approvals.
                self.warnings.push(format!("{desc}: `permission_mode = \"auto\"` is ignored in a project config; use --permission-mode auto or your user config"));
            } else {
                self.permission_mode = Sourced::new(mode, source.clone());
            }
        }
        if let Some(t) = f.max_turns {
            self.max_turns = Sourced::new(check_turns(t, &desc)?, source.clone());
        }
        if let Some(e) = f.reasoning_effort {
            self.reasoning_effort = Sourced::new(parse_effort(&e, &desc)?, source.clone());
        }
        if let Some(t) = f.max_tokens {
            self.max_tokens = Some(Sourced::new(t, source.clone()));
        }
        if let Some(t) = f.compact_threshold {
            if t >= 1.0 || t.is_nan() {
                return Err(ConfigError::Value {
                    source_desc: desc,
                    message: format!("compact_threshold must be below 1 (a share of the window; negative turns it off), not {t}"),
                });
            }
            self.compact_threshold = Sourced::new(t, source.clone());
        }
        if let Some(m) = f.lite_model {
            self.lite_model = Some(Sourced::new(m, source.clone()));
        }
        if let Some(n) = f.notify {
            self.notify.method =
                n.parse().map_err(|message| ConfigError::Value { source_desc: desc.clone(), message })?;
        }
        if let Some(s) = f.notify_after {
            if !(s.is_finite() && s >= 0.0) {
                return Err(ConfigError::Value {
                    source_desc: desc,
                    message: format!("notify_after must be a number of seconds, 0 or more, not {s}"),
                });
            }
            self.notify.after = std::time::Duration::from_secs_f64(s);
        }
        // A cloned repository is not trusted with the user's keys or approvals: it may tighten
        // (ask, deny) but not define endpoints (which receive an API key) or allow rules.
        if is_project && !f.endpoints.is_empty() {
            self.warnings.push(format!(
                "{desc}: [endpoints] are ignored in a project config (an endpoint receives your API key); define them in your user config"
            ));
        } else {
            for (id, ep) in f.endpoints {
                ep.timeouts(&id)
                    .map_err(|message| ConfigError::Value { source_desc: desc.clone(), message })?;
                self.endpoints.insert(id, Sourced::new(ep, source.clone()));
            }
        }
        self.apply_shell_env(f.shell_env, is_project, &desc)?;
        let origin = if is_project { octo_mcp::Origin::ProjectConfig } else { octo_mcp::Origin::User };
        for (name, spec) in f.mcp_servers {
            self.mcp_servers.push(octo_mcp::ServerConfig { name, spec, origin });
        }
        if let Some(w) = f.mcp_startup_wait {
            if !(w.is_finite() && w >= 0.0) {
                return Err(ConfigError::Value {
                    source_desc: desc,
                    message: format!("mcp_startup_wait must be a number of seconds, 0 or more, not {w}"),
                });
            }
            self.mcp_startup_wait = std::time::Duration::from_secs_f64(w.min(600.0));
        }
        self.apply_subagents(&f.subagents, is_project, &desc)?;
        self.apply_hooks(&f.hooks, is_project, &desc);
        if let Some(l) = f.log_events {
            self.log_events = l;
        }
        let keys = crate::sandbox::SandboxKeys {
            mode: f.sandbox,
            network: f.sandbox_network,
            writable_roots: f.sandbox_writable_roots,
            git_writable: f.sandbox_git_writable,
            hooks: f.sandbox_hooks,
        };
        self.sandbox.apply_file(keys, source, &mut self.warnings)?;
        let channels = crate::channels::parse(&f.channels, source, &mut self.warnings)?;
        self.channels.extend(channels);
        let rules = &f.permissions;
        let allow: &[String] = if is_project && !rules.allow.is_empty() {
            self.warnings.push(format!(
                "{desc}: `allow` rules are ignored in a project config; put them in your user config (ask and deny rules apply)"
            ));
            &[]
        } else {
            &rules.allow
        };
        self.rules
            .add(allow, &rules.ask, &rules.deny, &desc)
            .map_err(|e| ConfigError::Value { source_desc: desc.clone(), message: e.to_string() })?;
        Ok(())
    }

    /// A project may only hide more variables; what commands inherit, keep or are given is the
    /// user's choice.
    /// `[[hooks.<Event>]]`: an unknown event, a table without a command or a matcher that is not
    /// a regular expression is a warning naming it, and that hook is skipped.
    fn apply_hooks(&mut self, hooks: &BTreeMap<String, Vec<HookToml>>, is_project: bool, desc: &str) {
        for (name, tables) in hooks {
            let Some(event) = octo_hooks::Event::parse(name) else {
                self.warnings
                    .push(format!("{desc}: [[hooks.{name}]]: `{name}` is not a hook event; skipped"));
                continue;
            };
            for t in tables {
                let secs = |t: Option<f64>| {
                    t.filter(|t| t.is_finite() && *t > 0.0).map_or(octo_hooks::config::DEFAULT_TIMEOUT, |t| {
                        std::time::Duration::from_secs_f64(t.min(3600.0))
                    })
                };
                let mut cmds: Vec<octo_hooks::Hook> = t
                    .hooks
                    .iter()
                    .filter(|h| {
                        h.kind.as_deref().is_none_or(|k| k == "command") && !h.command.trim().is_empty()
                    })
                    .map(|h| octo_hooks::Hook { command: h.command.clone(), timeout: secs(h.timeout) })
                    .collect();
                if let Some(c) = t.command.as_deref().filter(|c| !c.trim().is_empty()) {
                    cmds.push(octo_hooks::Hook { command: c.to_owned(), timeout: secs(t.timeout) });
                }
                if cmds.is_empty() {
                    self.warnings.push(format!("{desc}: a [[hooks.{name}]] table has no command; skipped"));
                    continue;
                }
                match octo_hooks::Matcher::new(t.matcher.as_deref().unwrap_or(""), cmds, desc, is_project) {
                    Ok(m) => self.hooks.add(event, m),
                    Err(e) => {
                        self.warnings.push(format!("{desc}: [[hooks.{name}]]: {e}; that hook is skipped"));
                    }
                }
            }
        }
    }

    /// `[subagents]`: each limit at least 1; a project's may only lower the user's.
    fn apply_subagents(
        &mut self,
        c: &SubagentsConfig,
        is_project: bool,
        desc: &str,
    ) -> Result<(), ConfigError> {
        let fields = [
            ("max_depth", c.max_depth, &mut self.subagents.max_depth),
            ("max_running", c.max_running, &mut self.subagents.max_running),
            ("max_turns", c.max_turns, &mut self.subagents.max_turns),
        ];
        for (key, value, slot) in fields {
            let Some(v) = value else { continue };
            if v == 0 {
                return Err(ConfigError::Value {
                    source_desc: desc.to_owned(),
                    message: format!("[subagents] {key} must be at least 1"),
                });
            }
            if is_project && v > *slot {
                self.warnings.push(format!(
                    "{desc}: [subagents] {key} = {v} is ignored: a project may lower sub-agent limits, not raise them (raise it in your user config)"
                ));
                continue;
            }
            *slot = v;
        }
        Ok(())
    }

    fn apply_shell_env(
        &mut self,
        e: ShellEnvConfig,
        is_project: bool,
        desc: &str,
    ) -> Result<(), ConfigError> {
        self.shell_env.exclude.extend(e.exclude);
        if is_project {
            if e.inherit.is_some() || !e.include.is_empty() || !e.set.is_empty() {
                self.warnings.push(format!(
                    "{desc}: [shell_env] inherit, include and set are ignored in a project config (a repository may only hide more variables with `exclude`); put them in your user config"
                ));
            }
            return Ok(());
        }
        if let Some(i) = e.inherit {
            self.shell_env.inherit = i.parse().map_err(|m: String| ConfigError::Value {
                source_desc: desc.to_owned(),
                message: format!("[shell_env] inherit: {m}"),
            })?;
        }
        self.shell_env.include.extend(e.include);
        self.shell_env.set.extend(e.set);
        Ok(())
    }

    /// Adds the servers of the project's `.mcp.json`; problems become warnings (the other
    /// servers still load).
    fn read_mcp_json(&mut self, workspace: &Path) {
        let path = workspace.join(".mcp.json");
        if self.files.contains(&path) {
            return;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { return };
        let parsed = octo_mcp::parse_mcp_json(&path, &text);
        self.warnings.extend(parsed.errors);
        for (name, spec) in parsed.servers {
            self.mcp_servers.push(octo_mcp::ServerConfig {
                name,
                spec,
                origin: octo_mcp::Origin::ProjectJson,
            });
        }
        self.files.push(path);
    }

    fn apply_env(&mut self, env: EnvLookup<'_>) -> Result<(), ConfigError> {
        if let Some(v) = env("OCTO_MODEL") {
            self.default = Some(Sourced::new(v, Source::Env("OCTO_MODEL".into())));
        }
        if let Some(v) = env("OCTO_PERMISSION_MODE") {
            self.permission_mode = Sourced::new(
                parse_mode(&v, "env OCTO_PERMISSION_MODE")?,
                Source::Env("OCTO_PERMISSION_MODE".into()),
            );
        }
        if let Some(v) = env("OCTO_MAX_TURNS") {
            let n = v.parse::<u32>().map_err(|_| ConfigError::Value {
                source_desc: "env OCTO_MAX_TURNS".into(),
                message: format!("`{v}` is not a whole number"),
            })?;
            self.max_turns =
                Sourced::new(check_turns(n, "env OCTO_MAX_TURNS")?, Source::Env("OCTO_MAX_TURNS".into()));
        }
        if let Some(v) = env("OCTO_SANDBOX") {
            self.sandbox.set_mode(&v, Source::Env("OCTO_SANDBOX".into()))?;
        }
        if let Some(v) = env("OCTO_REASONING_EFFORT") {
            self.reasoning_effort = Sourced::new(
                parse_effort(&v, "env OCTO_REASONING_EFFORT")?,
                Source::Env("OCTO_REASONING_EFFORT".into()),
            );
        }
        Ok(())
    }

    fn apply_overrides(&mut self, o: &Overrides) -> Result<(), ConfigError> {
        match (&o.endpoint, &o.model) {
            (Some(e), Some(m)) => {
                self.default =
                    Some(Sourced::new(format!("{}:{m}", e.split(':').next().unwrap_or(e)), Source::Flag));
            }
            (Some(e), None) => self.default = Some(Sourced::new(e.clone(), Source::Flag)),
            (None, Some(m)) if m.contains(':') => self.default = Some(Sourced::new(m.clone(), Source::Flag)),
            (None, Some(m)) => {
                let endpoint =
                    self.default.as_ref().map(|d| d.value.split(':').next().unwrap_or("").to_owned());
                let value = match endpoint.filter(|e| !e.is_empty()) {
                    Some(e) => format!("{e}:{m}"),
                    None => m.clone(),
                };
                self.default = Some(Sourced::new(value, Source::Flag));
            }
            (None, None) => {}
        }
        if let Some(m) = &o.sandbox {
            self.sandbox.set_mode(m, Source::Flag)?;
        }
        if let Some(m) = &o.permission_mode {
            self.permission_mode = Sourced::new(parse_mode(m, "--permission-mode")?, Source::Flag);
        }
        if let Some(t) = o.max_turns {
            self.max_turns = Sourced::new(check_turns(t, "--max-turns")?, Source::Flag);
        }
        if let Some(e) = &o.reasoning_effort {
            self.reasoning_effort = Sourced::new(parse_effort(e, "--reasoning-effort")?, Source::Flag);
        }
        if let Some(t) = o.max_tokens {
            self.max_tokens = Some(Sourced::new(t, Source::Flag));
        }
        Ok(())
    }

    /// The effective settings with their sources, for `octo config show`. Secrets never appear:
    /// keys are named by where they come from, and header values are masked.
    pub fn show(&self) -> String {
        let mut out = String::new();
        let line =
            |out: &mut String, k: &str, v: &str, s: &Source| out.push_str(&format!("{k} = {v}    # {s}\n"));
        match &self.default {
            Some(d) => line(&mut out, "default", &format!("\"{}\"", d.value), &d.source),
            None => out.push_str(
                "default = (none: set one with --endpoint, OCTO_MODEL or `default` in config.toml)\n",
            ),
        }
        line(
            &mut out,
            "permission_mode",
            &format!("\"{}\"", self.permission_mode.value),
            &self.permission_mode.source,
        );
        line(&mut out, "max_turns", &self.max_turns.value.to_string(), &self.max_turns.source);
        line(
            &mut out,
            "reasoning_effort",
            &format!("\"{}\"", self.reasoning_effort.value),
            &self.reasoning_effort.source,
        );
        if let Some(t) = &self.max_tokens {
            line(&mut out, "max_tokens", &t.value.to_string(), &t.source);
        }
        line(
            &mut out,
            "compact_threshold",
            &self.compact_threshold.value.to_string(),
            &self.compact_threshold.source,
        );
        if let Some(m) = &self.lite_model {
            line(&mut out, "lite_model", &format!("\"{}\"", m.value), &m.source);
        }
        for (id, ep) in &self.endpoints {
            out.push_str(&format!("\n[endpoints.{id}]    # {}\n", ep.source));
            let e = &ep.value;
            if let Some(p) = e.protocol {
                out.push_str(&format!("protocol = \"{}\"\n", p.as_str()));
            }
            if let Some(p) = &e.preset {
                out.push_str(&format!("preset = \"{p}\"\n"));
            }
            if let Some(u) = &e.base_url {
                out.push_str(&format!("base_url = \"{u}\"\n"));
            }
            if let Some(k) = &e.api_key_env {
                out.push_str(&format!("api_key_env = \"{k}\"\n"));
            }
            for k in e.headers.keys() {
                out.push_str(&format!("headers.{k} = \"****\"\n"));
            }
            if !e.models.is_empty() {
                out.push_str(&format!("models = {:?}\n", e.models));
            }
            let d = octo_provider::HttpConfig::default();
            let t = e.timeouts(id).unwrap_or_default();
            for (key, set, default) in [
                ("connect_timeout", t.connect, d.connect_timeout),
                ("stall_timeout", t.stall, d.stall_timeout),
                ("request_timeout", t.request, d.request_timeout),
            ] {
                let (value, note) = match set {
                    Some(v) => (v, ""),
                    None => (default, "    # default"),
                };
                out.push_str(&format!("{key} = {}{note}\n", octo_provider::secs(value)));
            }
        }
        let env = &self.shell_env;
        if env != &octo_tools::shell::env::ShellEnv::default() {
            out.push_str("\n[shell_env]\n");
            out.push_str(&format!("inherit = \"{}\"\n", env.inherit));
            for (k, v) in [("exclude", &env.exclude), ("include", &env.include)] {
                if !v.is_empty() {
                    out.push_str(&format!("{k} = {v:?}\n"));
                }
            }
            // Values may be secrets: only the names are shown.
            for k in env.set.keys() {
                out.push_str(&format!("set.{k} = \"****\"\n"));
            }
        }
        for m in &self.mcp_servers {
            let from = match m.origin {
                octo_mcp::Origin::User => "user config",
                octo_mcp::Origin::ProjectJson => "project .mcp.json",
                octo_mcp::Origin::ProjectConfig => "project config",
            };
            out.push_str(&format!("\n[mcp_servers.{}]    # {from}\n", m.name));
            let spec = &m.spec;
            if let Some(c) = &spec.command {
                out.push_str(&format!("command = {c:?}\n"));
            }
            if !spec.args.is_empty() {
                out.push_str(&format!("args = {:?}\n", spec.args));
            }
            if let Some(u) = &spec.url {
                out.push_str(&format!("url = {u:?}\n"));
            }
            // Values may be secrets: only the names are shown.
            for k in spec.env.keys() {
                out.push_str(&format!("env.{k} = \"****\"\n"));
            }
            for k in spec.headers.keys() {
                out.push_str(&format!("headers.{k} = \"****\"\n"));
            }
            if !spec.enabled() {
                out.push_str("enabled = false\n");
            }
        }
        let rules = self.rules.describe();
        if !rules.is_empty() {
            out.push_str("\n[permissions]\n");
            out.push_str(&rules);
        }
        out
    }
}

fn parse_mode(v: &str, desc: &str) -> Result<Mode, ConfigError> {
    v.parse().map_err(|e: crate::permissions::UnknownMode| ConfigError::Value {
        source_desc: desc.into(),
        message: e.to_string(),
    })
}

fn parse_effort(v: &str, desc: &str) -> Result<ReasoningEffort, ConfigError> {
    v.parse().map_err(|e: octo_agent::UnknownEffort| ConfigError::Value {
        source_desc: desc.into(),
        message: e.to_string(),
    })
}

fn check_turns(t: u32, desc: &str) -> Result<u32, ConfigError> {
    if t == 0 {
        return Err(ConfigError::Value {
            source_desc: desc.into(),
            message: "max_turns must be at least 1".into(),
        });
    }
    Ok(t)
}
