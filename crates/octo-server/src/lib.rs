//! # octo-server
//!
//! `octo serve`: octo over HTTP, for a browser (the embedded web UI), a phone on the same
//! network, or another program. A front end like the CLI: it reaches models only through
//! `octo-app`'s [`octo_app::Launcher`] and renders the same [`octo_app::AgentEvent`]s.
//!
//! - **API** (JSON under `/api/`, described in `dev-docs/server.md` and at `/api/openapi.json`):
//!   sessions (list, create in a workspace, resume, delete), prompts (queued while a turn runs),
//!   abort, approvals, answers, model and mode, history, status with usage and cost.
//! - **Live events** over Server-Sent Events (`/api/sessions/{id}/events`) and WebSocket
//!   (`/api/sessions/{id}/ws`), each numbered: a client that reconnects with `Last-Event-ID`
//!   (or `?since=N`) gets everything it missed.
//! - **Security**: a random token (created at first start in `~/.octo/server-token`, 0600) on
//!   every request — a bearer header, or the cookie a one-time login link sets; Host and Origin
//!   checked (no DNS rebinding, no cross-site requests); a non-loopback address only with
//!   `allow_remote`; workspaces only under configured roots; bodies capped.
//! - **Web UI**: static files compiled in (plain JavaScript and CSS, no build step).
//!
//! **Layer:** front end. Depends on `octo-app` only.

mod api;
mod auth;
mod hub;
mod login;
mod openapi;
mod state;
mod web;

pub use auth::{load_or_create_token, TOKEN_FILE};
pub use hub::Hub;
pub use login::{Logins, LOGIN_LINK_LIFETIME};
pub use openapi::ROUTES;
pub use state::AppState;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// How `octo serve` runs.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Whether a non-loopback address is allowed.
    pub allow_remote: bool,
    /// The directories sessions may work in (a workspace must be one of them or inside one).
    pub roots: Vec<PathBuf>,
    /// Run only the chat-app bridges, without the HTTP server.
    pub channels_only: bool,
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Listening on another machine's reach was not allowed.
    #[error("{0} is not a loopback address: other machines could reach octo. Pass --allow-remote to allow it (the access token is still required)")]
    Remote(SocketAddr),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The token file could not be read or written.
    #[error("the access token: {0}")]
    Token(String),
    /// Serving failed.
    #[error("the server failed: {0}")]
    Serve(std::io::Error),
}

/// The whole application: API, events, web UI, behind the guard.
pub fn router(state: Arc<AppState>) -> axum::Router {
    api::routes()
        .merge(web::routes())
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), auth::guard))
        .layer(axum::extract::DefaultBodyLimit::max(state::MAX_BODY))
        .with_state(state)
}

/// The listener with Nagle's algorithm off on every connection: an event is written at once,
/// not held back waiting for the client's acknowledgement (which delays small writes by ~40 ms).
pub fn no_delay(listener: tokio::net::TcpListener) -> impl axum::serve::Listener<Addr = SocketAddr> {
    use axum::serve::ListenerExt;
    listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    })
}

/// Serves `state` on `listener` until the task is dropped (tests, benchmarks, embedding).
pub async fn serve_on(listener: tokio::net::TcpListener, state: Arc<AppState>) -> std::io::Result<()> {
    axum::serve(no_delay(listener), router(state)).await
}

/// The Host values a loopback server answers to.
pub fn loopback_hosts(addr: SocketAddr) -> Vec<String> {
    let p = addr.port();
    vec![format!("127.0.0.1:{p}"), format!("localhost:{p}"), format!("[::1]:{p}")]
}

/// Runs the server until SIGINT or SIGTERM; `ready` receives the login link once it listens.
/// Running turns are cancelled at shutdown; sessions are saved as they go.
pub async fn serve(
    launcher: octo_app::Launcher,
    options: ServeOptions,
    ready: impl FnOnce(&str),
) -> Result<(), ServerError> {
    let bridges = start_channels(&launcher, &options).await;
    if options.channels_only {
        if bridges == 0 {
            return Err(ServerError::Token(
                "no chat channel started (see the messages above, and [channels] in ~/.octo/config.toml)"
                    .into(),
            ));
        }
        shutdown().await;
        return Ok(());
    }
    if !options.listen.ip().is_loopback() && !options.allow_remote {
        return Err(ServerError::Remote(options.listen));
    }
    let token =
        load_or_create_token(launcher.home().root()).map_err(|e| ServerError::Token(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|source| ServerError::Bind { addr: options.listen, source })?;
    let addr = listener.local_addr().map_err(ServerError::Serve)?;
    let hosts = if options.listen.ip().is_loopback() { loopback_hosts(addr) } else { Vec::new() };
    let state = Arc::new(AppState {
        hub: Hub::new(launcher),
        token,
        hosts,
        roots: options.roots,
        logins: Logins::default(),
    });
    let shown =
        if addr.ip().is_unspecified() { SocketAddr::from(([127, 0, 0, 1], addr.port())) } else { addr };
    let code = state.logins.new_code().map_err(|e| ServerError::Token(e.to_string()))?;
    ready(&format!("http://{shown}/login?code={code}"));
    let app = router(Arc::clone(&state));
    // A signal starts a graceful shutdown; open event streams (a browser tab) never end by
    // themselves, so after a short grace the server stops anyway.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut graceful = stop_rx.clone();
    let serve = axum::serve(no_delay(listener), app).with_graceful_shutdown(async move {
        let _ = graceful.wait_for(|s| *s).await;
    });
    let result = tokio::select! {
        r = serve => r,
        () = async {
            shutdown().await;
            let _ = stop_tx.send(true);
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => Ok(()),
    };
    drop(stop_rx);
    state.hub.shutdown();
    result.map_err(ServerError::Serve)
}

/// Starts the configured chat-app bridges; how many started. One that cannot start (no token,
/// a token the platform refuses) is named on stderr and the others go on.
async fn start_channels(launcher: &octo_app::Launcher, options: &ServeOptions) -> usize {
    let workspace = options.roots.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let config = match launcher.config(&workspace, &octo_app::config::Overrides::default()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("octo serve: chat channels not started: {e}");
            return 0;
        }
    };
    let mut started = 0;
    for spec in config.channels {
        let name = spec.name.clone();
        let platform = match octo_channels::open(&spec, launcher).await {
            Ok((platform, who)) => {
                eprintln!("octo serve: channel `{name}` is {who}");
                platform
            }
            Err(e) => {
                eprintln!("octo serve: channel `{name}` not started: {e}");
                continue;
            }
        };
        let config = octo_channels::BridgeConfig {
            name: name.clone(),
            allow: spec.allow,
            workspace: spec.workspace.unwrap_or_else(|| workspace.clone()),
            mode: spec.mode,
            edit_every: std::time::Duration::from_millis(1200),
        };
        let bridge = octo_channels::Bridge::new(platform, Arc::new(launcher.clone()), config);
        tokio::spawn(async move {
            if let Err(e) = bridge.run().await {
                eprintln!("octo serve: channel `{name}` stopped: {e}");
            }
        });
        started += 1;
    }
    started
}

/// How long a signalled server waits for open connections (event streams) before it stops.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(1500);

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
