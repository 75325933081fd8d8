//! Failures said in words: which part failed (connect, auth, protocol, timeout) and what to do,
//! never a Rust type name. The SDK's errors wrap the transport's (whose name is a type path);
//! the transport's own error is looked at instead.

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// Why `reqwest` could not complete a request, in words.
pub(crate) fn reqwest_reason(e: &reqwest::Error) -> String {
    let inner = innermost(e);
    if e.is_timeout() {
        "it did not answer in time".into()
    } else if e.is_connect() {
        format!("could not connect ({inner})")
    } else if let Some(s) = e.status() {
        format!("HTTP {}", s.as_u16())
    } else {
        inner
    }
}

/// The innermost cause's message (where the useful words are: "Connection refused", "dns error").
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// What to tell the user when the HTTP server at `url` (configured as `server`) did not start
/// an MCP session.
pub(crate) fn init_failure(server: &str, url: &str, e: &ClientInitializeError) -> String {
    if let ClientInitializeError::TransportError { error, .. } = e {
        if let Some(http) = error.error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return http_failure(server, url, http);
        }
        return format!("{url}: {}", innermost(error.error.as_ref()));
    }
    match e {
        ClientInitializeError::ConnectionClosed(_) => {
            format!("{url} closed the connection before the MCP session started")
        }
        ClientInitializeError::JsonRpcError(d) => format!("{url} refused to start a session: {}", d.message),
        other => format!("{url} did not start an MCP session (protocol error: {other})"),
    }
}

fn http_failure(server: &str, url: &str, e: &StreamableHttpError<reqwest::Error>) -> String {
    match e {
        StreamableHttpError::Auth(a) => {
            format!("{url} could not use its stored login ({a}): run `octo mcp login {server}` again")
        }
        StreamableHttpError::AuthRequired(_) => format!(
            "{url} needs you to log in (HTTP 401): run `octo mcp login {server}`, or give a token with `bearer_token_env`"
        ),
        StreamableHttpError::InsufficientScope(s) => format!(
            "{url} refused the token's scope (HTTP 403{}): run `octo mcp login {server}` again",
            s.required_scope.as_deref().map(|r| format!(", it needs `{r}`")).unwrap_or_default()
        ),
        StreamableHttpError::HttpStatus(s) => {
            format!("{url} answered HTTP {} (a server error): try again later, or `octo mcp get {server}`", s.status)
        }
        StreamableHttpError::Client(c) => match c.status() {
            Some(s) if s.as_u16() == 404 => {
                format!("{url} answered HTTP 404: is this the server's MCP endpoint (often ending in /mcp)?")
            }
            Some(s) => format!("{url} answered HTTP {}", s.as_u16()),
            None => format!("{url}: {}", reqwest_reason(c)),
        },
        StreamableHttpError::UnexpectedContentType(t) => format!(
            "{url} answered with {}, not MCP: is this the server's MCP endpoint?",
            t.as_deref().map_or("no content type".to_owned(), |t| format!("`{t}`"))
        ),
        StreamableHttpError::UnexpectedServerResponse(body) => {
            let body: String = body.chars().take(200).collect();
            if body.contains("HTTP 401") || body.contains("401 Unauthorized") {
                format!("{url} needs you to log in (HTTP 401): run `octo mcp login {server}`, or give a token with `bearer_token_env`")
            } else {
                format!("{url} answered something that is not MCP: {body}")
            }
        }
        StreamableHttpError::Io(io) => format!("{url}: {io}"),
        other => format!("{url}: {other}"),
    }
}

/// What to tell the model (and the user) when a call failed in the transport or the protocol.
pub(crate) fn call_failure(server: &str, e: &rmcp::ServiceError) -> String {
    match e {
        rmcp::ServiceError::TransportSend(d) => {
            match d.error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(http) => http_failure(server, "the server", http),
                None => innermost(d.error.as_ref()),
            }
        }
        rmcp::ServiceError::McpError(m) => m.message.to_string(),
        rmcp::ServiceError::TransportClosed => "its connection closed".into(),
        other => other.to_string(),
    }
}

/// The `WWW-Authenticate` challenge of a call refused for its token's scope (HTTP 403
/// `insufficient_scope`): the next login asks for what it names.
pub(crate) fn scope_challenge(e: &rmcp::ServiceError) -> Option<String> {
    let rmcp::ServiceError::TransportSend(d) = e else { return None };
    match d.error.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
        StreamableHttpError::InsufficientScope(s) => Some(s.www_authenticate_header.clone()),
        _ => None,
    }
}

/// A failure of a stored login (an expired refresh, a changed server).
pub(crate) fn stored_login_failure(server: &str, e: &rmcp::transport::auth::AuthError) -> String {
    format!("its stored login could not be used ({e}): run `octo mcp login {server}` again")
}
