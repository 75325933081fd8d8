//! `octo mcp login NAME`: the authorization-code flow with PKCE through the user's browser and
//! a loopback redirect. The server is asked once without a token, so its `WWW-Authenticate`
//! challenge (where its metadata is, which scopes) starts discovery; the client is the
//! pre-registered one of the settings or registers itself; the browser is opened with
//! `$BROWSER` or the platform's opener; the redirect is answered on `localhost` at a free (or
//! the configured) port. An answer whose `state` is not the one sent is refused and the wait
//! goes on; a refusal by the user ends it. The tokens go to the key store.

use crate::oauth::{oauth_entry, OAuthSettings, SecretStore};
use rmcp::transport::auth::{AuthError, AuthorizationRequest, AuthorizationSession};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Why a login did not complete.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoginError {
    /// The server could not be reached.
    #[error("could not reach {url}: {reason}")]
    Unreachable {
        /// The server.
        url: String,
        /// Why.
        reason: String,
    },
    /// Discovery, registration or the token exchange failed.
    #[error("{0}")]
    OAuth(String),
    /// The redirect's port could not be opened.
    #[error("could not listen for the login's redirect on localhost:{port}: {source}")]
    Listen {
        /// The port (0: any).
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// The user (or the authorization server) refused.
    #[error("the authorization server refused the login: {0}")]
    Refused(String),
    /// No answer came in time.
    #[error("no login answer came within {0} s; run the command again to retry")]
    TimedOut(u64),
    /// Nothing can show the address to the user.
    #[error("no browser to open and no terminal to show the address in: set $BROWSER, or run `octo mcp login` in a terminal")]
    NoBrowser,
}

fn oauth(e: AuthError) -> LoginError {
    LoginError::OAuth(match e {
        AuthError::RegistrationFailed(m) => format!(
            "{m} (a server without dynamic registration needs a pre-registered client: set `oauth.client_id` for it)"
        ),
        other => other.to_string(),
    })
}

/// What a login needs.
pub struct Login<'a> {
    /// The server's name (the key-store entry is by name and URL).
    pub server: &'a str,
    /// Its MCP endpoint.
    pub url: &'a str,
    /// Its `oauth` settings.
    pub settings: &'a OAuthSettings,
    /// Where the tokens go.
    pub store: Arc<dyn SecretStore>,
    /// Opens the address in a browser; `false` when none could be opened.
    pub open: &'a (dyn Fn(&str) -> bool + Sync),
    /// Tells the user something.
    pub say: &'a (dyn Fn(&str) + Sync),
    /// Whether someone can read [`Login::say`] (a terminal): without one and without a browser
    /// the login does not wait.
    pub attended: bool,
    /// How long to wait for the browser's answer.
    pub wait: Duration,
}

/// Logs in to the server; the tokens are in the key store afterwards.
pub async fn login(l: Login<'_>) -> Result<(), LoginError> {
    // A call refused for its token's scope left its challenge: this login asks for that scope.
    let step_up = l.store.get(&crate::oauth::challenge_entry(l.server, l.url)).ok().flatten();
    let challenge = match step_up {
        Some(c) => Some(c),
        None => probe(l.url).await?,
    };
    let mut manager =
        crate::oauth::manager(l.url, l.settings, Arc::clone(&l.store), oauth_entry(l.server, l.url))
            .await
            .map_err(oauth)?;
    if l.settings.metadata_url.is_none() {
        let found = manager.resolve_metadata_from_challenge(challenge.as_deref()).await.map_err(oauth)?;
        manager.set_metadata(found.metadata);
    }
    let port = l.settings.callback_port.unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|source| LoginError::Listen { port, source })?;
    let port = listener.local_addr().map_err(|source| LoginError::Listen { port, source })?.port();
    let redirect = format!("http://localhost:{port}/callback");
    let mut request = AuthorizationRequest::new(redirect).with_client_name("octo");
    if let Some(c) = &challenge {
        request = request.with_challenge(c.clone());
    }
    if !l.settings.scopes.is_empty() {
        request = request.with_scopes(l.settings.scopes.iter().cloned());
    }
    if let Some(id) = &l.settings.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &l.settings.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, e)| oauth(e))?;
    let address = session.get_authorization_url().to_owned();
    let state = query(&address, "state").unwrap_or_default();
    if (l.open)(&address) {
        (l.say)(&format!(
            "Opened your browser to log in to `{}`. If it did not open, visit:\n  {address}",
            l.server
        ));
    } else if l.attended {
        (l.say)(&format!("Open this address in your browser to log in to `{}`:\n  {address}", l.server));
    } else {
        return Err(LoginError::NoBrowser);
    }
    let answer = tokio::time::timeout(l.wait, answer(&listener, &state, &session, l.say)).await;
    answer.map_err(|_| LoginError::TimedOut(l.wait.as_secs()))??;
    let _ = l.store.remove(&crate::oauth::challenge_entry(l.server, l.url));
    Ok(())
}

/// Asks the server once without a token: its 401 carries the challenge discovery starts from.
async fn probe(url: &str) -> Result<Option<String>, LoginError> {
    let client = octo_provider::http::builder()
        .and_then(|b| {
            b.connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(30))
                .build()
                .map_err(|e| octo_provider::SetupError::Client(e.to_string()))
        })
        .map_err(|e| LoginError::Unreachable { url: url.to_owned(), reason: e.to_string() })?;
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "octo", "version": env!("CARGO_PKG_VERSION")}}});
    let resp = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .map_err(|e| LoginError::Unreachable {
            url: url.to_owned(),
            reason: crate::explain::reqwest_reason(&e),
        })?;
    Ok(resp
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
        .map(str::to_owned))
}

fn query(address: &str, key: &str) -> Option<String> {
    let u = url::Url::parse(address).ok()?;
    u.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
}

/// Answers the browser's requests until one completes the login (or refuses it).
async fn answer(
    listener: &tokio::net::TcpListener,
    state: &str,
    session: &AuthorizationSession,
    say: &(dyn Fn(&str) + Sync),
) -> Result<(), LoginError> {
    loop {
        let Ok((mut conn, _)) = listener.accept().await else { continue };
        let Some(target) = read_target(&mut conn).await else { continue };
        let Some(path) = target.strip_prefix("/callback") else {
            reply(&mut conn, 404, "Not the login's address.").await;
            continue;
        };
        let full = format!("http://localhost/callback{path}");
        if let Some(error) = query(&full, "error") {
            let why = query(&full, "error_description").map_or(error.clone(), |d| format!("{error}: {d}"));
            reply(&mut conn, 400, &format!("The login was refused ({why}). You can close this tab.")).await;
            return Err(LoginError::Refused(why));
        }
        let (Some(code), Some(got)) = (query(&full, "code"), query(&full, "state")) else {
            reply(&mut conn, 400, "This answer has no code or state.").await;
            continue;
        };
        if got != state {
            reply(&mut conn, 400, "This answer does not belong to the login octo started; it was ignored.")
                .await;
            say("A login answer with the wrong state was refused; still waiting for the right one.");
            continue;
        }
        let issuer = query(&full, "iss");
        return match session.handle_callback_with_issuer(&code, &got, issuer.as_deref()).await {
            Ok(_) => {
                reply(&mut conn, 200, "octo is logged in. You can close this tab.").await;
                Ok(())
            }
            Err(e) => {
                reply(&mut conn, 400, "The login could not be completed; see the terminal.").await;
                Err(oauth(e))
            }
        };
    }
}

/// The request target of an HTTP request (`GET /callback?… HTTP/1.1`), read within 10 s.
async fn read_target(conn: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
            let n = conn.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.ok()??;
    let head = String::from_utf8_lossy(&buf);
    let mut first = head.lines().next()?.split_whitespace();
    (first.next()? == "GET").then_some(())?;
    first.next().map(str::to_owned)
}

async fn reply(conn: &mut tokio::net::TcpStream, status: u16, text: &str) {
    let body = format!("<!doctype html><meta charset=utf-8><title>octo</title><p>{text}</p>\n");
    let reason = if status == 200 {
        "OK"
    } else if status == 404 {
        "Not Found"
    } else {
        "Bad Request"
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes()).await;
    let _ = conn.write_all(body.as_bytes()).await;
    let _ = conn.shutdown().await;
}

/// Opens `address` with `$BROWSER` (a `:`-separated list of commands; `%s` is the address, else
/// it is appended) or the platform's opener; whether one started.
pub fn open_browser(address: &str) -> bool {
    if let Some(list) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        return list.to_string_lossy().split(':').any(|cmd| {
            let mut words: Vec<String> = cmd.split_whitespace().map(str::to_owned).collect();
            if words.is_empty() {
                return false;
            }
            if words.iter().any(|w| w.contains("%s")) {
                for w in &mut words {
                    *w = w.replace("%s", address);
                }
            } else {
                words.push(address.to_owned());
            }
            start(&words[0], &words[1..])
        });
    }
    if cfg!(target_os = "macos") {
        start("open", &[address.to_owned()])
    } else if cfg!(windows) {
        start("rundll32", &["url.dll,FileProtocolHandler".to_owned(), address.to_owned()])
    } else {
        std::env::var_os("DISPLAY").or_else(|| std::env::var_os("WAYLAND_DISPLAY")).is_some()
            && start("xdg-open", &[address.to_owned()])
    }
}

fn start(program: &str, args: &[String]) -> bool {
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

/// Forgets what octo keeps for `server` at `url`: its OAuth tokens and client, a bearer token
/// given with `octo mcp login --token`, a step-up challenge. Whether anything was there.
pub fn logout(store: &dyn SecretStore, server: &str, url: &str) -> std::io::Result<bool> {
    let mut had = store.remove(&crate::oauth::token_entry(server, url))?;
    had |= store.remove(&oauth_entry(server, url))?;
    let _ = store.remove(&crate::oauth::challenge_entry(server, url));
    Ok(had)
}
