//! An MCP server behind OAuth 2.1, written for the tests: the test MCP server at `/mcp`, which
//! answers a request without a valid token with 401 and a `WWW-Authenticate` challenge naming
//! its protected-resource metadata; that metadata and the authorization server's; dynamic client
//! registration; an authorization endpoint that approves at once (the "browser" only has to
//! follow its redirect); a token endpoint that checks PKCE and the redirect, issues access tokens
//! of a chosen lifetime and refresh tokens, and can be told to refuse refreshes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fixture: fail loudly

use base64::Engine;
use sha2::Digest;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the authorization server knows and counts.
#[derive(Default)]
pub struct AuthState {
    base: String,
    /// Lifetime of access tokens, in seconds (default 3600).
    pub token_ttl: AtomicU64,
    /// Refuse every refresh (`invalid_grant`), as after a revocation.
    pub refuse_refresh: AtomicBool,
    /// Clients registered.
    pub registrations: AtomicUsize,
    /// Codes exchanged for tokens.
    pub code_grants: AtomicUsize,
    /// Refreshes granted.
    pub refreshes: AtomicUsize,
    /// Requests to `/mcp` refused for want of a valid token.
    pub refused: AtomicUsize,
    /// A scope tool calls need (a token without it gets 403 `insufficient_scope`: step-up).
    pub call_scope: Mutex<Option<String>>,
    /// The scopes each authorization asked for, in order.
    pub asked_scopes: Mutex<Vec<String>>,
    counter: AtomicU64,
    codes: Mutex<HashMap<String, (String, String, String)>>,
    access: Mutex<HashMap<String, (Instant, String)>>,
    refresh: Mutex<HashMap<String, String>>,
}

impl AuthState {
    fn next(&self, kind: &str) -> String {
        format!("{kind}-{}", self.counter.fetch_add(1, Ordering::SeqCst))
    }

    fn tokens(&self, scope: &str) -> String {
        let (access, refresh) = (self.next("at"), self.next("rt"));
        let ttl = match self.token_ttl.load(Ordering::SeqCst) {
            0 => 3600,
            n => n,
        };
        self.access
            .lock()
            .unwrap()
            .insert(access.clone(), (Instant::now() + Duration::from_secs(ttl), scope.to_owned()));
        self.refresh.lock().unwrap().insert(refresh.clone(), scope.to_owned());
        serde_json::json!({"access_token": access, "token_type": "Bearer", "expires_in": ttl,
            "refresh_token": refresh, "scope": scope})
        .to_string()
    }

    /// The scope of a valid token in `header`.
    fn valid(&self, header: Option<&str>) -> Option<String> {
        let token = header.and_then(|h| h.strip_prefix("Bearer "))?;
        let access = self.access.lock().unwrap();
        let (exp, scope) = access.get(token)?;
        (Instant::now() < *exp).then(|| scope.clone())
    }
}

/// A running protected server.
pub struct OAuthServer {
    /// The MCP endpoint.
    pub url: String,
    /// Stops it.
    pub stop: tokio_util::sync::CancellationToken,
    /// Its state and counters.
    pub state: Arc<AuthState>,
}

fn json(status: u16, body: String) -> axum::response::Response {
    axum::response::Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body))
        .unwrap()
}

fn query(uri: &axum::http::Uri) -> HashMap<String, String> {
    url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned().collect()
}

async fn form(req: axum::extract::Request) -> HashMap<String, String> {
    let body = axum::body::to_bytes(req.into_body(), 64 * 1024).await.unwrap();
    url::form_urlencoded::parse(&body).into_owned().collect()
}

fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let digest = sha2::Sha256::digest(verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest) == challenge
}

async fn route(state: Arc<AuthState>, req: axum::extract::Request) -> axum::response::Response {
    let base = state.base.clone();
    match req.uri().path() {
        "/.well-known/oauth-protected-resource/mcp" | "/.well-known/oauth-protected-resource" => json(
            200,
            serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                "scopes_supported": ["mcp"]})
            .to_string(),
        ),
        "/.well-known/oauth-authorization-server" => json(
            200,
            serde_json::json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"), "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                "scopes_supported": ["mcp", "mcp:write"]})
            .to_string(),
        ),
        "/register" => {
            let body = axum::body::to_bytes(req.into_body(), 64 * 1024).await.unwrap();
            let asked: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            state.registrations.fetch_add(1, Ordering::SeqCst);
            let id = state.next("client");
            json(
                201,
                serde_json::json!({"client_id": id, "redirect_uris": asked["redirect_uris"],
                    "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"], "client_name": asked["client_name"]})
                .to_string(),
            )
        }
        "/authorize" => {
            let q = query(req.uri());
            if q.get("code_challenge_method").map(String::as_str) != Some("S256") || q.get("response_type").map(String::as_str) != Some("code") {
                return json(400, r#"{"error":"invalid_request"}"#.into());
            }
            let (redirect, state_param) = (q["redirect_uri"].clone(), q.get("state").cloned().unwrap_or_default());
            let code = state.next("code");
            let scope = q.get("scope").cloned().unwrap_or_default();
            state.asked_scopes.lock().unwrap().push(scope.clone());
            state.codes.lock().unwrap().insert(code.clone(), (q["code_challenge"].clone(), redirect.clone(), scope));
            let mut to = url::Url::parse(&redirect).unwrap();
            to.query_pairs_mut().append_pair("code", &code).append_pair("state", &state_param).append_pair("iss", &base);
            axum::response::Response::builder()
                .status(302)
                .header("location", to.as_str())
                .body(axum::body::Body::empty())
                .unwrap()
        }
        "/token" => token(&state, form(req).await),
        _ => json(404, r#"{"error":"not found"}"#.into()),
    }
}

fn token(state: &AuthState, f: HashMap<String, String>) -> axum::response::Response {
    let bad = |e: &str| json(400, serde_json::json!({"error": e}).to_string());
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, redirect, scope)) =
                f.get("code").and_then(|c| state.codes.lock().unwrap().remove(c))
            else {
                return bad("invalid_grant");
            };
            if !f.get("code_verifier").is_some_and(|v| pkce_matches(v, &challenge)) {
                return bad("invalid_grant");
            }
            if f.get("redirect_uri") != Some(&redirect) {
                return bad("invalid_grant");
            }
            state.code_grants.fetch_add(1, Ordering::SeqCst);
            json(200, state.tokens(&scope))
        }
        Some("refresh_token") => {
            let known = f.get("refresh_token").and_then(|r| state.refresh.lock().unwrap().remove(r));
            let Some(scope) = known.filter(|_| !state.refuse_refresh.load(Ordering::SeqCst)) else {
                return bad("invalid_grant");
            };
            state.refreshes.fetch_add(1, Ordering::SeqCst);
            json(200, state.tokens(&scope))
        }
        // Machine to machine: the client `m2m` with the secret `m2m-secret`, in the body.
        Some("client_credentials") => {
            if f.get("client_id").map(String::as_str) != Some("m2m")
                || f.get("client_secret").map(String::as_str) != Some("m2m-secret")
            {
                return json(401, r#"{"error":"invalid_client"}"#.into());
            }
            state.code_grants.fetch_add(1, Ordering::SeqCst);
            json(200, state.tokens(f.get("scope").map_or("mcp", String::as_str)))
        }
        _ => bad("unsupported_grant_type"),
    }
}

/// Serves the test MCP server behind OAuth on a loopback port.
pub async fn serve_http_oauth(options: crate::mcp::Options) -> OAuthServer {
    let ct = tokio_util::sync::CancellationToken::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(AuthState { base: base.clone(), ..AuthState::default() });
    let guard_state = Arc::clone(&state);
    let gate = axum::middleware::from_fn(move |req: axum::extract::Request, next: axum::middleware::Next| {
        let state = Arc::clone(&guard_state);
        async move {
            let auth = req.headers().get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
            if let Some(scope) = state.valid(auth.as_deref()) {
                let needed = state.call_scope.lock().unwrap().clone();
                let Some(needed) = needed.filter(|n| !scope.split_whitespace().any(|s| s == n)) else {
                    return next.run(req).await;
                };
                // A tool call needs more than this token's scope: 403, naming the scope.
                let (parts, body) = req.into_parts();
                let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                let is_call = serde_json::from_slice::<serde_json::Value>(&bytes)
                    .is_ok_and(|v| v["method"] == "tools/call");
                if !is_call {
                    return next
                        .run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes)))
                        .await;
                }
                let challenge = format!(
                    r#"Bearer error="insufficient_scope", scope="mcp {needed}", resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
                    state.base
                );
                return axum::response::Response::builder()
                    .status(403)
                    .header("www-authenticate", challenge)
                    .body(axum::body::Body::empty())
                    .unwrap();
            }
            state.refused.fetch_add(1, Ordering::SeqCst);
            let challenge = format!(
                r#"Bearer error="invalid_token", resource_metadata="{}/.well-known/oauth-protected-resource/mcp", scope="mcp""#,
                state.base
            );
            axum::response::Response::builder()
                .status(401)
                .header("www-authenticate", challenge)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(r#"{"error":"invalid_token"}"#))
                .unwrap()
        }
    });
    let mcp = axum::Router::new().nest_service("/mcp", crate::mcp::service(options, &ct)).layer(gate);
    let rest_state = Arc::clone(&state);
    let app = mcp.fallback(move |req: axum::extract::Request| route(Arc::clone(&rest_state), req));
    let stop = ct.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await;
    });
    OAuthServer { url: format!("{base}/mcp"), stop: ct, state }
}

/// A browser for the tests: fetches `address` with plain HTTP, following redirects (at most 5),
/// as a user's browser would after they approved. Blocking; run it on a thread.
pub fn browse(address: &str) {
    use std::io::{Read, Write};
    let mut next = address.to_owned();
    for _ in 0..5 {
        let Ok(u) = url::Url::parse(&next) else { return };
        let host = u.host_str().unwrap_or("127.0.0.1");
        let host = if host == "localhost" { "127.0.0.1" } else { host };
        let Ok(mut conn) = std::net::TcpStream::connect((host, u.port().unwrap_or(80))) else { return };
        let target = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_owned(),
        };
        let _ = write!(conn, "GET {target} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
        let mut text = String::new();
        let _ = conn.read_to_string(&mut text);
        let Some(loc) = text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("location").then(|| v.trim().to_owned())
        }) else {
            return;
        };
        next = loc;
    }
}
