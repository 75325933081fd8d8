//! Claude Code plugins' language servers: a plugin's `.lsp.json`, the `lspServers` of its
//! `plugin.json` (an object, or the path of such a file) or of its marketplace entry, read as
//! octo's [`ServerConfig`]s. `${CLAUDE_PLUGIN_ROOT}` is replaced by the plugin's folder in
//! `command`, `args` and `env`. Fields octo has no use for (`startupTimeout`, `restartOnCrash`
//! …) are ignored; octo's own supervision applies. A server entry that is not usable is left
//! out with a reason, the others are kept.

use crate::config::ServerConfig;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One entry of `.lsp.json`, in Claude Code's names.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    extension_to_language: BTreeMap<String, String>,
    #[serde(default)]
    transport: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    initialization_options: Option<Value>,
    #[serde(default)]
    settings: Option<Value>,
}

/// The servers of one `lspServers` value (`{ name: entry, … }`) of the plugin in `root`, and a
/// reason for each entry left out.
pub fn from_claude(servers: &Value, root: &Path) -> (Vec<(String, ServerConfig)>, Vec<String>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    let Some(map) = servers.as_object() else {
        skipped.push("lspServers is not an object of servers".to_owned());
        return (out, skipped);
    };
    let root_text = root.to_string_lossy();
    let expand = |s: &str| s.replace("${CLAUDE_PLUGIN_ROOT}", &root_text);
    for (name, value) in map {
        let entry: Entry = match serde_json::from_value(value.clone()) {
            Ok(e) => e,
            Err(e) => {
                skipped.push(format!("`{name}`: {e}"));
                continue;
            }
        };
        if entry.transport.as_deref().is_some_and(|t| t != "stdio") {
            skipped.push(format!("`{name}`: only the stdio transport is supported"));
            continue;
        }
        let mut extensions = Vec::new();
        let mut language_ids = BTreeMap::new();
        for (ext, language) in &entry.extension_to_language {
            let ext = ext.trim_start_matches('.').to_ascii_lowercase();
            if !ext.is_empty() {
                language_ids.insert(ext.clone(), language.clone());
                extensions.push(ext);
            }
        }
        if extensions.is_empty() {
            skipped.push(format!("`{name}`: extensionToLanguage names no extension"));
            continue;
        }
        // A relative path is the plugin's own file, never one of the workspace's (octo runs in
        // the workspace, and a repository must not choose what runs).
        let mut command = expand(&entry.command);
        if command.contains('/') && Path::new(&command).is_relative() {
            command = root.join(&command).to_string_lossy().into_owned();
        }
        let config = ServerConfig {
            command,
            args: entry.args.iter().map(|a| expand(a)).collect(),
            extensions,
            root_markers: Vec::new(),
            initialization_options: entry.initialization_options,
            env: entry.env.iter().map(|(k, v)| (k.clone(), expand(v))).collect(),
            settings: entry.settings,
            language_ids,
            disabled: false,
        };
        out.push((name.clone(), config));
    }
    (out, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plugins_lsp_json_reads_as_servers() {
        let lsp = json!({
            "go": {"command": "gopls", "args": ["serve"], "extensionToLanguage": {".go": "go"}},
            "gd": {
                "command": "${CLAUDE_PLUGIN_ROOT}/bin/gdls",
                "extensionToLanguage": {".gd": "gdscript"},
                "env": {"GDLS_HOME": "${CLAUDE_PLUGIN_ROOT}/data"},
                "settings": {"gdls": {"strict": true}},
                "startupTimeout": 5000,
                "restartOnCrash": true,
                "maxRestarts": 3
            }
        });
        let (servers, skipped) = from_claude(&lsp, Path::new("/plugins/gd"));
        assert!(skipped.is_empty(), "{skipped:?}");
        let gd = &servers.iter().find(|(n, _)| n == "gd").unwrap().1;
        assert_eq!(gd.command, "/plugins/gd/bin/gdls");
        assert_eq!(gd.extensions, ["gd"]);
        assert_eq!(gd.language_ids["gd"], "gdscript");
        assert_eq!(gd.env["GDLS_HOME"], "/plugins/gd/data");
        assert_eq!(gd.settings, Some(json!({"gdls": {"strict": true}})));
        let go = &servers.iter().find(|(n, _)| n == "go").unwrap().1;
        assert_eq!(go.args, ["serve"]);
        let rel = json!({"r": {"command": "./bin/server", "extensionToLanguage": {".R": "r"}}});
        let (servers, _) = from_claude(&rel, Path::new("/plugins/r"));
        assert_eq!(
            servers[0].1.command, "/plugins/r/./bin/server",
            "a relative command is the plugin's file"
        );
        assert_eq!(servers[0].1.extensions, ["r"]);
    }

    #[test]
    fn unusable_entries_are_left_out_with_a_reason() {
        let lsp = json!({
            "sock": {"command": "x", "transport": "socket", "extensionToLanguage": {".x": "x"}},
            "bare": {"command": "y"},
            "none": {"command": "z", "extensionToLanguage": {}},
            "ok": {"command": "w", "extensionToLanguage": {".w": "w"}}
        });
        let (servers, skipped) = from_claude(&lsp, Path::new("/p"));
        assert_eq!(servers.len(), 1);
        assert_eq!(skipped.len(), 3, "{skipped:?}");
        assert!(skipped.iter().any(|s| s.contains("`sock`") && s.contains("stdio")));
        assert!(skipped.iter().any(|s| s.contains("`bare`") && s.contains("extensionToLanguage")));
        let (none, why) = from_claude(&json!(["not", "an", "object"]), Path::new("/p"));
        assert!(none.is_empty() && why.len() == 1);
    }
}
