//! MCP server settings: `[mcp_servers.<name>]` in octo's TOML files and the `mcpServers` of a
//! project's `.mcp.json` (Claude Code's format), one shape for both, with `${VAR}` and
//! `${VAR:-default}` expanded from the environment when a server starts.

use crate::error::SpecError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One server as written (every field optional; [`ServerSpec::transport`] checks them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// `stdio` (default with `command`), `http`/`streamable-http` (default with `url`), `sse`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The program to start (stdio).
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables for it (on top of octo's environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory (default: the workspace).
    pub cwd: Option<PathBuf>,
    /// The endpoint (HTTP).
    pub url: Option<String>,
    /// Headers sent with every HTTP request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The environment variable holding a bearer token (HTTP); octo never writes a token into a
    /// config file.
    #[serde(default, alias = "bearerTokenEnv")]
    pub bearer_token_env: Option<String>,
    /// OAuth settings (HTTP), as Claude Code's `oauth` object has them: a pre-registered client,
    /// a fixed callback port, scopes, a metadata document.
    #[serde(default)]
    pub oauth: Option<crate::oauth::OAuthSpec>,
    /// `false` keeps it configured but off.
    pub enabled: Option<bool>,
    /// Seconds to wait for it to start and list its tools (default 30).
    #[serde(default, alias = "startupTimeout")]
    pub startup_timeout: Option<f64>,
    /// Seconds one call may take (default 600).
    #[serde(default, alias = "callTimeout", alias = "timeout")]
    pub call_timeout: Option<f64>,
    /// Only these of its tools (default: all).
    #[serde(default, alias = "enabledTools")]
    pub tools: Option<Vec<String>>,
    /// Never these of its tools.
    #[serde(default, alias = "disabledTools")]
    pub disabled_tools: Vec<String>,
}

/// How to reach a server, with variables expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment.
        env: BTreeMap<String, String>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP, or the older HTTP+SSE transport (`type: "sse"`).
    Http {
        /// The endpoint.
        url: String,
        /// Extra headers.
        headers: BTreeMap<String, String>,
        /// A bearer token (from the environment or the key store), never printed.
        bearer: Option<String>,
        /// OAuth settings, variables expanded.
        oauth: crate::oauth::OAuthSettings,
        /// The older HTTP+SSE transport (an event stream at `url` names where to post).
        legacy_sse: bool,
    },
}

impl Transport {
    /// `stdio` or `http`, for listings.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { legacy_sse: true, .. } => "sse",
            Self::Http { .. } => "http",
        }
    }

    /// What it runs or reaches, for listings and approval prompts (no secrets: header values
    /// and tokens are left out).
    pub fn describe(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Self::Http { url, .. } => url.clone(),
        }
    }
}

/// Where a server's settings came from. A project's servers run only once the user approved
/// them (a repository must not start programs on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// The user's `~/.octo/config.toml`.
    User,
    /// The project's `.mcp.json`.
    ProjectJson,
    /// The project's `.octo/config.toml`.
    ProjectConfig,
}

impl Origin {
    /// Whether the user must approve the server before it runs.
    pub fn needs_approval(self) -> bool {
        self != Self::User
    }
}

/// A server ready to start: its name, settings and origin.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Its name (the `<server>` in `mcp__<server>__<tool>`).
    pub name: String,
    /// As written.
    pub spec: ServerSpec,
    /// Where from.
    pub origin: Origin,
}

/// Looks a variable up (the process environment, or a map in tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Expands `${VAR}` and `${VAR:-default}`; an unset variable without a default is an error naming
/// it.
pub fn expand(text: &str, env: Env<'_>) -> Result<String, SpecError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match (env(name).filter(|v| !v.is_empty()), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(SpecError::Unset(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

impl ServerSpec {
    /// Whether it is turned on.
    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// How long to wait for it to start.
    pub fn startup_timeout(&self) -> Duration {
        secs(self.startup_timeout, 30.0)
    }

    /// How long one call may take.
    pub fn call_timeout(&self) -> Duration {
        secs(self.call_timeout, 600.0)
    }

    /// Whether its tool `name` is offered.
    pub fn offers(&self, name: &str) -> bool {
        self.tools.as_ref().is_none_or(|allow| allow.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }

    /// The transport, variables expanded; the error says what is wrong.
    pub fn transport(&self, env: Env<'_>) -> Result<Transport, SpecError> {
        let kind = self.kind.as_deref().map(str::to_ascii_lowercase);
        match (&self.command, &self.url, kind.as_deref()) {
            (Some(_), Some(_), _) => Err(SpecError::Both),
            (Some(command), None, None | Some("stdio")) => Ok(Transport::Stdio {
                command: expand(command, env)?,
                args: self.args.iter().map(|a| expand(a, env)).collect::<Result<_, _>>()?,
                env: self
                    .env
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), expand(v, env)?)))
                    .collect::<Result<_, SpecError>>()?,
                cwd: self.cwd.clone(),
            }),
            (None, Some(url), None | Some("http" | "streamable-http" | "streamable_http" | "sse")) => {
                let url = expand(url, env)?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(SpecError::NotHttp(url));
                }
                let bearer = match &self.bearer_token_env {
                    Some(var) => Some(
                        env(var).filter(|v| !v.is_empty()).ok_or_else(|| SpecError::NoToken(var.clone()))?,
                    ),
                    None => None,
                };
                Ok(Transport::Http {
                    url,
                    headers: self
                        .headers
                        .iter()
                        .map(|(k, v)| Ok((k.clone(), expand(v, env)?)))
                        .collect::<Result<_, SpecError>>()?,
                    bearer,
                    oauth: self.oauth_settings(env)?,
                    legacy_sse: kind.as_deref() == Some("sse"),
                })
            }
            (_, _, Some(other))
                if !matches!(other, "stdio" | "http" | "streamable-http" | "streamable_http" | "sse") =>
            {
                Err(SpecError::UnknownType(other.to_owned()))
            }
            (None, None, _) => Err(SpecError::Neither),
            (Some(_), None, Some(k)) => Err(SpecError::WantsUrl(k.to_owned())),
            (None, Some(_), Some(k)) => Err(SpecError::WantsCommand(k.to_owned())),
        }
    }

    /// The `oauth` settings with variables expanded (the client secret read from its variable).
    fn oauth_settings(&self, env: Env<'_>) -> Result<crate::oauth::OAuthSettings, SpecError> {
        let Some(o) = &self.oauth else { return Ok(crate::oauth::OAuthSettings::default()) };
        let opt = |v: &Option<String>| v.as_deref().map(|v| expand(v, env)).transpose();
        let client_secret = match &o.client_secret_env {
            Some(var) => {
                Some(env(var).filter(|v| !v.is_empty()).ok_or_else(|| SpecError::NoToken(var.clone()))?)
            }
            None => None,
        };
        Ok(crate::oauth::OAuthSettings {
            client_id: opt(&o.client_id)?,
            client_secret,
            callback_port: o.callback_port,
            scopes: o.scopes.as_ref().map(crate::oauth::Scopes::items).unwrap_or_default(),
            metadata_url: opt(&o.auth_server_metadata_url)?,
            client_credentials: o
                .grant
                .as_deref()
                .is_some_and(|g| g.eq_ignore_ascii_case("client_credentials")),
        })
    }

    /// What else an approval covers besides the command or URL, as written (before `${VAR}`
    /// expansion, so a variable it would send is named): `env` (values cut at 60 characters),
    /// `cwd`, headers (a value that names variables as written, a literal one as `…` since it
    /// may be a key).
    pub fn definition(&self) -> String {
        let shown = |map: &BTreeMap<String, String>, sep: &str| -> String {
            map.iter()
                .map(|(k, v)| {
                    let cut: String = v.chars().take(60).collect();
                    format!("{k}{sep}{cut}{}", if v.chars().count() > 60 { "…" } else { "" })
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.env.is_empty() {
            parts.push(format!("env {}", shown(&self.env, "=")));
        }
        if let Some(c) = &self.cwd {
            parts.push(format!("cwd {}", c.display()));
        }
        if !self.headers.is_empty() {
            let headers: BTreeMap<String, String> = self
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), if v.contains("${") { v.clone() } else { "…".to_owned() }))
                .collect();
            parts.push(format!("headers {}", shown(&headers, ": ")));
        }
        parts.join("; ")
    }

    /// What the server runs or reaches as written (its URL, or command and arguments) beside
    /// `why` it cannot be used yet; `why` alone when it names neither.
    pub fn as_written(&self, why: &impl std::fmt::Display) -> String {
        let written = self.url.clone().or_else(|| {
            self.command
                .as_ref()
                .map(|c| std::iter::once(c).chain(&self.args).cloned().collect::<Vec<_>>().join(" "))
        });
        written.map_or_else(|| why.to_string(), |w| format!("{w} ({why})"))
    }

    /// A stable fingerprint of what the server runs or reaches, as written (before expansion):
    /// the approval of a project's server covers exactly this, so a changed command is asked
    /// about again.
    pub fn fingerprint(&self) -> String {
        // SHA-256 of an unambiguous (JSON) encoding: no two definitions share one, so an
        // approval cannot be carried to another by moving words between fields.
        let what = serde_json::json!({
            "kind": self.kind,
            "command": self.command,
            "args": self.args,
            "env": self.env,
            "cwd": self.cwd.as_ref().map(|c| c.display().to_string()),
            "url": self.url,
            "headers": self.headers,
        });
        use sha2::Digest;
        format!("{:x}", sha2::Sha256::digest(what.to_string().as_bytes()))
    }
}

fn secs(v: Option<f64>, default: f64) -> Duration {
    Duration::from_secs_f64(v.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(default).min(86_400.0))
}

/// What a `.mcp.json` holds: its servers, and the ones that could not be read (each named).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpJson {
    /// Servers, in file order.
    pub servers: Vec<(String, ServerSpec)>,
    /// Problems, one per server or one for the whole file.
    pub errors: Vec<String>,
}

/// Reads a `.mcp.json` (Claude Code's format). A file that is not JSON is one error naming its
/// line and column; a server entry that is wrong is an error naming it, and the other servers
/// still load.
pub fn parse_mcp_json(path: &Path, text: &str) -> McpJson {
    let mut out = McpJson::default();
    let v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.errors.push(format!("{}: line {}, column {}: {e}", path.display(), e.line(), e.column()));
            return out;
        }
    };
    let Some(servers) = v.get("mcpServers") else {
        out.errors.push(format!("{}: no `mcpServers` object", path.display()));
        return out;
    };
    let Some(map) = servers.as_object() else {
        out.errors.push(format!("{}: `mcpServers` must be an object of servers", path.display()));
        return out;
    };
    for (name, entry) in map {
        let mut entry = entry.clone();
        // As Claude Code users write it: keys octo does not use (`autoApprove`, `oauth`, …) are
        // a notice, not a reason to drop the server; `disabled: true` keeps it off.
        let mut disabled = None;
        if let Some(obj) = entry.as_object_mut() {
            disabled = obj.remove("disabled").and_then(|v| v.as_bool());
            let unknown: Vec<String> =
                obj.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())).cloned().collect();
            for k in &unknown {
                obj.remove(k);
            }
            if !unknown.is_empty() {
                out.errors.push(format!(
                    "{}: mcpServers.{name}: {} not used by octo; ignored",
                    path.display(),
                    unknown.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        match serde_json::from_value::<ServerSpec>(entry) {
            Ok(mut spec) => {
                if disabled == Some(true) {
                    spec.enabled = Some(false);
                }
                out.servers.push((name.clone(), spec));
            }
            Err(e) => out.errors.push(format!("{}: mcpServers.{name}: {e}", path.display())),
        }
    }
    out
}

/// The keys of a server entry that [`ServerSpec`] reads (with their aliases).
const KNOWN_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "bearer_token_env",
    "bearerTokenEnv",
    "oauth",
    "enabled",
    "startup_timeout",
    "startupTimeout",
    "call_timeout",
    "callTimeout",
    "timeout",
    "tools",
    "enabledTools",
    "disabled_tools",
    "disabledTools",
];

#[cfg(test)]
mod tests;
