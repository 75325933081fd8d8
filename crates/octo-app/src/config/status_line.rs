//! The REPL's status line: octo's own (a template over the session's figures), a command of the
//! user's (Claude Code's `statusLine`: the session as JSON on stdin, its first line of stdout
//! shown), or none. `[status_line]` in the user's config; a project may change the template or
//! turn it off, never name a command. Claude Code's `statusLine` of `~/.claude/settings.json`
//! counts when octo's config says nothing.

use serde::Deserialize;

/// The built-in template.
pub(crate) const DEFAULT_TEMPLATE: &str = "{model} · {context} · {cost} · {mode}{branch}{background}";

/// How the status line is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusLine {
    /// None is shown.
    Off,
    /// octo's own, from a template (`{model}`, `{context}`, `{cost}`, `{mode}`, `{branch}`,
    /// `{background}`, `{session}`).
    Template(String),
    /// A command's first line of output.
    Command {
        /// The shell command.
        command: String,
        /// Where it was configured (for messages).
        from: String,
    },
}

impl Default for StatusLine {
    fn default() -> Self {
        Self::Template(DEFAULT_TEMPLATE.to_owned())
    }
}

/// `[status_line]` in a config file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusLineToml {
    /// `false` hides it.
    pub enabled: Option<bool>,
    /// octo's own line, with `{model}`, `{context}`, `{cost}`, `{mode}`, `{branch}`,
    /// `{background}`, `{session}`.
    pub template: Option<String>,
    /// A command whose first line of output is shown (user config only).
    pub command: Option<String>,
}

/// What `t` (from `desc`, a project's when `project`) makes of `current`.
pub(super) fn apply(
    current: Option<StatusLine>,
    t: StatusLineToml,
    desc: &str,
    project: bool,
    warnings: &mut Vec<String>,
) -> Option<StatusLine> {
    if t.enabled == Some(false) {
        return Some(StatusLine::Off);
    }
    if let Some(command) = t.command.filter(|c| !c.trim().is_empty()) {
        if project {
            warnings.push(format!(
                "{desc}: [status_line] command is not run from a project's config (it would run on every prompt); put it in ~/.octo/config.toml"
            ));
        } else {
            return Some(StatusLine::Command { command, from: desc.to_owned() });
        }
    }
    match t.template {
        Some(template) => Some(StatusLine::Template(template)),
        None if t.enabled == Some(true) => Some(current.unwrap_or_default()),
        None => current,
    }
}

/// Claude Code's `statusLine` in the user's `settings.json` (`{"type": "command", "command": …}`).
pub(super) fn from_claude(settings: &serde_json::Value, desc: &str) -> Option<StatusLine> {
    let s = settings.get("statusLine")?;
    if s.get("type").and_then(serde_json::Value::as_str) != Some("command") {
        return None;
    }
    let command = s.get("command")?.as_str()?.trim();
    (!command.is_empty()).then(|| StatusLine::Command { command: command.to_owned(), from: desc.to_owned() })
}
