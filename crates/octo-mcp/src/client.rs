//! One connection to an MCP server over `rmcp`: a child process in its own process group (so
//! everything it starts can be killed with it), its stderr kept as a short tail for error
//! messages, or a streamable HTTP endpoint on the shared HTTP client. The client handler only
//! listens for `tools/list_changed`.

use crate::config::Transport;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Lines of a server's stderr kept for error messages.
const STDERR_TAIL: usize = 20;
/// The longest message read from a stdio server: big enough that a huge result arrives (and is
/// cut by octo) instead of being dropped, leaving its call without an answer.
const MAX_LINE: usize = 96 * 1024 * 1024;

/// What a connection tells its owner, and what it needs from it.
#[derive(Default)]
pub(crate) struct Signals {
    /// The server said its tools changed.
    pub tools_changed: AtomicBool,
    /// Someone waits for news.
    pub notify: tokio::sync::Notify,
    /// Who answers the server's questions.
    pub asking: crate::elicit::Asking,
}

/// The client side: octo's name, form elicitation, and the list-changed notification.
#[derive(Clone)]
pub(crate) struct Handler {
    server: String,
    signals: Arc<Signals>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_form(rmcp::model::FormElicitationCapability::new()),
        );
        ClientConfig::new(caps, Implementation::new("octo", env!("CARGO_PKG_VERSION")))
    }

    async fn on_tool_list_changed(&self, _cx: NotificationContext<RoleClient>) {
        self.signals.tools_changed.store(true, Ordering::SeqCst);
        self.signals.notify.notify_waiters();
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _cx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(crate::elicit::answer(&self.server, &self.signals.asking, request).await)
    }
}

/// A server's stderr, the last lines of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut q = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if q.len() == STDERR_TAIL {
            q.pop_front();
        }
        q.push_back(line.chars().take(300).collect());
    }

    /// The tail as text to append to an error (empty when the server printed nothing).
    pub fn describe(&self) -> String {
        let q = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if q.is_empty() {
            return String::new();
        }
        let lines: Vec<&str> = q.iter().map(String::as_str).collect();
        format!("; its stderr ended with:\n    {}", lines.join("\n    "))
    }
}

/// A live connection.
pub(crate) struct Connection {
    pub service: RunningService<RoleClient, Handler>,
    /// Its tools, as it last listed them.
    pub tools: Mutex<Vec<Tool>>,
    /// Whether the server offers resources and prompts.
    pub resources: bool,
    pub prompts: bool,
    /// The child's process group (stdio), killed with the connection.
    group: Option<u32>,
    /// The child itself (stdio), reaped when it exits.
    _child: Option<tokio::process::Child>,
}

impl Connection {
    /// Its tools now.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        kill_group(self.group);
    }
}

/// Kills a server's process group (and so whatever it started).
pub(crate) fn kill_group(group: Option<u32>) {
    #[cfg(unix)]
    if let Some(g) = group.and_then(|g| i32::try_from(g).ok()).filter(|g| *g > 1) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(g), nix::sys::signal::Signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = group;
}

/// Why a server could not be used.
fn io_error(command: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("the command `{command}` was not found (is it installed and on PATH?)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("the command `{command}` cannot be run (permission denied)")
        }
        _ => format!("could not start `{command}`: {e}"),
    }
}

/// Connects: starts the process or reaches the URL, initializes, lists the tools — all within
/// `timeout`.
pub(crate) async fn connect(
    transport: &Transport,
    access: Access<'_>,
    workspace: &Path,
    timeout: Duration,
    signals: Arc<Signals>,
    stderr: StderrTail,
) -> Result<Connection, String> {
    let handler = Handler { server: access.server.to_owned(), signals };
    // Until the connection holds it, the server's group is killed if this is given up half-way
    // (octo exiting while the server starts): nothing it started is left running.
    let mut armed = Armed(None);
    let (service, group, child) = match transport {
        Transport::Stdio { command, args, env, cwd } => {
            let cwd = cwd.as_deref().map_or(workspace.to_path_buf(), |c| workspace.join(c));
            let child = spawn(command, args, env, &cwd)?;
            armed.0 = child.id();
            let (service, group, child) = start_stdio(handler, child, timeout, &stderr).await?;
            (service, group, Some(child))
        }
        Transport::Http { .. } => (reach_http(handler, transport, access, timeout).await?, None, None),
    };
    // The capabilities say what to ask for; a server that declares none is asked for its tools
    // anyway (some leave them out), and one that has none answers with an empty list or an
    // error, both of which mean no tools.
    let caps = service.peer_info().map(|i| i.capabilities.clone());
    let declared = caps.as_ref().is_some_and(|c| c.tools.is_some());
    let tools = list_tools(&service, declared, group, timeout, &stderr).await?;
    let resources = caps.as_ref().is_none_or(|c| c.resources.is_some());
    let prompts = caps.as_ref().is_none_or(|c| c.prompts.is_some());
    armed.0 = None;
    Ok(Connection { service, tools: Mutex::new(tools), resources, prompts, group, _child: child })
}

/// A server's process group, killed when this is dropped still holding it.
struct Armed(Option<u32>);

impl Drop for Armed {
    fn drop(&mut self) {
        kill_group(self.0.take());
    }
}

/// What a stdio server inherits from octo's environment: what a process needs to run and find
/// its way (the official SDKs' list, the locale, the temp dir, proxies and extra CA files), no
/// value that looks like a shell function.
const INHERITED_ENV: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    // Windows.
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PATHEXT",
    "COMSPEC",
];

/// The inherited variables that are set.
pub(crate) fn inherited_env() -> Vec<(String, String)> {
    INHERITED_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().filter(|v| !v.starts_with("()")).map(|v| ((*k).to_owned(), v)))
        .collect()
}

/// Starts a stdio server's process in a process group of its own, its standard streams piped.
fn spawn(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Result<tokio::process::Child, String> {
    let mut cmd = tokio::process::Command::new(command);
    // Only a short list of octo's environment, as the official SDKs pass it (never the user's
    // API keys); the server's own `env` is added on top.
    cmd.env_clear().envs(inherited_env()).args(args).envs(env).current_dir(cwd);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.kill_on_drop(true)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    octo_exec::tied::spawn(cmd).map_err(|e| io_error(command, &e))
}

/// Initializes the MCP session with a started stdio server; its process group is killed when
/// that fails.
async fn start_stdio(
    handler: Handler,
    mut child: tokio::process::Child,
    timeout: Duration,
    stderr: &StderrTail,
) -> Result<(RunningService<RoleClient, Handler>, Option<u32>, tokio::process::Child), String> {
    let group = child.id();
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        kill_group(group);
        return Err("its standard streams could not be opened".into());
    };
    let proc = rmcp::transport::async_rw::AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin)
        .with_max_line_length(MAX_LINE);
    if let Some(err) = child.stderr.take() {
        keep_tail(err, stderr.clone());
    }
    match tokio::time::timeout(timeout, handler.serve(proc)).await {
        Ok(Ok(service)) => Ok((service, group, child)),
        Ok(Err(e)) => {
            kill_group(group);
            Err(format!("it did not start: {e}{}", stderr.describe()))
        }
        Err(_) => {
            kill_group(group);
            Err(format!("it did not answer `initialize` within {}s{}", timeout.as_secs(), stderr.describe()))
        }
    }
}

/// Keeps the last lines a server writes to its stderr, in the background.
fn keep_tail(err: tokio::process::ChildStderr, tail: StderrTail) {
    tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(err).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            tail.push(l);
        }
    });
}

/// Who a connection is for: the server's name (in messages and key-store entries) and the key
/// store a login's tokens are in.
#[derive(Clone, Copy)]
pub(crate) struct Access<'a> {
    pub server: &'a str,
    pub secrets: Option<&'a Arc<dyn crate::oauth::SecretStore>>,
}

/// Initializes the MCP session with an HTTP server: streamable HTTP (with the stored OAuth login
/// when there is one, else the configured or stored bearer token), or the older HTTP+SSE
/// transport.
async fn reach_http(
    handler: Handler,
    transport: &Transport,
    access: Access<'_>,
    timeout: Duration,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let Transport::Http { url, headers, bearer, oauth, legacy_sse } = transport else {
        return Err("not an HTTP server".into());
    };
    let http = octo_provider::HttpConfig {
        connect_timeout: timeout.min(Duration::from_secs(10)),
        ..octo_provider::HttpConfig::default()
    };
    let client = octo_provider::build_client(&http).map_err(|e| e.to_string())?;
    let custom = http_headers(headers)?;
    let stored_token =
        || access.secrets.and_then(|s| s.get(&crate::oauth::token_entry(access.server, url)).ok().flatten());
    let bearer = bearer.clone().or_else(stored_token);
    if *legacy_sse {
        let mut h: reqwest::header::HeaderMap = custom.into_iter().collect();
        if let Some(b) = &bearer {
            let v = reqwest::header::HeaderValue::from_str(&format!("Bearer {b}"))
                .map_err(|_| "its bearer token is not a valid header value".to_owned())?;
            h.insert(reqwest::header::AUTHORIZATION, v);
        }
        let t = crate::legacy_sse::open(client, url, h, timeout).await?;
        return serve(handler, t, url, access.server, timeout).await;
    }
    let mut cfg =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
            .custom_headers(custom);
    if let Some(b) = bearer {
        cfg = cfg.auth_header(b);
    } else if oauth.client_credentials {
        let manager = crate::oauth::client_credentials(url, oauth, access.secrets, access.server)
            .await
            .map_err(|e| format!("{url}: getting a token with the client-credentials grant failed: {e}"))?;
        let authed = rmcp::transport::AuthClient::new(crate::session_http::SessionAware(client), manager);
        let t = rmcp::transport::StreamableHttpClientTransport::with_client(authed, cfg);
        return serve(handler, t, url, access.server, timeout).await;
    } else if let Some(store) = access.secrets {
        match crate::oauth::stored(url, oauth, store, access.server).await {
            Ok(Some(manager)) => {
                let authed =
                    rmcp::transport::AuthClient::new(crate::session_http::SessionAware(client), manager);
                let t = rmcp::transport::StreamableHttpClientTransport::with_client(authed, cfg);
                return serve(handler, t, url, access.server, timeout).await;
            }
            Ok(None) => {}
            Err(e) => return Err(crate::explain::stored_login_failure(access.server, &e)),
        }
    }
    let t = rmcp::transport::StreamableHttpClientTransport::with_client(
        crate::session_http::SessionAware(client),
        cfg,
    );
    serve(handler, t, url, access.server, timeout).await
}

/// Starts the MCP session over `transport` within `timeout`; a failure said in words.
async fn serve<T, E, A>(
    handler: Handler,
    transport: T,
    url: &str,
    server: &str,
    timeout: Duration,
) -> Result<RunningService<RoleClient, Handler>, String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, handler.serve(transport)).await {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(crate::explain::init_failure(server, url, &e)),
        Err(_) => Err(format!("{url} did not answer `initialize` within {}s", timeout.as_secs())),
    }
}

/// The configured extra headers, checked to be valid HTTP.
fn http_headers(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    let mut custom = HashMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| format!("header `{k}`: {e}"))?;
        let value = reqwest::header::HeaderValue::from_str(v).map_err(|e| format!("header `{k}`: {e}"))?;
        custom.insert(name, value);
    }
    Ok(custom)
}

/// Lists the server's tools; a server that declared none and fails to list them has none. The
/// process group is killed when listing fails.
async fn list_tools(
    service: &RunningService<RoleClient, Handler>,
    declared: bool,
    group: Option<u32>,
    timeout: Duration,
    stderr: &StderrTail,
) -> Result<Vec<Tool>, String> {
    match tokio::time::timeout(timeout, service.list_all_tools()).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(_)) if !declared => Ok(Vec::new()),
        Ok(Err(e)) => {
            kill_group(group);
            Err(format!("listing its tools failed: {e}{}", stderr.describe()))
        }
        Err(_) => {
            kill_group(group);
            Err(format!("it did not list its tools within {}s", timeout.as_secs()))
        }
    }
}
