//! What the engine reports about a request.

use std::time::Duration;

/// What the last request did, for tests and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Tokens of the rendered prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens evaluated (the rest came from the KV cache).
    pub evaluated_tokens: usize,
    /// Prompt tokens reused from the KV cache.
    pub reused_tokens: usize,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// From the request to the first generated token.
    pub time_to_first_token: Option<Duration>,
    /// The whole request.
    pub total: Duration,
}
