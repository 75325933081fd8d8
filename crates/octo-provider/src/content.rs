//! What a successful response to a model request carries: an event stream, a whole JSON reply
//! (some servers ignore `stream: true`), or something that is not the model API at all (a login
//! page, a wrong path, a captive portal), which is a configuration error to explain, not retry.

use crate::classify::{redact, EndpointInfo};
use octo_agent::ProviderError;
use reqwest::header::{HeaderMap, CONTENT_TYPE};

/// What a 2xx body is, from its content type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `text/event-stream`, or no content type (sniffed when the first bytes arrive).
    Stream { sniff: bool },
    /// A JSON document: a whole reply.
    Json,
    /// Anything else, with its content type.
    Other(String),
}

/// The content type, lowercase (empty when there is none).
pub(crate) fn content_type(headers: &HeaderMap) -> String {
    headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").trim().to_ascii_lowercase()
}

/// What the response headers say the body is.
pub(crate) fn kind(headers: &HeaderMap) -> Kind {
    let ct = content_type(headers);
    if ct.is_empty() {
        Kind::Stream { sniff: true }
    } else if ct.contains("event-stream") {
        Kind::Stream { sniff: false }
    } else if ct.contains("json") {
        Kind::Json
    } else {
        Kind::Other(ct)
    }
}

/// What the first bytes of a body without a content type look like.
pub(crate) fn sniff(first: &[u8]) -> Option<Kind> {
    match first.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'<') => Some(Kind::Other("text/html (by its content)".into())),
        Some(b'{') => Some(Kind::Json),
        _ => None,
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let t = head.trim_start();
    t.starts_with('<')
        && (t.contains("<html") || t.contains("<!doctype") || t.contains("<head") || t.contains("<body"))
}

/// The first bytes of `body`, on one line, at most 160 characters, control characters shown as
/// `\u{..}`.
fn first_bytes(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(1024)]);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(160).flat_map(char::escape_default).collect();
    if one_line.chars().count() > 160 {
        out.push('…');
    }
    out
}

/// The error for a second empty 2xx answer in a row (the first was retried): what happened, and
/// the context window named only when the request was large enough to be near one.
pub(crate) fn empty_reply(
    endpoint: &EndpointInfo,
    url: &str,
    content_type: &str,
    request_bytes: usize,
    secret: Option<&str>,
) -> ProviderError {
    let ct = if content_type.is_empty() { "no content type".to_owned() } else { format!("`{content_type}`") };
    // About four bytes a token: 32 KB is some 8,000 tokens, the smallest windows local servers run.
    let near_window = request_bytes >= 32 * 1024;
    let cause = if near_window {
        format!(
            "The request was about {} tokens: a local server answers like this when the prompt and the output cap do not fit its context window (set `context_window`, and perhaps `max_tokens`, for this model in [endpoints.<id>.model_info.<model>]); its log says.",
            request_bytes / 4
        )
    } else {
        "The server's log says why (it may have crashed or been restarted while answering).".to_owned()
    };
    ProviderError::BadEndpoint {
        message: redact(
            &format!(
                "endpoint `{}` at {url} answered twice with an empty body ({ct}) and no reply. {cause}",
                endpoint.name
            ),
            secret,
        ),
    }
}

/// The error for a 2xx answer that is not the model API: it names the URL, the content type and
/// the first bytes, and says what to change.
pub(crate) fn bad_endpoint(
    endpoint: &EndpointInfo,
    url: &str,
    content_type: &str,
    body: &[u8],
    secret: Option<&str>,
) -> ProviderError {
    let ct = if content_type.is_empty() { "no content type".to_owned() } else { format!("`{content_type}`") };
    let (what, cause) = if body.iter().all(u8::is_ascii_whitespace) {
        (
            format!("an empty body ({ct})"),
            "A local server answers like this when the prompt and the output cap do not fit its context \
             window: set `context_window` (and perhaps `max_tokens`) for this model in \
             [endpoints.<id>.model_info.<model>], or check the server's log."
                .to_owned(),
        )
    } else {
        let what = if looks_like_html(body) { format!("an HTML page ({ct})") } else { ct };
        let hint = if endpoint.url_hint.is_empty() {
            String::from("check `base_url`")
        } else {
            endpoint.url_hint.clone()
        };
        (
            format!("{what} starting \"{}\"", first_bytes(body)),
            format!(
                "The URL is probably not the model API (a wrong path, a login page, a proxy): {hint}. \
                 Change `base_url` in [endpoints.{}].",
                endpoint.name
            ),
        )
    };
    ProviderError::BadEndpoint {
        message: redact(
            &format!(
                "endpoint `{}` at {url} answered with {what} instead of a model reply. {cause}",
                endpoint.name
            ),
            secret,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_headers_and_first_bytes() {
        let h = |ct: &str| {
            let mut m = HeaderMap::new();
            m.insert(CONTENT_TYPE, ct.parse().unwrap());
            m
        };
        assert_eq!(kind(&h("text/event-stream; charset=utf-8")), Kind::Stream { sniff: false });
        assert_eq!(kind(&h("application/json")), Kind::Json);
        assert_eq!(kind(&h("text/html; charset=UTF-8")), Kind::Other("text/html; charset=utf-8".into()));
        assert_eq!(kind(&HeaderMap::new()), Kind::Stream { sniff: true });
        assert!(matches!(sniff(b"  <!DOCTYPE html>"), Some(Kind::Other(_))));
        assert_eq!(sniff(b"\n{\"id\":1}"), Some(Kind::Json));
        assert_eq!(sniff(b"data: {}"), None);
    }

    #[test]
    fn the_error_names_url_type_bytes_and_the_fix() {
        let mut ep = EndpointInfo::new("local", "http://localhost:8080", "m", "");
        ep.url_hint = "an OpenAI-compatible base_url usually ends in /v1".into();
        let e = bad_endpoint(
            &ep,
            "http://localhost:8080/chat/completions",
            "text/html",
            b"<html><title>Login</title>\x1b[31m",
            Some("sk"),
        );
        let m = e.to_string();
        assert!(m.contains("http://localhost:8080/chat/completions") && m.contains("HTML page"), "{m}");
        assert!(m.contains("`text/html`") && m.contains("<html><title>Login") && m.contains("/v1"), "{m}");
        assert!(m.contains("\\u{1b}"), "control characters are shown, not sent: {m}");
        assert!(!e.is_retryable());
        let m = bad_endpoint(&ep, "u", "text/event-stream", b"", None).to_string();
        assert!(m.contains("empty body") && m.contains("context_window"), "{m}");
    }
}
