//! `[lsp.<name>]`, `lsp_diagnostics` and `lsp_wait_ms`: the language servers and how edits use
//! them. A server is a program octo starts, so only the user's config may name one: a
//! project's tables are ignored with a warning (a repository must not choose what runs).

use std::collections::BTreeMap;
use std::time::Duration;

/// What diagnostics an edit's result gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LspDiagnostics {
    /// Errors only (the default).
    #[default]
    Errors,
    /// Errors and warnings.
    Warnings,
    /// None (the servers still answer the `lsp` tool).
    Off,
}

/// The language-server settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LspSettings {
    /// The user's server tables.
    pub servers: BTreeMap<String, octo_lsp::ServerConfig>,
    /// The servers of the user's enabled Claude Code plugins (a table of the same name wins).
    pub plugins: BTreeMap<String, octo_lsp::ServerConfig>,
    /// What an edit's result gets.
    pub diagnostics: LspDiagnostics,
    /// How long an edit waits for its diagnostics (`None`: the default, 1.5 s).
    pub wait: Option<Duration>,
}

impl LspSettings {
    /// Every configured server: the plugins', then the user's tables over them.
    pub(crate) fn configured(&self) -> BTreeMap<String, octo_lsp::ServerConfig> {
        let mut all = self.plugins.clone();
        all.extend(self.servers.clone());
        all
    }

    /// Reads the language servers of the Claude Code plugins in use; entries left out are named
    /// in `warnings`.
    pub(super) fn read_plugins(
        &mut self,
        plugins: &[crate::claude_plugins::InstalledPlugin],
        warnings: &mut Vec<String>,
    ) {
        for plugin in plugins {
            let (servers, notes) = crate::claude_plugins::lsp_servers(plugin);
            warnings.extend(notes);
            for (name, config) in servers {
                self.plugins.entry(name).or_insert(config);
            }
        }
    }

    /// Applies one file's keys; `project` files may not name servers.
    pub(super) fn apply(
        &mut self,
        servers: BTreeMap<String, octo_lsp::ServerConfig>,
        diagnostics: Option<&str>,
        wait_ms: Option<u64>,
        (project, desc): (bool, &str),
        warnings: &mut Vec<String>,
    ) {
        if project && !servers.is_empty() {
            let names: Vec<&str> = servers.keys().map(String::as_str).collect();
            warnings.push(format!(
                "{desc}: [lsp.{}] ignored: language servers are programs octo runs, so only your own config (~/.octo/config.toml) may name them",
                names.join("], [lsp.")
            ));
        } else {
            self.servers.extend(servers);
        }
        match diagnostics {
            None => {}
            Some("errors") => self.diagnostics = LspDiagnostics::Errors,
            Some("warnings") => self.diagnostics = LspDiagnostics::Warnings,
            Some("off") => self.diagnostics = LspDiagnostics::Off,
            Some(other) => warnings.push(format!(
                "{desc}: lsp_diagnostics = \"{other}\" is not errors, warnings or off; errors are reported"
            )),
        }
        if let Some(ms) = wait_ms {
            self.wait = Some(Duration::from_millis(ms.min(30_000)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> BTreeMap<String, octo_lsp::ServerConfig> {
        let c: octo_lsp::ServerConfig =
            serde_json::from_str(r#"{"command": "evil", "extensions": ["py"]}"#).unwrap();
        BTreeMap::from([("x".to_owned(), c)])
    }

    #[test]
    fn a_project_may_not_name_servers() {
        let mut s = LspSettings::default();
        let mut warnings = Vec::new();
        s.apply(table(), Some("warnings"), Some(99_999), (true, ".octo/config.toml"), &mut warnings);
        assert!(s.servers.is_empty(), "{s:?}");
        assert!(warnings[0].contains("[lsp.x] ignored"), "{warnings:?}");
        assert_eq!(s.diagnostics, LspDiagnostics::Warnings);
        assert_eq!(s.wait, Some(Duration::from_secs(30)), "capped");
        s.apply(table(), Some("loud"), None, (false, "config.toml"), &mut warnings);
        assert_eq!(s.servers.len(), 1, "the user's own are kept");
        assert!(warnings[1].contains("\"loud\" is not errors"), "{warnings:?}");
    }
}
