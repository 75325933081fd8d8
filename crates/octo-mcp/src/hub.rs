//! Every MCP server of a session: started in parallel in the background, supervised (a stdio
//! server that exits is started again on its next use, with backoff, a few times), reported once
//! when it fails, and offered to the agent as one tool source whose generation changes when a
//! server's tools do.

use crate::client::{connect, Connection, Signals, StderrTail};
use crate::config::{Origin, ServerConfig, Transport};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Restarts after the first start before a server is given up on.
const MAX_RESTARTS: usize = 3;

/// The window [`MAX_RESTARTS`] counts in: a server that crashes now and then, each restart
/// working, is started again; one that crashes again and again is given up.
const RESTART_WINDOW: Duration = Duration::from_secs(600);

/// Where a server is.
#[derive(Clone)]
pub(crate) enum State {
    /// Configured but turned off.
    Disabled,
    /// A project's server the user has not approved (yet).
    NeedsApproval,
    /// Starting (or restarting).
    Starting,
    /// Up.
    Ready(Arc<Connection>),
    /// Exited; started again on the next use.
    Exited(String),
    /// Given up on; the reason names it.
    Failed(String),
}

impl State {
    fn label(&self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::NeedsApproval => "needs approval",
            Self::Starting => "starting",
            Self::Ready(_) => "ready",
            Self::Exited(_) => "exited",
            Self::Failed(_) => "failed",
        }
    }
}

/// One server.
pub(crate) struct Server {
    pub config: ServerConfig,
    pub transport: Result<Transport, crate::error::SpecError>,
    pub state: Mutex<State>,
    pub signals: Arc<Signals>,
    pub stderr: StderrTail,
    /// When it was restarted, within the last [`RESTART_WINDOW`].
    restarts: Mutex<Vec<std::time::Instant>>,
    /// Serialises starts.
    starting: tokio::sync::Mutex<()>,
    /// The hub's generation, bumped when this server's tools change.
    generation: Arc<AtomicU64>,
    /// Its tools as last listed: offered while it is down between restarts.
    pub known_tools: Mutex<Vec<rmcp::model::Tool>>,
    /// Where its tool list is kept between sessions, when the hub has a cache.
    cache_file: std::sync::OnceLock<PathBuf>,
    /// Its tools are known from the last session's list while it starts.
    pub cached: std::sync::atomic::AtomicBool,
    /// That list's server offers resources.
    pub cached_resources: std::sync::atomic::AtomicBool,
}

impl Server {
    pub fn state(&self) -> State {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn set(&self, s: State) {
        *self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = s;
        self.signals.notify.notify_waiters();
    }
}

/// A server as `octo mcp list` and `/mcp` show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// `ready`, `starting`, `failed`, `exited`, `disabled`, `needs approval`.
    pub state: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// What it runs or reaches.
    pub target: String,
    /// Its tools (the names the model sees).
    pub tools: Vec<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Where it is configured.
    pub origin: Origin,
    /// The fingerprint its approval covers.
    pub fingerprint: String,
    /// The rest of what an approval covers, as written: its `env` (names and values), `cwd`
    /// and header names; empty when it has none.
    pub definition: String,
}

/// The servers of a session.
pub struct McpHub {
    pub(crate) servers: Vec<Arc<Server>>,
    pub(crate) workspace: PathBuf,
    generation: Arc<AtomicU64>,
    notices: Mutex<Vec<String>>,
    /// Names handed out, so a tool keeps its name while the session lasts.
    pub(crate) names: Mutex<std::collections::HashMap<(String, String), String>>,
    /// Where logins' tokens are (set by the front end before [`McpHub::start`]).
    secrets: std::sync::OnceLock<Arc<dyn crate::oauth::SecretStore>>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub").field("servers", &self.servers.len()).finish()
    }
}

impl McpHub {
    /// The servers of `configs` (later entries of the same name replace earlier ones),
    /// variables expanded with `env`; `approved` says which of a project's servers the user
    /// already approved. Nothing starts until [`McpHub::start`].
    pub fn new(
        configs: Vec<ServerConfig>,
        workspace: PathBuf,
        env: crate::config::Env<'_>,
        approved: &dyn Fn(&ServerConfig) -> bool,
    ) -> Arc<Self> {
        let mut by_name: Vec<ServerConfig> = Vec::new();
        for c in configs {
            by_name.retain(|o| o.name != c.name);
            by_name.push(c);
        }
        by_name.sort_by(|a, b| a.name.cmp(&b.name));
        let generation = Arc::new(AtomicU64::new(1));
        let servers = by_name
            .into_iter()
            .map(|config| {
                let transport = config.spec.transport(env);
                let state = if !config.spec.enabled() {
                    State::Disabled
                } else if config.origin.needs_approval() && !approved(&config) {
                    State::NeedsApproval
                } else if let Err(e) = &transport {
                    State::Failed(e.to_string())
                } else {
                    State::Starting
                };
                Arc::new(Server {
                    config,
                    transport,
                    state: Mutex::new(state),
                    signals: Arc::new(Signals::default()),
                    stderr: StderrTail::default(),
                    restarts: Mutex::new(Vec::new()),
                    starting: tokio::sync::Mutex::new(()),
                    generation: Arc::clone(&generation),
                    known_tools: Mutex::new(Vec::new()),
                    cache_file: std::sync::OnceLock::new(),
                    cached: std::sync::atomic::AtomicBool::new(false),
                    cached_resources: std::sync::atomic::AtomicBool::new(false),
                })
            })
            .collect();
        Arc::new(Self {
            servers,
            workspace,
            generation,
            notices: Mutex::new(Vec::new()),
            names: Mutex::new(std::collections::HashMap::new()),
            secrets: std::sync::OnceLock::new(),
        })
    }

    /// The key store that OAuth logins (`octo mcp login`) and stored bearer tokens are read
    /// from and refreshed tokens written to. Without it, HTTP servers get only the tokens their
    /// configuration names. Set it before [`McpHub::start`]; a second call changes nothing.
    pub fn use_secrets(&self, store: Arc<dyn crate::oauth::SecretStore>) {
        let _ = self.secrets.set(store);
    }

    /// The key store set with [`McpHub::use_secrets`].
    pub(crate) fn secrets(&self) -> Option<&Arc<dyn crate::oauth::SecretStore>> {
        self.secrets.get()
    }

    /// Keeps servers' tool lists in `dir` between sessions: a server still starting is listed
    /// from its last list (the first request does not wait for it), and each start's list is
    /// kept. Set it before [`McpHub::start`]; a second call changes nothing.
    pub fn use_tool_cache(&self, dir: &std::path::Path) {
        for s in &self.servers {
            let file = crate::tool_cache::file(dir, &s.config.spec.fingerprint(), &self.workspace);
            if matches!(s.state(), State::Starting) {
                if let Some((tools, resources)) = crate::tool_cache::load(&file) {
                    *s.known_tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
                    s.cached_resources.store(resources, Ordering::SeqCst);
                    s.cached.store(true, Ordering::SeqCst);
                }
            }
            let _ = s.cache_file.set(file);
        }
    }

    /// Who answers a server's question (elicitation) when no running call's front end can (a
    /// program embedding the hub); without one such questions are declined and reported. Set
    /// it before [`McpHub::start`]; a second call changes nothing.
    pub fn use_elicitor(&self, elicitor: Arc<dyn crate::elicit::Elicitor>) {
        for s in &self.servers {
            let _ = s.signals.asking.elicitor.set(Arc::clone(&elicitor));
        }
    }

    /// Starts every server that may start, in parallel, in the background. Must be called inside
    /// a Tokio runtime.
    pub fn start(self: &Arc<Self>) {
        for s in &self.servers {
            if let State::Failed(why) = s.state() {
                self.notice(&s.config.name, &why);
            }
            if matches!(s.state(), State::Starting) {
                let hub = Arc::clone(self);
                let server = Arc::clone(s);
                tokio::spawn(async move {
                    let _ = hub.launch(&server).await;
                });
            }
        }
    }

    fn notice(&self, server: &str, why: &str) {
        self.notices
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(format!("MCP server `{server}` is not available: {why}"));
    }

    /// Problems to tell the user, each once.
    pub fn take_notices(&self) -> Vec<String> {
        let mut out =
            std::mem::take(&mut *self.notices.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for s in &self.servers {
            out.append(
                &mut s.signals.asking.unanswered.lock().unwrap_or_else(std::sync::PoisonError::into_inner),
            );
        }
        out
    }

    /// Starts (or restarts) `server`; returns its connection.
    pub(crate) async fn launch(&self, server: &Arc<Server>) -> Result<Arc<Connection>, String> {
        let _one = server.starting.lock().await;
        if let State::Ready(c) = server.state() {
            return Ok(c);
        }
        let transport = server.transport.clone().map_err(|e| e.to_string())?;
        server.set(State::Starting);
        let timeout = server.config.spec.startup_timeout();
        let access = crate::client::Access { server: &server.config.name, secrets: self.secrets.get() };
        match connect(
            &transport,
            access,
            &self.workspace,
            timeout,
            Arc::clone(&server.signals),
            server.stderr.clone(),
        )
        .await
        {
            Ok(conn) => {
                let conn = Arc::new(conn);
                *server.known_tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = conn.tools();
                server.cached.store(false, Ordering::SeqCst);
                if let Some(file) = server.cache_file.get() {
                    let info = conn
                        .service
                        .peer_info()
                        .and_then(|i| i.server_info.as_ref().map(|i| format!("{} {}", i.name, i.version)));
                    crate::tool_cache::save(file, &info.unwrap_or_default(), &conn.tools(), conn.resources);
                }
                // The generation moves first: whoever sees the server ready sees the new tools.
                self.generation.fetch_add(1, Ordering::SeqCst);
                server.set(State::Ready(Arc::clone(&conn)));
                watch(server, &conn);
                Ok(conn)
            }
            Err(why) => {
                self.notice(&server.config.name, &why);
                self.generation.fetch_add(1, Ordering::SeqCst);
                server.set(State::Failed(why.clone()));
                Err(why)
            }
        }
    }

    /// A server's connection for a call: starts it again when it exited (with backoff, at most
    /// a few times), waits while it starts.
    pub(crate) async fn connection(&self, server: &Arc<Server>) -> Result<Arc<Connection>, String> {
        loop {
            match server.state() {
                State::Ready(c) if !c.service.is_closed() => return Ok(c),
                State::Ready(_) | State::Exited(_) => {
                    let n = {
                        let mut recent =
                            server.restarts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        let Some(n) = may_restart(&mut recent, std::time::Instant::now()) else {
                            let why = format!(
                                "it exited {} times within {} minutes and is not started again in this session (a new session starts it){}",
                                MAX_RESTARTS + 1,
                                RESTART_WINDOW.as_secs() / 60,
                                server.stderr.describe()
                            );
                            server.set(State::Failed(why.clone()));
                            return Err(why);
                        };
                        n
                    };
                    tokio::time::sleep(Duration::from_millis(
                        250 * 2u64.pow(u32::try_from(n).unwrap_or(3) - 1),
                    ))
                    .await;
                    return self.launch(server).await;
                }
                State::Starting => {
                    let notified = server.signals.notify.notified();
                    tokio::pin!(notified);
                    notified.as_mut().enable();
                    if !matches!(server.state(), State::Starting) {
                        continue;
                    }
                    if tokio::time::timeout(server.config.spec.startup_timeout(), notified).await.is_err() {
                        return Err("it is still starting".into());
                    }
                }
                State::Failed(why) => return Err(why),
                State::Disabled => return Err("it is disabled".into()),
                State::NeedsApproval => return Err("it has not been approved to run".into()),
            }
        }
    }

    /// Waits until no server is starting (or `max` passed).
    pub async fn wait_ready(&self, max: Duration) {
        self.wait(max, false).await;
    }

    /// Waits until no server is starting whose tools are not known from the last session (or
    /// `max` passed): what the first request needs to list every server.
    pub async fn wait_listable(&self, max: Duration) {
        self.wait(max, true).await;
    }

    async fn wait(&self, max: Duration, cached_will_do: bool) {
        let deadline = tokio::time::Instant::now() + max;
        for s in self.servers.iter().filter(|s| !(cached_will_do && s.cached.load(Ordering::SeqCst))) {
            loop {
                let notified = s.signals.notify.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if !matches!(s.state(), State::Starting) {
                    break;
                }
                if tokio::time::timeout_at(deadline, notified).await.is_err() {
                    return;
                }
            }
        }
    }

    /// Changes whenever the set of tools may have changed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Approves a project's server (the caller remembers the fingerprint) and starts it.
    pub fn approve(self: &Arc<Self>, name: &str) -> bool {
        let Some(s) = self.servers.iter().find(|s| s.config.name == name) else { return false };
        if !matches!(s.state(), State::NeedsApproval) {
            return false;
        }
        match &s.transport {
            Ok(_) => s.set(State::Starting),
            Err(e) => s.set(State::Failed(e.to_string())),
        }
        let hub = Arc::clone(self);
        let server = Arc::clone(s);
        tokio::spawn(async move {
            let _ = hub.launch(&server).await;
        });
        true
    }

    /// The name the model sees for `tool` of `server` (given once, kept for the session).
    pub(crate) fn exposed_name(&self, server: &str, tool: &str) -> String {
        let mut names = self.names.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (server.to_owned(), tool.to_owned());
        if let Some(n) = names.get(&key) {
            return n.clone();
        }
        let mut taken: std::collections::HashSet<String> = names.values().cloned().collect();
        let n = crate::names::tool_name(server, tool, &mut taken);
        names.insert(key, n.clone());
        n
    }

    /// Every server, as it is now.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|s| {
                let state = s.state();
                let error = match &state {
                    State::Failed(w) | State::Exited(w) => Some(w.clone()),
                    _ => None,
                };
                let mut tools: Vec<String> = match &state {
                    State::Ready(c) => c
                        .tools()
                        .iter()
                        .filter(|t| s.config.spec.offers(&t.name))
                        .map(|t| self.exposed_name(&s.config.name, &t.name))
                        .collect(),
                    _ => Vec::new(),
                };
                tools.sort();
                ServerStatus {
                    name: s.config.name.clone(),
                    state: state.label().to_owned(),
                    transport: s.transport.as_ref().map_or("?", Transport::kind).to_owned(),
                    target: s
                        .transport
                        .as_ref()
                        .map_or_else(|e| s.config.spec.as_written(e), Transport::describe),
                    tools,
                    error,
                    origin: s.config.origin,
                    fingerprint: s.config.spec.fingerprint(),
                    definition: s.config.spec.definition(),
                }
            })
            .collect()
    }

    /// Stops every server (and everything it started).
    pub fn shutdown(&self) {
        for s in &self.servers {
            s.set(State::Disabled);
        }
    }
}

/// Follows a live connection: a `tools/list_changed` fetches the list again (the session picks
/// it up between turns); an exit is noted, and the next call starts the server again.
fn watch(server: &Arc<Server>, conn: &Arc<Connection>) {
    let server = Arc::clone(server);
    let conn = Arc::downgrade(conn);
    tokio::spawn(async move {
        loop {
            let notified = server.signals.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let Some(c) = conn.upgrade() else { return };
            if c.service.is_closed() || c.service.peer().is_transport_closed() {
                drop(c);
                server.set(State::Exited(format!("it exited{}", server.stderr.describe())));
                return;
            }
            if server.signals.tools_changed.swap(false, Ordering::SeqCst) {
                let timeout = server.config.spec.startup_timeout();
                if let Ok(Ok(tools)) = tokio::time::timeout(timeout, c.service.list_all_tools()).await {
                    *server.known_tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                        tools.clone();
                    *c.tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
                    server.generation.fetch_add(1, Ordering::SeqCst);
                }
            }
            drop(c);
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
        }
    });
}

/// Whether a server that exited at `now` is started again: yes while it has been restarted
/// fewer than [`MAX_RESTARTS`] times within the last [`RESTART_WINDOW`] (`recent` holds those
/// restarts' times, and gets this one); the count of restarts in the window, this one included.
fn may_restart(recent: &mut Vec<std::time::Instant>, now: std::time::Instant) -> Option<usize> {
    recent.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
    if recent.len() >= MAX_RESTARTS {
        return None;
    }
    recent.push(now);
    Some(recent.len())
}

#[cfg(test)]
mod restart_tests;
