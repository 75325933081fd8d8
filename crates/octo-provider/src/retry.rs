//! Retry with exponential backoff and jitter, honouring the server's `retry-after`.

use octo_agent::ProviderError;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

/// How often and how patiently a failed request is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The most attempts, the first included (1 means no retries).
    pub max_attempts: u32,
    /// Delay before the first retry; doubles for each later one.
    pub base_delay: Duration,
    /// No computed delay exceeds this.
    pub max_delay: Duration,
    /// A server's `retry-after` longer than this is not waited for: the error is returned instead,
    /// so the user is not left staring at a silent terminal for an hour.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// How long to wait before attempt `next_attempt` (2 for the first retry) after `error`, or
    /// `None` when it should not be retried: not retryable, attempts used up, or the server asked
    /// for a wait longer than [`RetryPolicy::max_retry_after`].
    pub fn delay_before(&self, next_attempt: u32, error: &ProviderError) -> Option<Duration> {
        if !error.is_retryable() || next_attempt > self.max_attempts {
            return None;
        }
        if let Some(after) = error.retry_after() {
            return (after <= self.max_retry_after).then_some(after);
        }
        let exp = self.base_delay.saturating_mul(1u32 << (next_attempt.saturating_sub(2)).min(16));
        let capped = exp.min(self.max_delay);
        // Full jitter on the upper half: spreads clients out without ever retrying instantly.
        let half = capped / 2;
        Some(half + half.mul_f64(unit_random()))
    }
}

/// A number in [0, 1) from the standard library's randomly keyed hasher; good enough for jitter
/// and needs no RNG dependency.
fn unit_random() -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0),
    );
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses a `retry-after` header: whole or fractional seconds, or an HTTP date. Also accepts the
/// `retry-after-ms` form some servers send (pass `millis = true`).
pub fn parse_retry_after(value: &str, millis: bool) -> Option<Duration> {
    let v = value.trim();
    if let Ok(n) = v.parse::<f64>() {
        if n.is_finite() && n >= 0.0 {
            // try_: an absurd value (1e30) must not panic; it is simply not a usable hint.
            return Duration::try_from_secs_f64(if millis { n / 1000.0 } else { n }).ok();
        }
        return None;
    }
    if millis {
        return None;
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// The retry hint in a response's headers: `retry-after-ms` first (more precise), then
/// `retry-after`.
pub fn retry_after_from_headers(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    get("retry-after-ms")
        .and_then(|v| parse_retry_after(v, true))
        .or_else(|| get("retry-after").and_then(|v| parse_retry_after(v, false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overloaded(after: Option<Duration>) -> ProviderError {
        ProviderError::Overloaded { retry_after: after, message: "busy".into() }
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(8),
            ..RetryPolicy::default()
        };
        let e = ProviderError::Server { status: Some(500), message: "x".into() };
        for attempt in 2..=10 {
            let d = p.delay_before(attempt, &e).unwrap();
            let full = Duration::from_secs(1u64 << (attempt - 2)).min(Duration::from_secs(8));
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?} not in [{:?}, {full:?}]", full / 2);
        }
        assert_eq!(p.delay_before(11, &e), None, "attempts used up");
    }

    #[test]
    fn retry_after_wins_unless_too_long() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay_before(2, &overloaded(Some(Duration::from_secs(7)))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(p.delay_before(2, &overloaded(Some(Duration::from_secs(3600)))), None);
    }

    #[test]
    fn non_retryable_errors_are_not_retried() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay_before(2, &ProviderError::Auth { message: "x".into() }), None);
        assert_eq!(
            p.delay_before(2, &ProviderError::ContextTooLong { deficit: None, message: "x".into() }),
            None
        );
        assert_eq!(RetryPolicy::none().delay_before(2, &overloaded(None)), None);
    }

    #[test]
    fn parses_retry_after_forms() {
        assert_eq!(parse_retry_after("12", false), Some(Duration::from_secs(12)));
        assert_eq!(parse_retry_after(" 1.5 ", false), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("250", true), Some(Duration::from_millis(250)));
        assert_eq!(parse_retry_after("-3", false), None);
        assert_eq!(parse_retry_after("1e30", false), None);
        assert_eq!(parse_retry_after("1e30", true), None);
        assert_eq!(parse_retry_after("soon", false), None);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", false),
            Some(Duration::ZERO),
            "a past date means now"
        );
        let future = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(100));
        let d = parse_retry_after(&future, false).unwrap();
        assert!(d > Duration::from_secs(95) && d <= Duration::from_secs(100), "{d:?}");
    }
}
