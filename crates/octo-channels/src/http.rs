//! HTTP calls to a platform's REST API: a rate limit waited out once for the time it names, a
//! network failure or a 5xx tried twice more after a short pause, errors without the URL (it may
//! carry a token).

use crate::platform::PlatformError;
use serde_json::Value;
use std::time::Duration;

/// The longest a rate limit is waited out before giving up.
const MAX_WAIT: f64 = 60.0;
/// How long a call may take (an upload gets [`UPLOAD_TIMEOUT`]).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(60);
/// How long an upload may take.
pub(crate) const UPLOAD_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// Tries after a network failure or a 5xx.
pub(crate) const TRIES: u32 = 3;

/// A platform's answer: its HTTP status and JSON body (`Null` when not JSON).
pub(crate) struct Answer {
    pub status: u16,
    pub body: Value,
}

/// Sends the request `make` builds within [`TIMEOUT`]; see [`call_within`].
pub(crate) async fn call(
    what: &str,
    make: impl Fn() -> reqwest::RequestBuilder,
    limited: impl Fn(u16, &Value) -> bool,
) -> Result<Answer, PlatformError> {
    call_within(what, TIMEOUT, make, limited).await
}

/// Sends the request `make` builds. A rate limit (429, or what `limited` says is one) is waited
/// out once, for the `Retry-After` (or `x-ogw-ratelimit-reset`, or the body's `retry_after`) it
/// names; a network failure or a 5xx is tried again after 1 s, then 2 s.
pub(crate) async fn call_within(
    what: &str,
    timeout: Duration,
    make: impl Fn() -> reqwest::RequestBuilder,
    limited: impl Fn(u16, &Value) -> bool,
) -> Result<Answer, PlatformError> {
    call_tries(what, timeout, TRIES, make, limited).await
}

/// [`call_within`] with `tries` tries after a network failure or a 5xx (1: none again; the
/// caller decides, as a post that may have arrived must be looked for first).
pub(crate) async fn call_tries(
    what: &str,
    timeout: Duration,
    tries: u32,
    make: impl Fn() -> reqwest::RequestBuilder,
    limited: impl Fn(u16, &Value) -> bool,
) -> Result<Answer, PlatformError> {
    let (mut waited, mut failures) = (false, 0u32);
    loop {
        let failed = |failures: u32| Duration::from_secs(1 << failures.min(4));
        let resp = match make().timeout(timeout).send().await {
            Ok(r) => r,
            Err(e) => {
                failures += 1;
                if failures < tries {
                    tokio::time::sleep(failed(failures - 1)).await;
                    continue;
                }
                return Err(PlatformError::Other(format!("{what}: {}", e.without_url())));
            }
        };
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|w| w.is_finite())
        };
        let after = header("retry-after").or_else(|| header("x-ogw-ratelimit-reset"));
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status == 429 || limited(status, &body) {
            let named = body["retry_after"].as_f64().or_else(|| body["parameters"]["retry_after"].as_f64());
            let wait = after.or(named).filter(|w| w.is_finite()).unwrap_or(1.0).clamp(0.0, MAX_WAIT);
            if !waited {
                waited = true;
                tokio::time::sleep(Duration::from_secs_f64(wait)).await;
                continue;
            }
            return Err(PlatformError::RateLimited(format!(
                "{what}: still limited after waiting {wait:.1} s"
            )));
        }
        if status >= 500 {
            failures += 1;
            if failures < tries {
                tokio::time::sleep(failed(failures - 1)).await;
                continue;
            }
        }
        return Ok(Answer { status, body });
    }
}

/// A failure answer as an error: 401/403 refuse the credentials, anything else is named.
pub(crate) fn failure(what: &str, status: u16, detail: &str) -> PlatformError {
    match status {
        401 | 403 => PlatformError::Unauthorized(format!("{what}: HTTP {status}: {detail}")),
        _ => PlatformError::Other(format!("{what}: HTTP {status}: {detail}")),
    }
}
