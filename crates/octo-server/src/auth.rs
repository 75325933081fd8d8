//! The access token and the guard in front of every route: Host, Origin, then the token.

use crate::login::random_hex;
use crate::state::AppState;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::path::Path;
use std::sync::Arc;

/// The token's file in octo's home.
pub const TOKEN_FILE: &str = "server-token";

/// The cookie the login link sets.
const COOKIE: &str = "octo_token";

/// The token in `home`, made (random, 256 bits, readable by the user only) when there is none
/// or it is unusable.
pub fn load_or_create_token(home: &Path) -> std::io::Result<String> {
    let path = home.join(TOKEN_FILE);
    if let Ok(t) = std::fs::read_to_string(&path) {
        let t = t.trim();
        if t.len() >= 32 && t.chars().all(|c| c.is_ascii_hexdigit()) {
            return Ok(t.to_owned());
        }
    }
    let token = random_hex()?;
    let mut dir = std::fs::DirBuilder::new();
    dir.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        dir.mode(0o700);
    }
    dir.create(home)?;
    let tmp = home.join(format!("{TOKEN_FILE}.{}", std::process::id()));
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    {
        use std::io::Write;
        let mut f = o.open(&tmp)?;
        f.write_all(token.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    Ok(token)
}

/// Equal without telling by its timing how much of a guess was right.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(status: StatusCode, what: &str) -> Response {
    (status, axum::Json(serde_json::json!({"error": what}))).into_response()
}

/// The token a request carries: `Authorization: Bearer`, else the login cookie.
fn presented(headers: &HeaderMap) -> Option<String> {
    if let Some(b) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Some(b.trim().to_owned());
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            let (k, v) = c.trim().split_once('=')?;
            (k == COOKIE).then(|| v.to_owned())
        })
}

/// Host must be one the server answers to (a loopback server's own names: no DNS rebinding);
/// an Origin, when sent, must be the same host (no cross-site requests); the token must be
/// there — except on `/login`, which checks it itself.
pub async fn guard(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    if !state.hosts.is_empty() && !state.hosts.contains(&host) {
        return refuse(StatusCode::FORBIDDEN, "this server does not answer to that host name");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let o = origin.to_str().unwrap_or("").to_ascii_lowercase();
        let o = o.strip_prefix("http://").or_else(|| o.strip_prefix("https://")).unwrap_or("");
        if o != host {
            return refuse(StatusCode::FORBIDDEN, "cross-site requests are refused");
        }
    }
    let allowed = presented(headers).is_some_and(|t| same(&t, &state.token) || state.logins.is_session(&t));
    if req.uri().path() != "/login" && !allowed {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized: open the login link `octo serve` printed, or send the token as a bearer",
        );
    }
    // A body announced too large is refused before a byte of it is read.
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|n| n > crate::state::MAX_BODY) {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large (at most 4 MiB)");
    }
    next.run(req).await
}

#[derive(serde::Deserialize)]
pub struct Login {
    code: Option<String>,
    token: Option<String>,
}

/// `GET /login?code=…` (the one-time link `octo serve` prints) or `?token=…` (the permanent
/// token from `~/.octo/server-token`): sets a session cookie (never the token itself) and opens
/// the UI. A spent or expired code is refused.
pub async fn login(State(state): State<Arc<AppState>>, Query(q): Query<Login>) -> Response {
    let ok = match (&q.code, &q.token) {
        (Some(c), _) => state.logins.spend(c),
        (None, Some(t)) => same(t, &state.token),
        (None, None) => false,
    };
    if !ok {
        let why = if q.code.is_some() {
            "unauthorized: this login link was used already or is older than 10 minutes; restart `octo serve` for a new one, or open /login?token= with the token in ~/.octo/server-token"
        } else {
            "unauthorized: the link's token is wrong"
        };
        return refuse(StatusCode::UNAUTHORIZED, why);
    }
    let Ok(session) = state.logins.open_session() else {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, "no randomness for a session");
    };
    (
        StatusCode::SEE_OTHER,
        [
            (header::SET_COOKIE, format!("{COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/")),
            (header::LOCATION, "/".to_owned()),
        ],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_made_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let a = load_or_create_token(&home).unwrap();
        assert_eq!(a.len(), 64);
        assert_eq!(load_or_create_token(&home).unwrap(), a);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.join(TOKEN_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(home.join(TOKEN_FILE), "short").unwrap();
        assert_ne!(load_or_create_token(&home).unwrap(), a);
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }

    #[test]
    fn tokens_come_from_the_bearer_or_the_cookie() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=b; octo_token=xyz".parse().unwrap());
        assert_eq!(presented(&h).as_deref(), Some("xyz"));
        h.insert(header::AUTHORIZATION, "Bearer t1".parse().unwrap());
        assert_eq!(presented(&h).as_deref(), Some("t1"));
    }
}
