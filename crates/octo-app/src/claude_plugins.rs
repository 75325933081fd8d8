//! Claude Code's installed plugins, as its own install leaves them: `~/.claude/plugins/
//! installed_plugins.json` says where each `name@marketplace` is (user-scope installs), the
//! user's `~/.claude/settings.json` says which are enabled (`enabledPlugins`), and the
//! marketplace's `marketplace.json` may carry a plugin's manifest fields (`lspServers` for
//! the official language-server plugins). Only the user's files count: a project cannot enable
//! a plugin here. Files that are missing or not JSON mean no plugins, never an error. What a
//! plugin brings (commands, agents, skills, hooks, MCP servers) is read by `plugin_parts`; which
//! plugins are on, with octo's own installs and `--plugin-dir`, by `plugins`.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where a plugin was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginFrom {
    /// Installed by Claude Code (`~/.claude/plugins`).
    Claude,
    /// Installed by `octo plugin install` (`~/.octo/plugins`).
    Octo,
    /// Given with `--plugin-dir` for this run.
    Dir,
    /// Installed by Claude Code and turned on by the project's settings (`enabledPlugins` in
    /// `.claude/settings.json`): it arrived with the clone, so its hooks wait for the project's
    /// hook trust, its commands grant only once the project is trusted, its servers need approval.
    Project,
}

/// One installed plugin.
#[derive(Debug, Clone)]
pub struct InstalledPlugin {
    /// `name@marketplace` (Claude Code's installs), else the plugin's name.
    pub id: String,
    /// Its name: what its commands, skills and agents are prefixed with (`name:command`).
    pub name: String,
    /// Where it was found.
    pub from: PluginFrom,
    /// Its folder.
    pub root: PathBuf,
    /// Its `.claude-plugin/plugin.json`, if it has one.
    pub manifest: Option<Value>,
    /// Its entry in the marketplace's `marketplace.json`, if found.
    pub entry: Option<Value>,
}

impl InstalledPlugin {
    /// What the plugin declares under the manifest field `key`: its `plugin.json`'s, else its
    /// marketplace entry's (the entry's first when the entry says `"strict": false`, as Claude
    /// Code reads such a plugin from the marketplace alone).
    pub fn declared(&self, key: &str) -> Option<&Value> {
        let own = self.manifest.as_ref().and_then(|m| m.get(key));
        let listed = self.entry.as_ref().and_then(|e| e.get(key));
        let strict =
            self.entry.as_ref().and_then(|e| e.get("strict")).and_then(Value::as_bool) != Some(false);
        if strict {
            own.or(listed)
        } else {
            listed.or(own)
        }
    }
}

pub(crate) fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// A Claude Code settings file, unless Claude Code ignores it (a setting of the wrong type; the
/// config's loading names it).
pub(crate) fn read_settings(path: &Path) -> Option<Value> {
    read_json(path).filter(|v| crate::claude_schema::problems(v).is_empty())
}

/// The installed plugins the user enabled, from the Claude Code folder `claude_dir`
/// (`~/.claude`).
pub fn installed(claude_dir: &Path) -> Vec<InstalledPlugin> {
    all_installed(claude_dir).into_iter().filter(|(_, on)| *on).map(|(p, _)| p).collect()
}

/// Every plugin Claude Code installed for the user, with whether the user's settings enable it.
pub(crate) fn all_installed(claude_dir: &Path) -> Vec<(InstalledPlugin, bool)> {
    let enabled: Vec<String> = read_settings(&claude_dir.join("settings.json"))
        .and_then(|s| s.get("enabledPlugins").and_then(Value::as_object).cloned())
        .map(|m| m.into_iter().filter(|(_, on)| on.as_bool() == Some(true)).map(|(k, _)| k).collect())
        .unwrap_or_default();
    let plugins_dir = claude_dir.join("plugins");
    let Some(installs) = read_json(&plugins_dir.join("installed_plugins.json")) else { return Vec::new() };
    let ids: Vec<String> = installs
        .get("plugins")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let markets = read_json(&plugins_dir.join("known_marketplaces.json"));
    let mut out = Vec::new();
    let mut listings = std::collections::HashMap::new();
    for id in ids {
        let Some(root) = install_path(&installs, &id) else { continue };
        if !root.is_dir() {
            continue;
        }
        let manifest = read_json(&root.join(".claude-plugin/plugin.json"));
        let entry = marketplace_entry(&plugins_dir, markets.as_ref(), &id, &mut listings);
        let name = manifest
            .as_ref()
            .and_then(|m| m.get("name").and_then(Value::as_str))
            .map_or_else(|| id.rsplit_once('@').map_or(id.as_str(), |(n, _)| n).to_owned(), str::to_owned);
        let on = enabled.contains(&id);
        out.push((InstalledPlugin { id, name, from: PluginFrom::Claude, root, manifest, entry }, on));
    }
    out
}

/// Where `id` is installed for the user: the `installPath` of its user-scope install, else of
/// any install (a project-scope install is a copy in the user's cache too; the file's version 2
/// keeps a list of installs per plugin, version 1 a single one).
fn install_path(installs: &Value, id: &str) -> Option<PathBuf> {
    let entry = installs.get("plugins")?.get(id)?;
    let candidates: Vec<&Value> = match entry {
        Value::Array(list) => list.iter().collect(),
        one => vec![one],
    };
    let path = |c: &Value| c.get("installPath").and_then(Value::as_str).map(PathBuf::from);
    let user = |c: &Value| c.get("scope").and_then(Value::as_str).is_none_or(|s| s == "user");
    candidates
        .iter()
        .filter(|c| user(c))
        .find_map(|c| path(c))
        .or_else(|| candidates.iter().find_map(|c| path(c)))
}

/// The plugin's entry in its marketplace's `marketplace.json` (each listing read once, kept in
/// `listings`).
fn marketplace_entry(
    plugins_dir: &Path,
    markets: Option<&Value>,
    id: &str,
    listings: &mut std::collections::HashMap<String, Option<Value>>,
) -> Option<Value> {
    let (name, market) = id.rsplit_once('@')?;
    let listing = listings.entry(market.to_owned()).or_insert_with(|| {
        let location = markets
            .and_then(|m| m.get(market))
            .and_then(|m| m.get("installLocation"))
            .and_then(Value::as_str)
            .map_or_else(|| plugins_dir.join("marketplaces").join(market), PathBuf::from);
        read_json(&location.join(".claude-plugin/marketplace.json"))
    });
    listing
        .as_ref()?
        .get("plugins")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
        .cloned()
}

/// The language servers an installed plugin brings — its `plugin.json`'s `lspServers` (inline,
/// or the path of a file), its `.lsp.json`, its marketplace entry's `lspServers` — with a note
/// for each entry left out.
pub(crate) fn lsp_servers(plugin: &InstalledPlugin) -> (Vec<(String, octo_lsp::ServerConfig)>, Vec<String>) {
    let mut values: Vec<Value> = Vec::new();
    let mut read_file = |rel: &str| {
        if let Some(v) = read_json(&plugin.root.join(rel)) {
            values.push(v);
        }
    };
    let declared = [plugin.manifest.as_ref(), plugin.entry.as_ref()];
    for v in declared.iter().flatten().filter_map(|m| m.get("lspServers")) {
        match v {
            Value::String(rel) => read_file(rel),
            Value::Array(list) => list.iter().filter_map(Value::as_str).for_each(&mut read_file),
            _ => {}
        }
    }
    read_file(".lsp.json");
    let inline = declared.into_iter().flatten().filter_map(|m| m.get("lspServers")).filter(|v| v.is_object());
    let all: Vec<Value> = inline.cloned().chain(values).collect();
    let (mut servers, mut notes) = (Vec::new(), Vec::new());
    for v in &all {
        let (found, skipped) = octo_lsp::from_claude(v, &plugin.root);
        for (name, config) in found {
            if !servers.iter().any(|(n, _): &(String, _)| *n == name) {
                servers.push((name, config));
            }
        }
        notes.extend(
            skipped.into_iter().map(|s| format!("Claude Code plugin {}: language server {s}", plugin.id)),
        );
    }
    (servers, notes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn write(path: &Path, v: &Value) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    }

    /// A `~/.claude` as Claude Code's install leaves it: an official-style plugin whose servers
    /// are in the marketplace entry, one with a `.lsp.json`, one installed but disabled.
    fn claude_dir(t: &Path) -> PathBuf {
        let claude = t.join(".claude");
        let cache = claude.join("plugins/cache/official");
        std::fs::create_dir_all(cache.join("pyright-lsp/1.0.0")).unwrap();
        write(
            &cache.join("gd/2.0.0/.lsp.json"),
            &json!({"gdscript": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/gdls", "extensionToLanguage": {".gd": "gdscript"}}}),
        );
        write(&cache.join("gd/2.0.0/.claude-plugin/plugin.json"), &json!({"name": "gd"}));
        write(
            &cache.join("off/1.0.0/.lsp.json"),
            &json!({"off": {"command": "x", "extensionToLanguage": {".x": "x"}}}),
        );
        let install = |p: &str| json!([{"scope": "user", "installPath": cache.join(p).display().to_string(), "version": "1"}]);
        write(
            &claude.join("plugins/installed_plugins.json"),
            &json!({"version": 2, "plugins": {
                "pyright-lsp@official": install("pyright-lsp/1.0.0"),
                "gd@official": install("gd/2.0.0"),
                "off@official": install("off/1.0.0")
            }}),
        );
        write(
            &claude.join("plugins/marketplaces/official/.claude-plugin/marketplace.json"),
            &json!({"name": "official", "plugins": [{
                "name": "pyright-lsp", "source": "./plugins/pyright-lsp", "strict": false,
                "lspServers": {"pyright": {"command": "pyright-langserver", "args": ["--stdio"],
                    "extensionToLanguage": {".py": "python", ".pyi": "python"}}}
            }]}),
        );
        write(
            &claude.join("settings.json"),
            &json!({"enabledPlugins": {"pyright-lsp@official": true, "gd@official": true, "off@official": false}}),
        );
        claude
    }

    #[test]
    fn enabled_plugins_bring_their_language_servers() {
        let t = tempfile::tempdir().unwrap();
        let plugins = installed(&claude_dir(t.path()));
        let mut ids: Vec<&str> = plugins.iter().map(|p| p.id.as_str()).collect();
        ids.sort_unstable();
        assert_eq!(ids, ["gd@official", "pyright-lsp@official"]);
        let servers: Vec<(String, octo_lsp::ServerConfig)> =
            plugins.iter().flat_map(|p| lsp_servers(p).0).collect();
        let py = &servers.iter().find(|(n, _)| n == "pyright").unwrap().1;
        assert_eq!(
            (py.command.as_str(), py.extensions.clone()),
            ("pyright-langserver", vec!["py".to_owned(), "pyi".to_owned()])
        );
        let gd = &servers.iter().find(|(n, _)| n == "gdscript").unwrap().1;
        assert!(gd.command.ends_with("gd/2.0.0/bin/gdls"), "{}", gd.command);
    }

    #[test]
    fn nothing_installed_or_broken_files_mean_no_plugins() {
        let t = tempfile::tempdir().unwrap();
        assert!(installed(&t.path().join(".claude")).is_empty());
        let claude = claude_dir(t.path());
        std::fs::write(claude.join("plugins/installed_plugins.json"), "{broken").unwrap();
        assert!(installed(&claude).is_empty());
    }
}
