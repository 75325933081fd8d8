//! The launcher: one call from "a front end wants a session" to a ready [`Session`].
//!
//! It owns what every front end would otherwise have to know: octo's home layout ([`Home`]),
//! which key store the process uses, where the workspace is, how `-c` finds a saved session, and
//! how configuration, credentials and options become a session. The CLI's one-shot runs, its REPL
//! and its subcommands call it; a server or a chat bridge calls the same.
//!
//! ```no_run
//! use octo_app::{Launch, Launcher};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let launcher = Launcher::from_env();
//! let session = launcher.start(Launch::default())?; // the current directory, the configured model
//! let summary = session.run("list the crates of this workspace").await?;
//! println!("{}", summary.answer);
//! # Ok(())
//! # }
//! ```

use crate::config::{process_env, Config, ConfigError, EnvLookup, Overrides};
use crate::credentials::{CredentialStore, KeyStore};
use crate::home::Home;
use crate::session::{Session, SessionError, SessionOptions};
use octo_session::{Found, SessionStore, StoreError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// How a process reads its environment variables.
pub type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Which conversation a launch continues.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Resume {
    /// A new one.
    #[default]
    New,
    /// The one of this workspace that `-c` names: `last`, an id prefix or title words.
    Find(String),
    /// This exact id.
    Id(String),
}

/// What to launch. Unset fields come from the configuration.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// The workspace (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// Values given on the command line.
    pub overrides: Overrides,
    /// Which conversation to continue.
    pub resume: Resume,
    /// Everything else about the session (its `workspace` and `resume` are set by the launcher).
    pub options: SessionOptions,
}

/// Why a launch failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The workspace is not a usable directory.
    #[error("{0}")]
    Workspace(String),
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The session could not start.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The saved sessions could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Several saved sessions match.
    #[error("several sessions match `{query}`:\n{}\nGive a longer id prefix.", .lines.join("\n"))]
    SeveralSessions {
        /// What was asked for.
        query: String,
        /// One line per match.
        lines: Vec<String>,
    },
    /// No saved session of this workspace matches.
    #[error("no session of this directory matches `{0}`; `octo sessions` lists them")]
    NoSession(String),
    /// This workspace has no saved session yet.
    #[error("there is no saved session in this directory yet")]
    NoSessionYet,
    /// The session asked for belongs to another workspace.
    #[error("session {id} belongs to {dir}; continue it there (cd {dir} && octo -c={id})")]
    OtherDirectory {
        /// The session.
        id: String,
        /// Its workspace.
        dir: String,
    },
}

impl LaunchError {
    /// Whether the user must fix how octo was called or configured (as opposed to a failure).
    pub fn is_usage(&self) -> bool {
        match self {
            Self::Session(e) => e.is_usage(),
            Self::Store(_) => false,
            _ => true,
        }
    }

    /// Whether nothing is configured at all (no endpoint chosen and no known key set): a first
    /// run, for which front ends offer `octo setup`.
    pub fn is_unconfigured(&self) -> bool {
        matches!(self, Self::Session(SessionError::Endpoint(crate::factory::EndpointError::NoEndpoint(_))))
    }

    /// Whether the session to continue is open in another octo process.
    pub fn is_in_use(&self) -> bool {
        matches!(self, Self::Session(SessionError::Store(StoreError::InUse { .. })))
    }
}

/// Builds sessions the way every front end should. Cheap to clone.
#[derive(Clone)]
pub struct Launcher {
    home: Home,
    env: Env,
    keys: KeyStore,
    store: Arc<dyn CredentialStore>,
    /// The endpoint and model every session starts on unless its launch names its own (`octo
    /// --endpoint x serve`).
    /// What a launch leaves unset is taken from here (`octo --sandbox x serve`: every session).
    defaults: Overrides,
    /// Every session logs its events (`octo --log-events serve`).
    log_events: bool,
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher").field("home", &self.home).field("keys", &self.keys).finish()
    }
}

impl Launcher {
    /// The launcher of this process: `OCTO_HOME` (or `~/.octo`), the process environment, and
    /// the key store it names (`OCTO_KEYRING_FILE`, `OCTO_NO_KEYRING`, else the OS keyring —
    /// or `keys.json` in octo's home when `octo setup` had to keep the key there because the
    /// machine has no keyring service).
    pub fn from_env() -> Self {
        // Set-but-empty counts for OCTO_NO_KEYRING, so this lookup keeps empty values.
        let mut keys =
            KeyStore::from_env(&|k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()));
        let home = Home::from_env();
        if keys == KeyStore::OsKeyring && home.key_file().is_file() {
            keys = KeyStore::File(home.key_file());
        }
        let store = keys.open();
        Self {
            home,
            env: Arc::new(process_env),
            keys,
            store,
            defaults: Overrides::default(),
            log_events: false,
        }
    }

    /// A launcher with everything given (tests, embedding).
    pub fn new(home: Home, keys: KeyStore, store: Arc<dyn CredentialStore>, env: Env) -> Self {
        Self { home, env, keys, store, defaults: Overrides::default(), log_events: false }
    }

    /// The same launcher, whose sessions start on `endpoint` and `model` (each when given)
    /// unless a launch names its own: a server's or a bridge's sessions, started with `octo
    /// --endpoint x serve`.
    pub fn with_model(mut self, endpoint: Option<String>, model: Option<String>) -> Self {
        (self.defaults.endpoint, self.defaults.model) = (endpoint, model);
        self
    }

    /// Every session it starts takes what its launch leaves unset from `defaults` (the endpoint
    /// and model as a pair), and logs its events when `log_events`: the top-level flags of
    /// `octo … serve`.
    pub fn with_defaults(mut self, defaults: Overrides, log_events: bool) -> Self {
        self.defaults = defaults;
        self.log_events = log_events;
        self
    }

    /// octo's home directory.
    pub fn home(&self) -> &Home {
        &self.home
    }

    /// How environment variables are read.
    pub fn env(&self) -> EnvLookup<'_> {
        self.env.as_ref()
    }

    /// The key store.
    pub fn credentials(&self) -> &dyn CredentialStore {
        self.store.as_ref()
    }

    /// Which key store it is.
    pub fn key_store(&self) -> &KeyStore {
        &self.keys
    }

    /// The workspace: `dir`, or the current directory, which must be a directory; canonical.
    pub fn workspace(&self, dir: Option<&Path>) -> Result<PathBuf, LaunchError> {
        let ws = match dir {
            Some(w) => w.to_path_buf(),
            None => std::env::current_dir()
                .map_err(|e| LaunchError::Workspace(format!("cannot read the current directory: {e}")))?,
        };
        if !ws.is_dir() {
            return Err(LaunchError::Workspace(format!("the workspace {} is not a directory", ws.display())));
        }
        Ok(ws.canonicalize().unwrap_or(ws))
    }

    /// The configuration for `workspace`.
    pub fn config(&self, workspace: &Path, overrides: &Overrides) -> Result<Config, LaunchError> {
        Ok(Config::load(self.home.root(), workspace, self.env(), overrides)?)
    }

    /// The saved sessions.
    pub fn sessions(&self) -> SessionStore {
        SessionStore::new(self.home.sessions())
    }

    /// The id of the session of `workspace` that `query` names (`last`, an id prefix, title
    /// words); explains several matches, none, or a match that belongs to another directory.
    pub fn find_session(&self, query: &str, workspace: &Path) -> Result<String, LaunchError> {
        let store = self.sessions();
        match store.find(query, Some(workspace))? {
            Found::One(s) => Ok(s.id),
            Found::Several(list) => {
                let now = octo_session::now();
                Err(LaunchError::SeveralSessions {
                    query: query.to_owned(),
                    lines: list.iter().map(|s| format!("  {}", s.line(now))).collect(),
                })
            }
            Found::None => match store.find(query, None)? {
                Found::One(s) => {
                    Err(LaunchError::OtherDirectory { id: s.id, dir: s.cwd.display().to_string() })
                }
                _ if query == "last" => Err(LaunchError::NoSessionYet),
                _ => Err(LaunchError::NoSession(query.to_owned())),
            },
        }
    }

    /// Builds a ready session in one step: workspace, configuration, the session to continue,
    /// credentials, tools, permissions and prompt. Must be called inside a Tokio runtime.
    pub fn start(&self, launch: Launch) -> Result<Session, LaunchError> {
        self.start_with_servers(launch, Vec::new())
    }

    /// [`Launcher::start`], with MCP servers the user supplied through the front end (an editor's
    /// `mcpServers`): they run as the user's own do, replacing configured ones of the same name.
    pub fn start_with_servers(
        &self,
        launch: Launch,
        servers: Vec<(String, octo_mcp::ServerSpec)>,
    ) -> Result<Session, LaunchError> {
        let ws = self.workspace(launch.workspace.as_deref())?;
        let resume = match launch.resume {
            Resume::New => None,
            Resume::Id(id) => Some(id),
            Resume::Find(q) => Some(self.find_session(&q, &ws)?),
        };
        let overrides = self.with_defaults_of(launch.overrides);
        let mut config = self.config(&ws, &overrides)?;
        if let Some(notice) = self.home.secure() {
            config.warnings.push(notice);
        }
        for (name, spec) in servers {
            config.mcp_servers.retain(|s| s.name != name);
            config.mcp_servers.push(octo_mcp::ServerConfig { name, spec, origin: octo_mcp::Origin::User });
        }
        let log_events = launch.options.log_events || self.log_events;
        let options = SessionOptions { workspace: Some(ws), resume, log_events, ..launch.options };
        Ok(Session::start(config, options, self.credentials(), self.env())?)
    }

    /// `o` with what it leaves unset taken from the launcher's defaults.
    fn with_defaults_of(&self, mut o: Overrides) -> Overrides {
        let d = &self.defaults;
        if o.endpoint.is_none() && o.model.is_none() {
            (o.endpoint, o.model) = (d.endpoint.clone(), d.model.clone());
        }
        o.permission_mode = o.permission_mode.or_else(|| d.permission_mode.clone());
        o.sandbox = o.sandbox.or_else(|| d.sandbox.clone());
        o.max_turns = o.max_turns.or(d.max_turns);
        o.reasoning_effort = o.reasoning_effort.or_else(|| d.reasoning_effort.clone());
        o.max_tokens = o.max_tokens.or(d.max_tokens);
        o.max_budget_usd = o.max_budget_usd.or_else(|| d.max_budget_usd.clone());
        if o.allowed_tools.is_empty() {
            o.allowed_tools = d.allowed_tools.clone();
        }
        if o.disallowed_tools.is_empty() {
            o.disallowed_tools = d.disallowed_tools.clone();
        }
        if o.plugin_dirs.is_empty() {
            o.plugin_dirs = d.plugin_dirs.clone();
        }
        o
    }
}
