//! What a Claude Code plugin brings, read from its folder as Claude Code lays it out: commands
//! (`commands/`), agents (`agents/`), skills (`skills/<name>/SKILL.md`), hooks
//! (`hooks/hooks.json`) and MCP servers (`.mcp.json`), each also where the manifest's
//! `commands`, `agents`, `skills`, `hooks` and `mcpServers` point (a path or a list of paths
//! inside the plugin, or for hooks and servers the definitions themselves).
//! `${CLAUDE_PLUGIN_ROOT}` is the plugin's folder in commands, hooks and server definitions.
//! A path that leaves the plugin's folder is refused with a notice.

use crate::claude_plugins::{read_json, InstalledPlugin, PluginFrom};
use octo_skills::{Root, RootKind};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The paths the manifest's `key` names (a string or a list of strings), inside the plugin,
/// after the default one when that exists; a notice for each that leaves the plugin.
fn paths(plugin: &InstalledPlugin, key: &str, default: &str, notes: &mut Vec<String>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let default = plugin.root.join(default);
    if default.exists() {
        out.push(default);
    }
    let declared: Vec<&str> = match plugin.declared(key) {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for rel in declared {
        match inside(&plugin.root, rel) {
            Some(p) if !out.contains(&p) => out.push(p),
            Some(_) => {}
            None => notes.push(format!(
                "plugin {}: `{key}` names {rel}, which is not inside the plugin's folder; skipped",
                plugin.id
            )),
        }
    }
    out
}

/// `rel` under `root`, when it stays there (no `..` out of it, no absolute path elsewhere).
pub(crate) fn inside(root: &Path, rel: &str) -> Option<PathBuf> {
    let rel = rel.replace("${CLAUDE_PLUGIN_ROOT}", &root.to_string_lossy());
    let path = if Path::new(&rel).is_absolute() { PathBuf::from(&rel) } else { root.join(&rel) };
    let real = std::fs::canonicalize(&path).ok()?;
    let base = std::fs::canonicalize(root).ok()?;
    real.starts_with(&base).then_some(real)
}

/// The plugin's skill and command folders, as catalog roots (entries named `plugin:name`).
pub(crate) fn skill_roots(plugin: &InstalledPlugin, notes: &mut Vec<String>) -> Vec<Root> {
    // A plugin the project turned on is the project's: its grants wait for the project's trust.
    let owner = if plugin.from == PluginFrom::Project { "project plugin" } else { "plugin" };
    let label = |what: &str| format!("{owner} {} {what}", plugin.id);
    let mut roots = Vec::new();
    for dir in paths(plugin, "skills", "skills", notes) {
        roots.push(Root::new(dir, label("skills"), RootKind::Skills).of_plugin(&plugin.name, &plugin.root));
    }
    for dir in paths(plugin, "commands", "commands", notes) {
        roots.push(
            Root::new(dir, label("commands"), RootKind::Commands).of_plugin(&plugin.name, &plugin.root),
        );
    }
    roots
}

/// The plugin's agent folders (or files).
pub(crate) fn agent_paths(plugin: &InstalledPlugin, notes: &mut Vec<String>) -> Vec<PathBuf> {
    paths(plugin, "agents", "agents", notes)
}

/// `text` with `${CLAUDE_PLUGIN_ROOT}` replaced by the plugin's folder in every string of `v`.
fn with_root(v: &mut Value, root: &str) {
    match v {
        Value::String(s) if s.contains("${CLAUDE_PLUGIN_ROOT}") => {
            *s = s.replace("${CLAUDE_PLUGIN_ROOT}", root);
        }
        Value::Array(list) => list.iter_mut().for_each(|x| with_root(x, root)),
        Value::Object(map) => map.values_mut().for_each(|x| with_root(x, root)),
        _ => {}
    }
}

/// The definitions the manifest's `key` holds inline (an object), plus those in the files it and
/// the default file name, each with the file it came from.
fn definitions(
    plugin: &InstalledPlugin,
    key: &str,
    default: &str,
    notes: &mut Vec<String>,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(v @ Value::Object(_)) = plugin.declared(key) {
        out.push((format!("plugin {} plugin.json", plugin.id), v.clone()));
    }
    for file in paths(plugin, key, default, notes) {
        match std::fs::read_to_string(&file).map(|t| serde_json::from_str::<Value>(&t)) {
            Ok(Ok(v)) => out.push((format!("plugin {} {}", plugin.id, file.display()), v)),
            Ok(Err(e)) => notes.push(format!(
                "plugin {}: {} is not valid JSON ({e}); skipped",
                plugin.id,
                file.display()
            )),
            Err(e) => {
                notes.push(format!("plugin {}: {} cannot be read ({e}); skipped", plugin.id, file.display()));
            }
        }
    }
    out
}

/// The plugin's hooks. Each command runs with `CLAUDE_PLUGIN_ROOT` set to the plugin's folder
/// (so the command's own quoting applies, as in Claude Code); a script it names under the
/// plugin that is missing is a notice (the hook then fails when it runs, and says so).
pub(crate) fn hooks(plugin: &InstalledPlugin, notes: &mut Vec<String>) -> octo_hooks::HookSet {
    let mut set = octo_hooks::HookSet::default();
    let root = plugin.root.to_string_lossy().into_owned();
    let quoted = format!("'{}'", root.replace('\'', "'\\''"));
    for (source, mut v) in definitions(plugin, "hooks", "hooks/hooks.json", notes) {
        // A hooks file is `{"hooks": {…}}`; the manifest's inline value may be the events alone.
        let mut events = if v.get("hooks").is_some() { v["hooks"].take() } else { v };
        for_each_command(&mut events, &mut |command: &mut String| {
            if let Some(script) = named_script(command, &root) {
                if !script.exists() {
                    notes.push(format!(
                        "plugin {}: the hook command `{command}` names {}, which does not exist",
                        plugin.id,
                        script.display()
                    ));
                }
            }
            *command = format!("export CLAUDE_PLUGIN_ROOT={quoted}; {command}");
        });
        let text = serde_json::json!({ "hooks": events }).to_string();
        let project = plugin.from == PluginFrom::Project;
        let (more, n) = octo_hooks::config::from_claude_settings(&text, &source, project);
        set.extend(more);
        notes.extend(n);
    }
    set
}

/// Calls `f` on every hook's `command` in an events object.
fn for_each_command(events: &mut Value, f: &mut dyn FnMut(&mut String)) {
    let Some(map) = events.as_object_mut() else { return };
    for entries in map.values_mut().filter_map(Value::as_array_mut) {
        for entry in entries.iter_mut() {
            let Some(list) = entry.get_mut("hooks").and_then(Value::as_array_mut) else { continue };
            for h in list.iter_mut() {
                if let Some(Value::String(c)) = h.get_mut("command") {
                    f(c);
                }
            }
        }
    }
}

/// The file under the plugin a hook command names with `${CLAUDE_PLUGIN_ROOT}/…`, if any.
fn named_script(command: &str, root: &str) -> Option<PathBuf> {
    let word = command
        .split_whitespace()
        .map(|w| w.trim_matches(['"', '\'']))
        .find(|w| w.starts_with("${CLAUDE_PLUGIN_ROOT}/") || w.starts_with("$CLAUDE_PLUGIN_ROOT/"))?;
    let rel = word.split_once('/')?.1;
    Some(Path::new(root).join(rel))
}

/// The plugin's MCP servers, named `plugin_<plugin>_<server>` as Claude Code names them (so
/// their tools are `mcp__plugin_<plugin>_<server>__<tool>`).
pub(crate) fn mcp_servers(
    plugin: &InstalledPlugin,
    notes: &mut Vec<String>,
) -> Vec<(String, octo_mcp::ServerSpec)> {
    let root = plugin.root.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for (source, mut v) in definitions(plugin, "mcpServers", ".mcp.json", notes) {
        with_root(&mut v, &root);
        // A plugin's `.mcp.json` has `mcpServers`, or the servers at its top level.
        let wrapped = if v.get("mcpServers").is_some() { v } else { serde_json::json!({ "mcpServers": v }) };
        let parsed = octo_mcp::parse_mcp_json(Path::new(&source), &wrapped.to_string());
        notes.extend(parsed.errors);
        for (name, spec) in parsed.servers {
            out.push((format!("plugin_{}_{name}", plugin.name), spec));
        }
    }
    out
}

/// How many of each part the plugin has, for `octo plugin list`.
pub fn summary(plugin: &InstalledPlugin) -> String {
    let mut notes = Vec::new();
    let (catalog, _) = octo_skills::Catalog::discover(&skill_roots(plugin, &mut notes));
    let commands = catalog.iter().filter(|s| s.kind == octo_skills::Kind::Command).count();
    let skills = catalog.len() - commands;
    let mut agents = octo_skills::Agents::default();
    for p in agent_paths(plugin, &mut notes) {
        agents.add_plugin(&p, "plugin", &plugin.name);
    }
    let hooks = hooks(plugin, &mut notes).iter().count();
    let servers = mcp_servers(plugin, &mut notes).len();
    let counts = [
        (commands, "command"),
        (skills, "skill"),
        (agents.names().len(), "agent"),
        (hooks, "hook"),
        (servers, "MCP server"),
    ];
    let parts: Vec<String> = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}{}", if *n == 1 { "" } else { "s" }))
        .collect();
    if parts.is_empty() {
        "nothing octo reads".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Why a folder is not a usable plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// No manifest, and none of the folders a plugin has.
    #[error(
        "{} has no .claude-plugin/plugin.json and none of commands/, agents/, skills/, hooks/hooks.json or .mcp.json; it is not a plugin folder",
        .0.display()
    )]
    Missing(PathBuf),
    /// A manifest that is not a JSON object.
    #[error("{} is not a JSON object (check its syntax)", .0.display())]
    Broken(PathBuf),
    /// A `name` that cannot prefix commands.
    #[error("its name `{0}` is not a plugin name (use letters, digits, `-`, `_`, `.`)")]
    BadName(String),
    /// No `name`, and a folder name that cannot be one.
    #[error("its plugin.json has no `name`, and the folder's name cannot be one; add a `name`")]
    NoName,
}

/// Reads `plugin.json` of the folder `dir`, for a plugin given by folder. As in Claude Code the
/// manifest is optional: a folder with a plugin's parts and no manifest is the plugin named after
/// the folder (an empty manifest).
pub(crate) fn manifest_of(dir: &Path) -> Result<Value, ManifestError> {
    let file = dir.join(".claude-plugin/plugin.json");
    if !file.is_file() {
        let parts = ["commands", "agents", "skills"].iter().any(|d| dir.join(d).is_dir())
            || dir.join("hooks/hooks.json").is_file()
            || dir.join(".mcp.json").is_file();
        return if parts {
            Ok(Value::Object(serde_json::Map::new()))
        } else {
            Err(ManifestError::Missing(dir.to_path_buf()))
        };
    }
    match read_json(&file) {
        Some(v) if v.is_object() => Ok(v),
        _ => Err(ManifestError::Broken(file)),
    }
}
