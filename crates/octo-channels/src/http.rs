//! HTTP calls to a platform's REST API: one retry after the wait a rate limit names, errors
//! without the URL (it may carry a token).

use crate::platform::PlatformError;
use serde_json::Value;
use std::time::Duration;

/// The longest a rate limit is waited out before giving up.
const MAX_WAIT: f64 = 60.0;

/// A platform's answer: its HTTP status and JSON body (`Null` when not JSON).
pub(crate) struct Answer {
    pub status: u16,
    pub body: Value,
}

/// Sends the request `make` builds; a rate limit (`limited` says which answers are one) is
/// waited out once, for the `Retry-After` (or `x-ogw-ratelimit-reset`, or the body's
/// `retry_after`) it names.
pub(crate) async fn call(
    what: &str,
    make: impl Fn() -> reqwest::RequestBuilder,
    limited: impl Fn(u16, &Value) -> bool,
) -> Result<Answer, PlatformError> {
    for attempt in 0..2 {
        let resp = make()
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .map_err(|e| PlatformError::Other(format!("{what}: {}", e.without_url())))?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers().get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<f64>().ok())
        };
        let after = header("retry-after").or_else(|| header("x-ogw-ratelimit-reset"));
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status == 429 || limited(status, &body) {
            let wait = after.or_else(|| body["retry_after"].as_f64()).unwrap_or(1.0).clamp(0.0, MAX_WAIT);
            if attempt == 0 {
                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
                continue;
            }
            return Err(PlatformError::RateLimited(format!(
                "{what}: still limited after waiting {wait:.1} s"
            )));
        }
        return Ok(Answer { status, body });
    }
    Err(PlatformError::Other(format!("{what}: no answer")))
}

/// A failure answer as an error: 401/403 refuse the credentials, anything else is named.
pub(crate) fn failure(what: &str, status: u16, detail: &str) -> PlatformError {
    match status {
        401 | 403 => PlatformError::Unauthorized(format!("{what}: HTTP {status}: {detail}")),
        _ => PlatformError::Other(format!("{what}: HTTP {status}: {detail}")),
    }
}
