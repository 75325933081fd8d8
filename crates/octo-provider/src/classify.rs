//! Turning failed HTTP exchanges into the agent's typed errors, with messages that say what failed
//! and what to do.

use crate::retry::retry_after_from_headers;
use octo_agent::ProviderError;
use reqwest::header::HeaderMap;
use serde_json::Value;

/// Who a request was for, so errors can name the endpoint, the model and where the key comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointInfo {
    /// The endpoint's id in octo's configuration (`anthropic`, `deepseek`, ...).
    pub name: String,
    /// Base URL requests go to.
    pub base_url: String,
    /// The model requested.
    pub model: String,
    /// Where the API key comes from, phrased as advice
    /// ("set ANTHROPIC_API_KEY"), given by the application; empty adds nothing.
    pub key_hint: String,
    /// What the base URL of this protocol looks like, for answers that show it is wrong
    /// ("an OpenAI-compatible base_url usually ends in /v1"); given by the adapter.
    pub url_hint: String,
}

impl EndpointInfo {
    /// Endpoint info from its parts.
    pub fn new(name: &str, base_url: &str, model: &str, key_hint: &str) -> Self {
        Self {
            name: name.into(),
            base_url: base_url.into(),
            model: model.into(),
            key_hint: key_hint.into(),
            url_hint: String::new(),
        }
    }

    /// Adds the protocol's base-URL advice.
    pub fn with_url_hint(mut self, hint: &str) -> Self {
        self.url_hint = hint.into();
        self
    }
}

/// What an error body said, as far as it could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorBody {
    /// The human-readable message.
    pub message: String,
    /// The error's type (`invalid_request_error`, `overloaded_error`...).
    pub kind: Option<String>,
    /// The error's code (`context_length_exceeded`, `insufficient_quota`...).
    pub code: Option<String>,
}

/// Reads an error body in any of the shapes providers use: Anthropic's
/// `{"type":"error","error":{"type","message"}}`, OpenAI's `{"error":{"message","type","code"}}`,
/// `{"message": ...}`, `{"detail": ...}`, an HTML page from a proxy, plain text, or nothing.
pub fn parse_error_body(body: &[u8]) -> ErrorBody {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return ErrorBody { message: "the response body was empty".into(), ..ErrorBody::default() };
    }
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        let err = v.get("error").unwrap_or(&v);
        let message = ["message", "detail", "msg", "error"]
            .iter()
            .find_map(|k| err.get(*k).and_then(Value::as_str))
            .or_else(|| err.as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| short(trimmed, 500));
        let field = |k: &str| match err.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        return ErrorBody { message, kind: field("type"), code: field("code") };
    }
    let lower = trimmed.to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<body") {
        let title =
            between(trimmed, "<title>", "</title>").map(|t| format!(": {}", t.trim())).unwrap_or_default();
        return ErrorBody {
            message: format!(
                "the server answered with an HTML page{title} (usually a proxy, gateway or wrong base URL)"
            ),
            ..ErrorBody::default()
        };
    }
    ErrorBody { message: short(trimmed, 500), ..ErrorBody::default() }
}

/// Classifies a non-success HTTP response. `secret` (the API key) is removed from every message.
pub fn classify_http(
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    endpoint: &EndpointInfo,
    secret: Option<&str>,
) -> ProviderError {
    let parsed = parse_error_body(body);
    // A server's own words, shown once: a few lines, never a whole validation dump.
    let message = capped(&redact(&parsed.message, secret));
    let kind = parsed.kind.as_deref().unwrap_or("");
    let code = parsed.code.as_deref().unwrap_or("");
    let retry_after = retry_after_from_headers(headers);
    let name = &endpoint.name;

    // Overflow wordings are trusted only on statuses that mean "your request is wrong": a 429 or
    // 5xx that happens to mention "context length" must stay retryable.
    let request_error = matches!(status, 400 | 413 | 422);
    if status == 413 || code == "context_length_exceeded" || (request_error && is_context_overflow(&message))
    {
        return ProviderError::ContextTooLong { deficit: overflow_deficit(&message), message };
    }
    // OpenAI's models built for the Responses API refuse Chat Completions.
    if matches!(status, 400 | 404) && message.contains("v1/responses") {
        return ProviderError::InvalidRequest {
            status: Some(status),
            message: format!(
                "endpoint `{name}`: model `{}` is only served by the Responses API ({message}). Set `protocol = \"responses\"` in its [endpoints] table (the built-in `openai` endpoint uses it).",
                endpoint.model
            ),
        };
    }
    if kind == "overloaded_error" || status == 529 || status == 503 {
        return ProviderError::Overloaded {
            retry_after,
            message: format!("endpoint `{name}` (HTTP {status}): {message}"),
        };
    }
    match status {
        401 | 403 => ProviderError::Auth {
            message: format!(
                "endpoint `{name}` rejected the API key (HTTP {status}): {message}. {}",
                if endpoint.key_hint.is_empty() { "Check the key configured for it.".to_owned() } else { format!("Check the key: {}.", endpoint.key_hint) }
            ),
        },
        404 => ProviderError::InvalidRequest {
            status: Some(404),
            message: format!(
                "endpoint `{name}` has no model `{}` or no API at {} ({message}). Check the model name and the base URL.",
                endpoint.model, endpoint.base_url
            ),
        },
        429 if code == "insufficient_quota" || kind == "insufficient_quota" => ProviderError::InvalidRequest {
            status: Some(429),
            message: format!("endpoint `{name}` says the account is out of quota: {message}. Check billing."),
        },
        429 => ProviderError::RateLimited { retry_after, message: format!("endpoint `{name}`: {message}") },
        408 => ProviderError::Transport { message: format!("endpoint `{name}` timed out the request (HTTP 408): {message}") },
        // Some servers answer a request they refuse (a validation error) with a 500: trying it
        // again gives the same answer.
        500 if kind.contains("invalid_request") || message.to_ascii_lowercase().contains("validation error") => {
            ProviderError::InvalidRequest { status: Some(500), message: format!("endpoint `{name}` refused the request (HTTP 500): {message}") }
        }
        500..=599 => ProviderError::Server { status: Some(status), message: format!("endpoint `{name}`: {message}") },
        _ => ProviderError::InvalidRequest { status: Some(status), message: format!("endpoint `{name}`: {message}") },
    }
}

/// Whether `kind` is an error type or code that [`classify_stream_error`] knows (anything else
/// counts as a server error).
pub fn is_known_stream_error(kind: &str) -> bool {
    matches!(
        kind,
        "context_length_exceeded"
            | "overloaded_error"
            | "overloaded"
            | "server_overloaded"
            | "rate_limit_error"
            | "rate_limit_exceeded"
            | "authentication_error"
            | "permission_error"
            | "invalid_request_error"
            | "not_found_error"
            | "request_too_large"
    )
}

/// Classifies an error event that arrived inside a stream, by its type.
pub fn classify_stream_error(
    kind: &str,
    message: &str,
    endpoint: &EndpointInfo,
    secret: Option<&str>,
) -> ProviderError {
    let message = redact(message, secret);
    let name = &endpoint.name;
    if kind == "context_length_exceeded" || is_context_overflow(&message) {
        return ProviderError::ContextTooLong { deficit: overflow_deficit(&message), message };
    }
    match kind {
        "overloaded_error" | "overloaded" | "server_overloaded" => {
            ProviderError::Overloaded { retry_after: None, message: format!("endpoint `{name}`: {message}") }
        }
        "rate_limit_error" | "rate_limit_exceeded" => {
            ProviderError::RateLimited { retry_after: None, message: format!("endpoint `{name}`: {message}") }
        }
        "authentication_error" | "permission_error" => ProviderError::Auth {
            message: format!(
                "endpoint `{name}` rejected the API key: {message}.{}",
                hint_suffix(&endpoint.key_hint)
            ),
        },
        "invalid_request_error" | "not_found_error" | "request_too_large" => {
            ProviderError::InvalidRequest { status: None, message: format!("endpoint `{name}`: {message}") }
        }
        _ => ProviderError::Server {
            status: None,
            message: format!("endpoint `{name}` reported an error mid-stream: {message}"),
        },
    }
}

/// Classifies a failure to talk to the server at all.
pub fn classify_transport(
    err: &reqwest::Error,
    endpoint: &EndpointInfo,
    secret: Option<&str>,
) -> ProviderError {
    let mut root = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        root = s.to_string();
        source = s.source();
    }
    let what = if err.is_connect() && err.is_timeout() {
        "could not connect (timed out: no answer to the connection within `connect_timeout`)".to_owned()
    } else if err.is_connect() {
        format!("could not connect ({root})")
    } else if err.is_timeout() {
        "timed out".to_owned()
    } else {
        root
    };
    ProviderError::Transport {
        message: redact(&format!("endpoint `{}` at {}: {what}", endpoint.name, endpoint.base_url), secret),
    }
}

/// Whether a message says the prompt did not fit, in the wordings vendors use.
pub fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "prompt is too long",
        "maximum context length",
        "context length",
        "context_length",
        "context window",
        "too many tokens",
        "input is too long",
        "input too long",
        "reduce the length of the messages",
        "exceeds the model's maximum",
        "exceed context limit",
        "tokens exceeds",
        "range of input length",
        "exceeded model token limit",
        "prompt exceeds max length",
        "exceeds the available context size",
        "exceed context limit",
    ]
    .iter()
    .any(|p| m.contains(p))
}

/// How many tokens over the limit a context-overflow message says the prompt is, when it says:
/// "208000 tokens > 200000 maximum" (Anthropic) or "maximum context length is 128000 tokens ...
/// resulted in 130000 tokens" (OpenAI and compatibles).
pub fn overflow_deficit(message: &str) -> Option<u64> {
    let m = message.to_ascii_lowercase();
    // "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"
    if let (Some(plus), Some(gt)) = (m.find(" + "), m.rfind(" > ")) {
        if plus < gt {
            if let (Some(a), Some(b), Some(c)) =
                (last_number(&m[..plus]), first_number(&m[plus + 3..gt]), first_number(&m[gt + 3..]))
            {
                return (a + b).checked_sub(c);
            }
        }
    }
    if let Some(i) = m.find(" tokens > ") {
        let used = last_number(&m[..i])?;
        let limit = first_number(&m[i + 10..])?;
        return used.checked_sub(limit);
    }
    let limit_at = m.find("maximum context length is").or_else(|| m.find("context length is"))?;
    let limit = first_number(&m[limit_at..])?;
    let after = &m[limit_at..];
    let used_at = after
        .find("resulted in")
        .or_else(|| after.find("requested"))
        .or_else(|| after.find("you requested"))?;
    let used = first_number(&after[used_at..])?;
    used.checked_sub(limit)
}

fn first_number(s: &str) -> Option<u64> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let digits: String = s[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn last_number(s: &str) -> Option<u64> {
    // Digits and commas are ASCII, so scanning bytes never splits a character.
    let b = s.as_bytes();
    let end = b.iter().rposition(u8::is_ascii_digit)? + 1;
    let start = b[..end].iter().rposition(|c| !(c.is_ascii_digit() || *c == b',')).map_or(0, |i| i + 1);
    s.get(start..end)?.replace(',', "").parse().ok()
}

/// Replaces every occurrence of `secret` in `text` with `***`.
pub fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if s.len() >= 4 && text.contains(s) => text.replace(s, "***"),
        _ => text.to_owned(),
    }
}

/// A provider's message as shown: its first [`SHOWN_LINES`] lines and at most
/// [`SHOWN_CHARS`] characters, with how much was left out.
fn capped(message: &str) -> String {
    const SHOWN_LINES: usize = 6;
    const SHOWN_CHARS: usize = 600;
    let lines: Vec<&str> = message.lines().collect();
    let mut out = lines.iter().take(SHOWN_LINES).copied().collect::<Vec<_>>().join("\n");
    let mut cut = lines.len() > SHOWN_LINES;
    if out.chars().count() > SHOWN_CHARS {
        out = out.chars().take(SHOWN_CHARS).collect();
        cut = true;
    }
    if cut {
        out.push_str(&format!(" … ({} characters in all)", message.chars().count()));
    }
    out
}

/// The reason a retry notice gives: the error's first line, at most 200 characters.
pub fn short_reason(message: &str) -> String {
    short(message.lines().next().unwrap_or_default(), 200)
}

fn short(s: &str, max_chars: usize) -> String {
    let mut out: String = s.chars().take(max_chars).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let lower = s.to_ascii_lowercase();
    let a = lower.find(open)? + open.len();
    let b = lower[a..].find(close)? + a;
    s.get(a..b)
}

/// " Check the key: HINT." or nothing when there is no hint.
fn hint_suffix(hint: &str) -> String {
    if hint.is_empty() {
        String::new()
    } else {
        format!(" Check the key: {hint}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderValue, RETRY_AFTER};
    use std::time::Duration;

    fn ep() -> EndpointInfo {
        EndpointInfo::new(
            "anthropic",
            "https://api.anthropic.com",
            "claude-x",
            "set ANTHROPIC_API_KEY or store one in the key store",
        )
    }

    fn classify(status: u16, body: &str) -> ProviderError {
        classify_http(status, &HeaderMap::new(), body.as_bytes(), &ep(), Some("sk-secret-key"))
    }

    #[test]
    fn a_model_that_needs_the_responses_api_says_how_to_reach_it() {
        let e = classify(
            404,
            r#"{"error":{"message":"This model is only supported in v1/responses and not in v1/chat/completions.","type":"invalid_request_error"}}"#,
        );
        let ProviderError::InvalidRequest { message, .. } = e else { panic!("{e:?}") };
        assert!(message.contains("protocol = \"responses\"") && message.contains("claude-x"), "{message}");
    }

    #[test]
    fn auth_errors_name_the_endpoint_and_the_fix() {
        let e = classify(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-secret-key"}}"#,
        );
        let ProviderError::Auth { message } = e else { panic!("{e:?}") };
        assert!(message.contains("`anthropic`") && message.contains("ANTHROPIC_API_KEY"), "{message}");
        assert!(!message.contains("sk-secret-key"), "the key is redacted: {message}");
    }

    #[test]
    fn context_overflow_in_vendor_wordings() {
        let a = classify(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
        );
        assert_eq!(
            a,
            ProviderError::ContextTooLong {
                deficit: Some(8310),
                message: "prompt is too long: 208310 tokens > 200000 maximum".into()
            }
        );
        let o = classify(
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130,500 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        );
        assert!(matches!(o, ProviderError::ContextTooLong { deficit: Some(2500), .. }), "{o:?}");
        assert!(matches!(
            classify(413, "request entity too large"),
            ProviderError::ContextTooLong { deficit: None, .. }
        ));
        for wording in [
            "Range of input length should be [1, 98304]",
            "Invalid request: Your request exceeded model token limit: 262144",
            "Prompt exceeds max length",
            "the request exceeds the available context size, try increasing it",
        ] {
            let e = classify(400, &format!(r#"{{"error":{{"message":"{wording}"}}}}"#));
            assert!(matches!(e, ProviderError::ContextTooLong { .. }), "{wording}: {e:?}");
        }
        let q = classify(
            400,
            r#"{"error":{"message":"temperature must be between 0 and 2","code":"invalid_value"}}"#,
        );
        assert!(matches!(q, ProviderError::InvalidRequest { .. }), "not every 400 is an overflow");
    }

    #[test]
    fn rate_limits_and_overload_carry_retry_after() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        let e = classify_http(429, &h, br#"{"error":{"message":"slow down"}}"#, &ep(), None);
        assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
        assert!(e.is_retryable());
        let o = classify_http(
            529,
            &h,
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            &ep(),
            None,
        );
        assert!(matches!(o, ProviderError::Overloaded { retry_after: Some(_), .. }));
        let quota = classify(
            429,
            r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#,
        );
        assert!(!quota.is_retryable(), "{quota:?}");
    }

    #[test]
    fn server_errors_html_pages_and_empty_bodies() {
        let e = classify(
            502,
            "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
        );
        let ProviderError::Server { status: Some(502), message } = e else { panic!() };
        assert!(message.contains("HTML page: 502 Bad Gateway"), "{message}");
        let empty = classify(500, "");
        assert!(empty.to_string().contains("empty"), "{empty}");
        let nf = classify(404, r#"{"error":{"message":"model not found"}}"#);
        assert!(
            nf.to_string().contains("no model `claude-x`")
                && nf.to_string().contains("https://api.anthropic.com"),
            "{nf}"
        );
    }

    #[test]
    fn stream_errors_by_type() {
        assert!(matches!(
            classify_stream_error("overloaded_error", "Overloaded", &ep(), None),
            ProviderError::Overloaded { .. }
        ));
        assert!(matches!(
            classify_stream_error("api_error", "boom", &ep(), None),
            ProviderError::Server { .. }
        ));
        assert!(matches!(
            classify_stream_error(
                "invalid_request_error",
                "prompt is too long: 5 tokens > 4 maximum",
                &ep(),
                None
            ),
            ProviderError::ContextTooLong { deficit: Some(1), .. }
        ));
    }

    #[test]
    fn multibyte_text_around_numbers_never_panics() {
        assert_eq!(overflow_deficit("prompt is too long：208000 tokens > 200000 maximum"), Some(8000));
        assert_eq!(last_number("208\u{a0}000"), Some(0));
        assert_eq!(last_number("合计：12"), Some(12));
        let _ = overflow_deficit("上下文：\u{a0}9 tokens > ８ maximum");
    }

    #[test]
    fn max_tokens_overflow_form_gives_the_deficit() {
        let msg = "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again";
        assert!(is_context_overflow(msg));
        assert_eq!(overflow_deficit(msg), Some(9573));
    }

    #[test]
    fn overflow_wording_on_a_retryable_status_stays_retryable() {
        let e = classify(503, r#"{"error":{"message":"too many tokens in flight, try again"}}"#);
        assert!(e.is_retryable(), "{e:?}");
        let e = classify(429, r#"{"error":{"message":"too many tokens per minute"}}"#);
        assert!(matches!(e, ProviderError::RateLimited { .. }), "{e:?}");
    }

    #[test]
    fn numbers_are_found() {
        assert_eq!(first_number("is 1,000 tokens"), Some(1000));
        assert_eq!(last_number("used 12 and 345"), Some(345));
        assert_eq!(overflow_deficit("nothing here"), None);
    }
}
