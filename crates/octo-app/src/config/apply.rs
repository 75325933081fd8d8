//! Applying one layer of configuration: a file (one step per section), the environment, the
//! flags. A project's file may tighten what the user set, never loosen it.

use super::file::{FileConfig, HookToml, ShellEnvConfig, SubagentsConfig};
use super::load::{Config, Overrides};
use super::types::{ConfigError, EnvLookup, Source, Sourced};
use crate::permissions::Mode;
use octo_agent::ReasoningEffort;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layer being applied: whose file, named for messages.
struct Layer<'a> {
    source: &'a Source,
    desc: String,
    is_project: bool,
}

impl Layer<'_> {
    /// A bad value in this layer.
    fn value(&self, message: String) -> ConfigError {
        ConfigError::Value { source_desc: self.desc.clone(), message }
    }
}

/// The top-level keys that shape a turn.
struct TurnKeys {
    default: Option<String>,
    permission_mode: Option<String>,
    max_turns: Option<u32>,
    reasoning_effort: Option<String>,
    max_tokens: Option<u32>,
    max_cost: Option<f64>,
    compact_threshold: Option<f64>,
    lite_model: Option<String>,
}

impl Config {
    /// Applies one file, a section at a time; `source` says whose file it is.
    pub(super) fn apply_file(&mut self, f: FileConfig, source: &Source) -> Result<(), ConfigError> {
        let layer =
            Layer { source, desc: source.to_string(), is_project: matches!(source, Source::Project(_)) };
        let FileConfig {
            default,
            permission_mode,
            max_turns,
            reasoning_effort,
            max_tokens,
            max_cost,
            compact_threshold,
            lite_model,
            notify,
            notify_after,
            tool_output_lines,
            endpoints,
            permissions,
            shell_env,
            mcp_servers,
            mcp_startup_wait,
            subagents,
            hooks,
            log_events,
            hook_format,
            sandbox,
            sandbox_network,
            sandbox_writable_roots,
            sandbox_git_writable,
            sandbox_hooks,
            sandbox_deny_read,
            checkpoints,
            checkpoint_keep_days,
            checkpoint_max_mb,
            lsp,
            lsp_diagnostics,
            lsp_wait_ms,
            repo_map,
            status_line,
            worktree_dir,
            channels,
        } = f;
        let turn = TurnKeys {
            default,
            permission_mode,
            max_turns,
            reasoning_effort,
            max_tokens,
            max_cost,
            compact_threshold,
            lite_model,
        };
        self.apply_turn(turn, &layer)?;
        self.apply_notify(notify, notify_after, &layer)?;
        if let Some(n) = tool_output_lines {
            self.tool_output_lines = n.min(200);
        }
        self.apply_endpoints(endpoints, &layer)?;
        self.apply_shell_env(shell_env, layer.is_project, &layer.desc)?;
        self.apply_mcp(mcp_servers, mcp_startup_wait, &layer)?;
        self.apply_subagents(&subagents, layer.is_project, &layer.desc)?;
        self.apply_hooks(&hooks, layer.is_project, &layer.desc);
        self.log_events = log_events.unwrap_or(self.log_events);
        match hook_format.as_deref() {
            None => {}
            Some("claude") => self.hooks_native = false,
            Some("octo") => self.hooks_native = true,
            Some(other) => self.warnings.push(format!(
                "{}: hook_format = \"{other}\" is neither \"claude\" nor \"octo\"; hooks keep Claude Code's names",
                layer.desc
            )),
        }
        let keys = super::sandbox::SandboxKeys {
            mode: sandbox,
            network: sandbox_network,
            writable_roots: sandbox_writable_roots,
            git_writable: sandbox_git_writable,
            hooks: sandbox_hooks,
            deny_read: sandbox_deny_read,
        };
        self.sandbox.apply_file(keys, source, &mut self.warnings)?;
        self.checkpoints.apply(checkpoints, checkpoint_keep_days, checkpoint_max_mb);
        let mut warnings = std::mem::take(&mut self.warnings);
        let from = (layer.is_project, layer.desc.as_str());
        self.lsp.apply(lsp, lsp_diagnostics.as_deref(), lsp_wait_ms, from, &mut warnings);
        self.repo_map = repo_map.unwrap_or(self.repo_map);
        if let Some(t) = status_line {
            let current = self.status_line.take();
            self.status_line =
                super::status_line::apply(current, t, &layer.desc, layer.is_project, &mut warnings);
        }
        if let Some(dir) = worktree_dir_of(worktree_dir, &layer, &mut warnings) {
            self.worktree_dir = Some(dir);
        }
        self.warnings = warnings;
        let channels = super::channels::parse(&channels, source, &mut self.warnings)?;
        self.channels.extend(channels);
        self.apply_rules(&permissions, &layer)
    }

    /// The top-level keys that shape a turn: the model, the mode, the limits.
    fn apply_turn(&mut self, k: TurnKeys, layer: &Layer<'_>) -> Result<(), ConfigError> {
        let (source, desc) = (layer.source, layer.desc.as_str());
        if let Some(d) = k.default {
            self.default = Some(Sourced::new(d, source.clone()));
        }
        if let Some(m) = k.permission_mode {
            let mode = parse_mode(&m, desc)?;
            if layer.is_project && mode == Mode::Auto {
                // A repository must not be able to turn off the user's approvals.
                self.warnings.push(format!("{desc}: `permission_mode = \"auto\"` is ignored in a project config; use --permission-mode auto or your user config"));
            } else {
                self.permission_mode = Sourced::new(mode, source.clone());
            }
        }
        if let Some(t) = k.max_turns {
            self.max_turns = Sourced::new(check_turns(t, desc)?, source.clone());
        }
        if let Some(e) = k.reasoning_effort {
            self.reasoning_effort = Sourced::new(parse_effort(&e, desc)?, source.clone());
        }
        if let Some(t) = k.max_tokens {
            self.max_tokens = Some(Sourced::new(t, source.clone()));
        }
        if let Some(c) = k.max_cost {
            let c = check_budget(c, &layer.desc)?;
            // A project may lower the user's limit, never raise it.
            if !layer.is_project || self.max_cost.as_ref().is_none_or(|m| c < m.value) {
                self.max_cost = Some(Sourced::new(c, source.clone()));
            }
        }
        if let Some(t) = k.compact_threshold {
            if t >= 1.0 || t.is_nan() {
                return Err(layer.value(format!(
                    "compact_threshold must be below 1 (a share of the window; negative turns it off), not {t}"
                )));
            }
            self.compact_threshold = Sourced::new(t, source.clone());
        }
        if let Some(m) = k.lite_model {
            self.lite_model = Some(Sourced::new(m, source.clone()));
        }
        Ok(())
    }

    /// `notify` and `notify_after`.
    fn apply_notify(
        &mut self,
        notify: Option<String>,
        after: Option<f64>,
        layer: &Layer<'_>,
    ) -> Result<(), ConfigError> {
        if let Some(n) = notify {
            self.notify.method = n.parse().map_err(|message: String| layer.value(message))?;
        }
        if let Some(s) = after {
            if !(s.is_finite() && s >= 0.0) {
                return Err(
                    layer.value(format!("notify_after must be a number of seconds, 0 or more, not {s}"))
                );
            }
            self.notify.after = std::time::Duration::from_secs_f64(s);
        }
        Ok(())
    }

    /// `[endpoints]`. A cloned repository is not trusted with the user's keys: it may not define
    /// endpoints (which receive an API key).
    fn apply_endpoints(
        &mut self,
        endpoints: BTreeMap<String, super::endpoints::EndpointConfig>,
        layer: &Layer<'_>,
    ) -> Result<(), ConfigError> {
        if layer.is_project && !endpoints.is_empty() {
            self.warnings.push(format!(
                "{}: [endpoints] are ignored in a project config (an endpoint receives your API key); define them in your user config",
                layer.desc
            ));
            return Ok(());
        }
        for (id, ep) in endpoints {
            ep.timeouts(&id).map_err(|e| layer.value(e.to_string()))?;
            self.endpoints.insert(id, Sourced::new(ep, layer.source.clone()));
        }
        Ok(())
    }

    /// `[mcp_servers]` and `mcp_startup_wait`.
    fn apply_mcp(
        &mut self,
        servers: BTreeMap<String, octo_mcp::ServerSpec>,
        wait: Option<f64>,
        layer: &Layer<'_>,
    ) -> Result<(), ConfigError> {
        let origin = if layer.is_project { octo_mcp::Origin::ProjectConfig } else { octo_mcp::Origin::User };
        for (name, spec) in servers {
            self.mcp_servers.push(octo_mcp::ServerConfig { name, spec, origin });
        }
        if let Some(w) = wait {
            if !(w.is_finite() && w >= 0.0) {
                return Err(
                    layer.value(format!("mcp_startup_wait must be a number of seconds, 0 or more, not {w}"))
                );
            }
            self.mcp_startup_wait = std::time::Duration::from_secs_f64(w.min(600.0));
        }
        Ok(())
    }

    /// `[permissions]`: a project may tighten (ask, deny) but not allow.
    fn apply_rules(
        &mut self,
        rules: &super::file::PermissionsConfig,
        layer: &Layer<'_>,
    ) -> Result<(), ConfigError> {
        let allow: &[String] = if layer.is_project && !rules.allow.is_empty() {
            self.warnings.push(format!(
                "{}: `allow` rules are ignored in a project config; put them in your user config (ask and deny rules apply)",
                layer.desc
            ));
            &[]
        } else {
            &rules.allow
        };
        self.rules.add(allow, &rules.ask, &rules.deny, &layer.desc).map_err(|e| layer.value(e.to_string()))
    }

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
                let cmds = t.commands();
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

    /// `[shell_env]`: a project may only hide more variables; what commands inherit, keep or are
    /// given is the user's choice.
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
    pub(super) fn read_mcp_json(&mut self, workspace: &Path) {
        let path = workspace.join(crate::protected::MCP_JSON);
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

    pub(super) fn apply_env(&mut self, env: EnvLookup<'_>) -> Result<(), ConfigError> {
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

    pub(super) fn apply_overrides(&mut self, o: &Overrides) -> Result<(), ConfigError> {
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
        if let Some(c) = &o.max_budget_usd {
            let amount = c.trim().trim_start_matches('$').parse::<f64>().map_err(|_| ConfigError::Value {
                source_desc: "--max-budget-usd".into(),
                message: format!("`{c}` is not an amount in US dollars (write it like 2.50)"),
            })?;
            self.max_cost = Some(Sourced::new(check_budget(amount, "--max-budget-usd")?, Source::Flag));
        }
        let (allow, deny) = (
            self.tool_rules(&o.allowed_tools, "--allowedTools"),
            self.tool_rules(&o.disallowed_tools, "--disallowedTools"),
        );
        if !allow.is_empty() || !deny.is_empty() {
            self.rules.add(&allow, &[], &deny, "the command line").map_err(|e| ConfigError::Value {
                source_desc: "--allowedTools/--disallowedTools".into(),
                message: e.to_string(),
            })?;
        }
        Ok(())
    }

    /// Claude Code's tool entries (comma- or space-separated, as `claude` takes them) as octo's
    /// permission rules; an entry naming no tool octo has is a warning.
    fn tool_rules(&mut self, entries: &[String], flag: &str) -> Vec<String> {
        let mut out = Vec::new();
        for entry in entries.iter().flat_map(|e| split_tool_list(e)) {
            match octo_tools::claude::flag_rules_for(&entry, flag == "--disallowedTools") {
                Ok(rules) => out.extend(rules),
                Err(e) => self.warnings.push(format!("{flag}: {e}; that entry is skipped")),
            }
        }
        out
    }
}

/// `Bash(git add:*),Read Edit` → its entries: split at commas and spaces outside parentheses.
fn split_tool_list(list: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0usize);
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' | ' ' if depth == 0 => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_owned());
                }
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
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

/// A spending limit: a positive, finite amount of US dollars.
fn check_budget(c: f64, desc: &str) -> Result<f64, ConfigError> {
    if c.is_finite() && c > 0.0 {
        return Ok(c);
    }
    Err(ConfigError::Value {
        source_desc: desc.into(),
        message: format!(
            "the spending limit must be more than 0 US dollars, not {c}; leave it out for no limit"
        ),
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

/// `worktree_dir` of one file: a user's only (a project could send worktrees anywhere).
fn worktree_dir_of(value: Option<String>, layer: &Layer<'_>, warnings: &mut Vec<String>) -> Option<PathBuf> {
    let value = value?.trim().to_owned();
    if layer.is_project {
        warnings.push(format!(
            "{}: `worktree_dir` is ignored in a project config; set it in your user config",
            layer.desc
        ));
        return None;
    }
    (!value.is_empty()).then(|| super::sandbox::expand(&value))
}
