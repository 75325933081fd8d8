//! Token usage and why the model stopped.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign};

/// Tokens of one request (or a sum of requests), in non-overlapping buckets.
///
/// Providers report caching differently: Anthropic reports cache reads and writes beside the
/// uncached input, OpenAI reports cached tokens as a subset of the prompt. Adapters normalize into
/// these buckets so `input + cache_read + cache_write` is always the whole prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens that were neither read from nor written to a cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens the model generated (including reasoning).
    #[serde(default)]
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written into the provider's cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Some of these numbers are octo's estimates: the server reported no usage.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// Of the output tokens, those the model spent reasoning (when the provider says; a part of
    /// `output_tokens`, not a bucket of its own).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// How much of the context window the prompt occupied: every prompt bucket.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.cache_read_tokens).saturating_add(self.cache_write_tokens)
    }

    /// All tokens, prompt and output.
    pub fn total_tokens(&self) -> u64 {
        self.context_tokens().saturating_add(self.output_tokens)
    }

    /// Whether nothing was counted.
    pub fn is_zero(&self) -> bool {
        *self == Self::default()
    }
}

impl Add for Usage {
    type Output = Usage;
    fn add(self, rhs: Usage) -> Usage {
        // Saturating: a gateway reporting garbage must not crash a debug build.
        Usage {
            input_tokens: self.input_tokens.saturating_add(rhs.input_tokens),
            output_tokens: self.output_tokens.saturating_add(rhs.output_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_add(rhs.cache_read_tokens),
            cache_write_tokens: self.cache_write_tokens.saturating_add(rhs.cache_write_tokens),
            estimated: self.estimated || rhs.estimated,
            reasoning_tokens: self.reasoning_tokens.saturating_add(rhs.reasoning_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

/// Why the model stopped producing a response, normalized across protocols.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants tool results before it goes on.
    ToolUse,
    /// The response hit the output token cap.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The model or a provider filter declined to answer.
    Refusal,
    /// Something else, kept verbatim.
    Other(String),
}

impl StopReason {
    /// The stable lowercase name (`end_turn`, `tool_use`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::Refusal => "refusal",
            Self::Other(s) => s,
        }
    }
}

impl From<String> for StopReason {
    fn from(s: String) -> Self {
        match s.as_str() {
            "end_turn" => Self::EndTurn,
            "tool_use" => Self::ToolUse,
            "max_tokens" => Self::MaxTokens,
            "stop_sequence" => Self::StopSequence,
            "refusal" => Self::Refusal,
            _ => Self::Other(s),
        }
    }
}

impl From<StopReason> for String {
    fn from(r: StopReason) -> String {
        match r {
            StopReason::Other(s) => s,
            other => other.as_str().to_owned(),
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_add_and_measure_context() {
        let a = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 100,
            cache_write_tokens: 7,
            estimated: false,
            reasoning_tokens: 0,
        };
        let b = Usage {
            input_tokens: 1,
            output_tokens: 1,
            cache_read_tokens: 1,
            cache_write_tokens: 1,
            estimated: false,
            reasoning_tokens: 0,
        };
        let mut c = a;
        c += b;
        assert_eq!(c, a + b);
        assert_eq!(a.context_tokens(), 117);
        assert_eq!(a.total_tokens(), 122);
        assert!(Usage::default().is_zero());
    }

    #[test]
    fn usage_missing_fields_default_to_zero() {
        let u: Usage = serde_json::from_str(r#"{"input_tokens":3}"#).unwrap();
        assert_eq!(u, Usage { input_tokens: 3, ..Usage::default() });
    }

    #[test]
    fn stop_reason_round_trips_including_unknown() {
        for r in [
            StopReason::EndTurn,
            StopReason::ToolUse,
            StopReason::MaxTokens,
            StopReason::StopSequence,
            StopReason::Refusal,
            StopReason::Other("pause_turn".into()),
        ] {
            let s = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<StopReason>(&s).unwrap(), r);
        }
        assert_eq!(serde_json::to_string(&StopReason::ToolUse).unwrap(), "\"tool_use\"");
    }
}
