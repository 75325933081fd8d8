//! MCP in a session: the servers of the configuration as a hub, the user's approvals of a
//! project's servers (remembered by fingerprint in `mcp-approved.json` in octo's home), and the
//! user config's `[mcp_servers]` changed in place (`octo mcp add|remove`).

/// Why an action on the session's MCP servers failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The session has no MCP servers (none configured, or tools are off).
    #[error("this session has no MCP servers")]
    NoServers,
    /// No server of that name is configured.
    #[error("no MCP server `{0}` (`/mcp` lists them)")]
    Unknown(String),
    /// The approval could not be written to octo's home.
    #[error("could not remember the approval of `{name}` (check that octo's home is writable): {source}")]
    Remember {
        /// The server.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server is not waiting for approval.
    #[error("`{0}` does not need approval")]
    NotWaiting(String),
    /// The prompt could not be rendered.
    #[error(transparent)]
    Prompt(#[from] octo_mcp::PromptError),
}

/// What a front end needs for `octo mcp login|logout`.
pub use octo_mcp::login::logout;
pub use octo_mcp::oauth::token_entry;
pub use octo_mcp::{login, open_browser, Login, LoginError, OAuthSettings, SecretStore, Transport};

use crate::config::ConfigError;
use crate::home::Home;
use octo_mcp::{McpHub, ServerConfig};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn approvals_file(home: &Home) -> std::path::PathBuf {
    home.root().join("mcp-approved.json")
}

/// The fingerprints the user approved, with the server names they were approved as.
pub(crate) fn approvals(home: &Home) -> BTreeMap<String, String> {
    std::fs::read_to_string(approvals_file(home))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// What an approval covers: the server's whole definition as written (command, arguments, `env`,
/// `cwd`, URL, headers) in this workspace — a project server's working directory is the
/// workspace, so approving `node server.js` in one repository must not start another's.
pub(crate) fn approval_key(config: &ServerConfig, workspace: &Path) -> String {
    let ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    format!("{}@{}", config.spec.fingerprint(), ws.display())
}

/// Remembers that the user approved `config` in `workspace` (as it is now: a changed definition
/// or another workspace asks again).
pub(crate) fn remember_approval(home: &Home, config: &ServerConfig, workspace: &Path) -> std::io::Result<()> {
    let mut all = approvals(home);
    all.insert(approval_key(config, workspace), config.name.clone());
    home.write_file("mcp-approved.json", &serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?)
}

/// octo's key store as MCP logins see it: their tokens (`octo mcp login`) are entries in it.
pub(crate) struct McpSecrets(pub Arc<dyn crate::credentials::CredentialStore>);

impl octo_mcp::SecretStore for McpSecrets {
    fn get(&self, entry: &str) -> std::io::Result<Option<String>> {
        self.0.get(entry).map_err(std::io::Error::other)
    }
    fn set(&self, entry: &str, value: &str) -> std::io::Result<()> {
        self.0.set(entry, value).map_err(std::io::Error::other)
    }
    fn remove(&self, entry: &str) -> std::io::Result<bool> {
        self.0.remove(entry).map_err(std::io::Error::other)
    }
}

/// The key store of this process's environment, for MCP logins.
pub fn secrets(env: crate::config::EnvLookup<'_>) -> Arc<dyn octo_mcp::SecretStore> {
    Arc::new(McpSecrets(crate::credentials::KeyStore::from_env(env).open()))
}

/// The hub of `servers` (a project's servers start only when approved; HTTP servers use the
/// logins kept in the key store); `None` without servers.
pub fn hub(
    servers: &[ServerConfig],
    home: &Home,
    workspace: &Path,
    env: crate::config::EnvLookup<'_>,
) -> Option<Arc<McpHub>> {
    if servers.is_empty() {
        return None;
    }
    let approved = approvals(home);
    let hub = McpHub::new(servers.to_vec(), workspace.to_path_buf(), env, &|c: &ServerConfig| {
        approved.contains_key(&approval_key(c, workspace))
    });
    hub.use_secrets(secrets(env));
    hub.use_tool_cache(&home.mcp_tools());
    Some(hub)
}

/// Adds (or replaces) `[mcp_servers.<name>]` in the config file at `path`, keeping everything
/// else as it was; the result must load, or nothing is written.
pub fn add_server(path: &Path, name: &str, spec: &toml_edit::Table) -> Result<(), ConfigError> {
    edit(path, |doc| {
        if doc.get("mcp_servers").is_none() {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            doc["mcp_servers"] = toml_edit::Item::Table(t);
        }
        if let Some(t) = doc["mcp_servers"].as_table_mut() {
            t[name] = toml_edit::Item::Table(spec.clone());
        }
    })
}

/// Removes `[mcp_servers.<name>]`; returns whether it was there.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, ConfigError> {
    let mut found = false;
    edit(path, |doc| {
        if let Some(t) = doc.get_mut("mcp_servers").and_then(toml_edit::Item::as_table_mut) {
            found = t.remove(name).is_some();
        }
    })?;
    Ok(found)
}

fn edit(path: &Path, change: impl FnOnce(&mut toml_edit::DocumentMut)) -> Result<(), ConfigError> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(ConfigError::Read { path: path.to_path_buf(), reason: e.to_string() }),
    };
    crate::config::parse_file(path, &old)?;
    let mut doc: toml_edit::DocumentMut = old.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::Invalid { path: path.to_path_buf(), line: 1, column: 1, message: e.to_string() }
    })?;
    change(&mut doc);
    crate::setup::replace_file(path, &doc.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_approval_holds_for_one_workspace_and_one_definition() {
        let t = tempfile::tempdir().unwrap();
        let home = Home::new(t.path().join("octo"));
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let server = ServerConfig {
            name: "s".into(),
            spec: octo_mcp::ServerSpec {
                command: Some("node".into()),
                args: vec!["server.js".into()],
                ..Default::default()
            },
            origin: octo_mcp::Origin::ProjectJson,
        };
        remember_approval(&home, &server, &a).unwrap();
        let approved = approvals(&home);
        assert!(approved.contains_key(&approval_key(&server, &a)));
        assert!(!approved.contains_key(&approval_key(&server, &b)), "another repository's server.js");
        let mut changed = server;
        changed.spec.env.insert("NODE_OPTIONS".into(), "--require evil.js".into());
        assert!(!approved.contains_key(&approval_key(&changed, &a)), "a new env is asked about again");
        assert!(changed.spec.definition().contains("NODE_OPTIONS=--require evil.js"));
    }
}

/// A `--mcp-config` value (Claude Code's flag) that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpConfigError {
    /// Neither a readable file nor JSON text.
    #[error("--mcp-config {value}: not a file octo can read ({source}) nor JSON text")]
    Unreadable {
        /// The value as given.
        value: String,
        /// Why the file could not be read.
        source: std::io::Error,
    },
    /// The file or text is not a valid `{"mcpServers": …}` object.
    #[error("--mcp-config {0}")]
    Invalid(String),
}

/// The servers of a `--mcp-config` value: a file or a JSON text holding `{"mcpServers": …}`,
/// as Claude Code takes it. A server entry octo cannot read fails the whole value (as Claude
/// Code refuses an invalid MCP configuration), with the entry named.
pub fn servers_from_flag(value: &str) -> Result<Vec<(String, octo_mcp::ServerSpec)>, McpConfigError> {
    let trimmed = value.trim_start();
    let (path, text) = if trimmed.starts_with('{') {
        (Path::new("text").to_path_buf(), value.to_owned())
    } else {
        let path = Path::new(value).to_path_buf();
        let text = std::fs::read_to_string(&path)
            .map_err(|source| McpConfigError::Unreadable { value: value.to_owned(), source })?;
        (path, text)
    };
    let parsed = octo_mcp::parse_mcp_json(&path, &text);
    // Keys octo does not use are notes, not failures (as in `.mcp.json`).
    let fatal: Vec<&String> =
        parsed.errors.iter().filter(|e| !e.ends_with("not used by octo; ignored")).collect();
    if let Some(first) = fatal.first() {
        return Err(McpConfigError::Invalid((*first).clone()));
    }
    Ok(parsed.servers)
}
