//! The permission rules in Claude Code's `settings.json` files, as octo rules:
//! `permissions.allow|ask|deny` entries (`Bash(npm run test:*)`, `Read(./.env)`,
//! `WebFetch(domain:docs.rs)`) through the same mapping `allowed-tools` uses, and `defaultMode`.
//! The user's `~/.claude/settings.json` counts in full. A project's `.claude/settings.json` and
//! `.claude/settings.local.json` arrive with a clone, so only what tightens counts — their deny
//! and ask rules; their allow rules and mode are named in a warning and not applied.

use super::load::Config;
use super::project_allow::ProjectAllow;
use super::types::EnvLookup;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Claude Code's settings files that exist, each once, in order — the user's
/// `~/.claude/settings.json`, then the project's `.claude/settings.json` and
/// `.claude/settings.local.json` — with their text and whether they are the project's. Hooks
/// and permission rules read the same list.
pub(crate) fn settings_files(workspace: &Path, user_home: Option<&Path>) -> Vec<(PathBuf, String, bool)> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    if let Some(h) = user_home {
        files.push((h.join(".claude/settings.json"), false));
    }
    let claude = workspace.join(crate::protected::CLAUDE_DIR);
    files.push((claude.join("settings.json"), true));
    files.push((claude.join("settings.local.json"), true));
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for (path, project) in files {
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.contains(&real) {
            continue;
        }
        seen.push(real);
        if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path, text, project));
        }
    }
    out
}

/// Of a settings file Claude Code ignores, what only tightens: its deny and ask rules and
/// `disableBypassPermissionsMode`, where they are of the right type.
fn tightening_only(v: &Value) -> Value {
    let mut kept = serde_json::Map::new();
    if let Some(p) = v.get("permissions").and_then(Value::as_object) {
        for key in ["deny", "ask"] {
            if let Some(list) = p.get(key).filter(|l| l.is_array()) {
                kept.insert(key.to_owned(), list.clone());
            }
        }
        if let Some(d) = p.get("disableBypassPermissionsMode").filter(|d| d.is_string()) {
            kept.insert("disableBypassPermissionsMode".to_owned(), d.clone());
        }
    }
    serde_json::json!({ "permissions": kept })
}

impl Config {
    /// The plugins in use (`crate::plugins`), and the MCP servers they bring (the user's own:
    /// no approval, as for servers of the user's config).
    pub(super) fn read_plugins(&mut self, env: EnvLookup<'_>, dirs: &[PathBuf]) {
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let octo_home = crate::home::Home::new(&self.home);
        let places = (home.as_deref(), Some(self.workspace.as_path()));
        self.plugins =
            crate::plugins::enabled(&octo_home, places, dirs, (&mut self.warnings, &mut self.plugin_errors));
        for plugin in &self.plugins {
            // A plugin the project turned on brings servers only with the user's approval.
            let origin = if plugin.from == crate::claude_plugins::PluginFrom::Project {
                octo_mcp::Origin::ProjectJson
            } else {
                octo_mcp::Origin::User
            };
            for (name, spec) in crate::plugin_parts::mcp_servers(plugin, &mut self.warnings) {
                if self.mcp_servers.iter().any(|s| s.name == name) {
                    continue;
                }
                self.mcp_servers.push(octo_mcp::ServerConfig { name, spec, origin });
            }
        }
    }

    /// Adds the rules of the user's and the project's Claude Code settings files.
    pub(super) fn read_claude_settings(&mut self, workspace: &Path, env: EnvLookup<'_>) {
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        self.lsp.read_plugins(&self.plugins, &mut self.warnings);
        for (path, text, project) in settings_files(workspace, home.as_deref()) {
            // A file that is not JSON is already named by the hooks' loading.
            let Ok(mut v) = serde_json::from_str::<Value>(&text) else { continue };
            let problems = crate::claude_schema::problems(&v);
            if !problems.is_empty() {
                self.warnings.push(format!(
                    "{}: {}. Claude Code ignores a settings file with a setting of the wrong type, so octo uses only its deny and ask rules until it is fixed",
                    path.display(),
                    problems.join("; ")
                ));
                v = tightening_only(&v);
            }
            if !project && self.status_line.is_none() {
                self.status_line = super::status_line::from_claude(&v, &path.display().to_string());
            }
            self.apply_claude_permissions(&v, &path.display().to_string(), project, home.as_deref());
        }
        self.settle_project_allow();
    }

    /// A project's allow rules and `defaultMode` apply once the user trusted them (as Claude
    /// Code applies them after its trust dialog): trusted before with these exact entries in this
    /// workspace, they apply now; otherwise they wait in `project_allow`.
    fn settle_project_allow(&mut self) {
        let Some(mut pending) = self.project_allow.take() else { return };
        let ws = std::fs::canonicalize(&self.workspace).unwrap_or_else(|_| self.workspace.clone());
        pending.fingerprint = crate::home::fingerprint(&serde_json::json!({
            "settings": pending.entries,
            "mode": format!("{:?}", pending.mode),
            "workspace": ws.display().to_string(),
        }));
        if !crate::home::Home::new(&self.home).trusts(&pending.fingerprint) {
            self.warnings.push(format!(
                "the project's Claude Code settings allow {}: not applied until you trust them (the REPL asks once; or run `octo trust`)",
                pending.entries.join(", ")
            ));
            self.project_allow = Some(pending);
            return;
        }
        for (name, value) in &pending.env {
            self.shell_env.set.entry(name.clone()).or_insert_with(|| value.clone());
        }
        for (rule, file) in &pending.allow {
            if let Err(e) = self.rules.add(std::slice::from_ref(rule), &[], &[], file) {
                self.warnings.push(format!("{file}: its permission rules are skipped: {e}"));
            }
        }
        if let Some(m) = pending.mode.filter(|_| self.permission_mode.source == super::types::Source::Default)
        {
            let file = self.workspace.join(".claude/settings.json");
            self.permission_mode = super::types::Sourced::new(m, super::types::Source::Project(file));
        }
    }

    fn apply_claude_permissions(&mut self, v: &Value, file: &str, project: bool, home: Option<&Path>) {
        self.read_claude_env(v, file, project);
        let Some(p) = v.get("permissions") else { return };
        // It only tightens, so any file may set it.
        if p.get("disableBypassPermissionsMode").and_then(Value::as_str) == Some("disable") {
            self.bypass_disabled_by.get_or_insert_with(|| file.to_owned());
        }
        let list = |k: &str| -> Vec<String> {
            p.get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let rules = |entries: Vec<String>, what: &str, warnings: &mut Vec<String>| -> Vec<String> {
            let mut out = Vec::new();
            for e in entries {
                let mapped = match (what, project) {
                    ("allow", true) => octo_tools::claude::rules_for(&e),
                    ("allow", false) => octo_tools::claude::rules_for_user_settings(&e),
                    (_, project) => octo_tools::claude::narrowing_rules_for(&e, !project),
                };
                match mapped {
                    Ok(r) => out.extend(r),
                    Err(why) => warnings.push(format!("{file}: the {what} rule `{e}` is skipped: {why}")),
                }
            }
            out
        };
        let mut warnings = Vec::new();
        let allow = rules(list("allow"), "allow", &mut warnings);
        let ask = rules(list("ask"), "ask", &mut warnings);
        let deny = rules(list("deny"), "deny", &mut warnings);
        let allow = if project && !allow.is_empty() {
            // Held for the user's trust ([`Config::settle_project_allow`]).
            let pending = self.project_allow.get_or_insert_with(ProjectAllow::default);
            pending.entries.extend(list("allow").into_iter().map(|e| format!("{e} ({file})")));
            pending.allow.extend(allow.into_iter().map(|r| (r, file.to_owned())));
            Vec::new()
        } else {
            allow
        };
        if let Err(e) = self.rules.add(&allow, &ask, &deny, file) {
            warnings.push(format!("{file}: its permission rules are skipped: {e}"));
        }
        if let Some(mode) = p.get("defaultMode").and_then(Value::as_str) {
            match (project, mode.parse::<crate::permissions::Mode>()) {
                (true, Ok(m)) => {
                    let pending = self.project_allow.get_or_insert_with(ProjectAllow::default);
                    pending.entries.push(format!("defaultMode {mode} ({file})"));
                    pending.mode = Some(m);
                }
                (true, Err(e)) => warnings.push(format!("{file}: `defaultMode`: {e}")),
                (false, Ok(m)) if self.permission_mode.source == super::types::Source::Default => {
                    self.permission_mode =
                        super::types::Sourced::new(m, super::types::Source::User(PathBuf::from(file)));
                }
                (false, Ok(_)) => {}
                (false, Err(e)) => warnings.push(format!("{file}: `defaultMode`: {e}")),
            }
        }
        self.read_additional_dirs(p, (file, project), home, &mut warnings);
        self.warnings.extend(warnings);
    }

    /// The settings' `env`: variables for every command. The user's apply (octo's own
    /// `[shell_env] set` wins on a name both set); a project's arrive with a clone and could steer
    /// every command (`PATH`, `LD_PRELOAD`), so they wait for the user's trust with its allow
    /// rules.
    fn read_claude_env(&mut self, v: &Value, file: &str, project: bool) {
        let Some(env) = v.get("env").and_then(Value::as_object) else { return };
        for (name, value) in env {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    self.warnings.push(format!("{file}: env.{name} must be text; skipped"));
                    continue;
                }
            };
            if project {
                let pending = self.project_allow.get_or_insert_with(ProjectAllow::default);
                pending.entries.push(format!("env {name}={value} ({file})"));
                pending.env.push((name.clone(), value));
            } else {
                self.shell_env.set.entry(name.clone()).or_insert(value);
            }
        }
    }

    /// `permissions.additionalDirectories` of the user's settings: folders whose files are read
    /// without asking (`~/` is the home, a relative path is the workspace's). A project's are not
    /// applied: they would widen what a clone can reach.
    fn read_additional_dirs(
        &mut self,
        p: &Value,
        (file, project): (&str, bool),
        home: Option<&Path>,
        warnings: &mut Vec<String>,
    ) {
        let Some(list) = p.get("additionalDirectories").and_then(Value::as_array) else { return };
        if project {
            if !list.is_empty() {
                warnings.push(format!(
                    "{file}: `additionalDirectories` is not applied from a project's settings (put it in ~/.claude/settings.json)"
                ));
            }
            return;
        }
        for dir in list.iter().filter_map(Value::as_str) {
            let path = match (dir.strip_prefix("~/"), home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => self.workspace.join(dir),
            };
            match std::fs::canonicalize(&path) {
                Ok(real) if real.is_dir() => self.additional_dirs.push(real),
                _ => warnings.push(format!(
                    "{file}: additionalDirectories `{dir}` is not a folder ({}); skipped",
                    path.display()
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::load::{Config, Overrides};
    use crate::permissions::Mode;

    #[test]
    fn claude_codes_permission_rules_become_octos_and_a_project_only_tightens() {
        let t = tempfile::tempdir().unwrap();
        let (home, user, ws) = (t.path().join("octo"), t.path().join("user"), t.path().join("ws"));
        for d in
            [&home, &user.join(".claude"), &ws.join(".claude"), &user.join("docs"), &t.path().join("shared")]
        {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(
            user.join(".claude/settings.json"),
            r#"{"env": {"NODE_ENV": "test"}, "permissions": {"allow": ["Bash(npm run test:*)", "WebFetch(domain:docs.rs)", "Frobnicate(x)"], "defaultMode": "acceptEdits", "additionalDirectories": ["~/docs", "../shared", "~/nope"]}}"#,
        )
        .unwrap();
        std::fs::write(
            ws.join(".claude/settings.json"),
            r#"{"env": {"PATH": "/evil/bin"}, "permissions": {"allow": ["Bash(curl:*)"], "deny": ["Read(./.env)"], "ask": ["Bash(git push:*)"], "additionalDirectories": ["/"], "disableBypassPermissionsMode": "disable"}, "hooks": {}}"#,
        )
        .unwrap();
        let home_s = user.display().to_string();
        let env = move |k: &str| (k == "HOME").then(|| home_s.clone());
        let c = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
        let rules: Vec<(String, String, String)> = c
            .rules
            .iter()
            .map(|r| (r.action().as_str().to_owned(), r.text().to_owned(), r.origin().to_owned()))
            .collect();
        let has = |action: &str, text: &str| rules.iter().any(|(a, t, _)| a == action && t == text);
        assert!(has("allow", "terminal(npm run test*)"), "{rules:?}");
        assert!(has("allow", "web_fetch(docs.rs)"), "{rules:?}");
        assert!(has("deny", "read_file(**/.env)"), "{rules:?}");
        assert!(has("ask", "terminal(git push*)"), "{rules:?}");
        assert!(!has("allow", "terminal(curl*)"), "a project's allow rule is not applied: {rules:?}");
        assert_eq!(c.permission_mode.value, Mode::AcceptEdits);
        let w = c.warnings.join("\n");
        assert!(w.contains("Frobnicate(x)") && w.contains("Bash(curl:*)"), "{w}");
        assert!(w.contains("not applied until you trust them"), "{w}");
        assert_eq!(c.shell_env.set.get("NODE_ENV").map(String::as_str), Some("test"), "the user's env");
        assert!(!c.shell_env.set.contains_key("PATH"), "a project's env waits for trust");
        assert!(w.contains("env PATH=/evil/bin"), "{w}");
        let pending = c.project_allow.clone().unwrap();
        crate::home::Home::new(&home).remember_trust(&pending.fingerprint, &ws).unwrap();
        let trusted = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
        assert!(trusted.project_allow.is_none());
        assert!(
            trusted.rules.iter().any(|r| r.action().as_str() == "allow" && r.text() == "terminal(curl*)"),
            "once trusted"
        );
        assert_eq!(trusted.shell_env.set.get("PATH").map(String::as_str), Some("/evil/bin"), "once trusted");
        // `disableBypassPermissionsMode` turns auto mode off, even when a flag asks for it.
        let auto = Overrides { permission_mode: Some("auto".into()), ..Overrides::default() };
        let off = Config::load(&home, &ws, &env, &auto).unwrap();
        assert_eq!(off.permission_mode.value, Mode::Default);
        assert!(
            off.warnings.iter().any(|w| w.contains("disableBypassPermissionsMode")),
            "{:?}",
            off.warnings
        );
        let real = |p: std::path::PathBuf| std::fs::canonicalize(p).unwrap();
        assert_eq!(c.additional_dirs, [real(user.join("docs")), real(t.path().join("shared"))]);
        assert!(w.contains("`~/nope` is not a folder"), "{w}");
        assert!(w.contains("`additionalDirectories` is not applied from a project's settings"), "{w}");
    }

    #[test]
    fn a_file_claude_code_ignores_keeps_only_its_deny_and_ask_rules() {
        let t = tempfile::tempdir().unwrap();
        let (home, user, ws) = (t.path().join("octo"), t.path().join("user"), t.path().join("ws"));
        for d in [&home, &user.join(".claude"), &ws] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(
            user.join(".claude/settings.json"),
            r#"{"model": 5, "env": {"X": "1"}, "permissions": {"allow": ["Bash(touch:*)"], "deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"], "defaultMode": "acceptEdits"}}"#,
        )
        .unwrap();
        let home_s = user.display().to_string();
        let env = move |k: &str| (k == "HOME").then(|| home_s.clone());
        let c = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
        let has = |action: &str, text: &str| {
            c.rules.iter().any(|r| r.action().as_str() == action && r.text() == text)
        };
        assert!(has("deny", "terminal(rm*)") && has("ask", "terminal(git push*)"), "what tightens stays");
        assert!(!has("allow", "terminal(touch*)"), "its allow rules are not used");
        assert_eq!(c.permission_mode.value, Mode::Default, "nor its mode");
        assert!(!c.shell_env.set.contains_key("X"), "nor its env");
        let w = c.warnings.join("\n");
        assert!(
            w.contains("settings.json: `model` is a number, not text")
                && w.contains("only its deny and ask rules"),
            "{w}"
        );
    }
}
