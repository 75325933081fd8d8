//! The Anthropic wire shapes octo reads. Fields octo does not use are ignored; every field is
//! optional so a gateway that leaves one out does not break the stream.

use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// One streaming event (`data:` payload) or a whole non-streaming message.
#[derive(Debug, Deserialize)]
pub(crate) struct WireEvent<'a> {
    /// Borrowed from the SSE data when it has no escapes: the hot path allocates only for text.
    #[serde(rename = "type", default, borrow)]
    pub kind: Cow<'a, str>,
    pub index: Option<usize>,
    pub message: Option<WireMessage>,
    pub content_block: Option<WireBlock>,
    #[serde(borrow)]
    pub delta: Option<WireDelta<'a>>,
    pub usage: Option<WireUsage>,
    pub error: Option<WireError>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireMessage {
    #[serde(default)]
    pub content: Vec<WireBlock>,
    pub stop_reason: Option<String>,
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireBlock {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub signature: Option<String>,
    pub data: Option<String>,
    pub id: Option<String>,
    pub name: Option<String>,
    pub input: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireDelta<'a> {
    #[serde(rename = "type", default, borrow)]
    pub kind: Cow<'a, str>,
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub signature: Option<String>,
    pub partial_json: Option<String>,
    pub stop_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireError {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

impl WireUsage {
    /// Folds the fields this report has into `usage` (Anthropic reports input and cache
    /// buckets at message start and the cumulative output at message delta).
    pub fn apply(&self, usage: &mut octo_agent::Usage) {
        if let Some(v) = self.input_tokens {
            usage.input_tokens = v;
        }
        if let Some(v) = self.output_tokens {
            usage.output_tokens = v;
        }
        if let Some(v) = self.cache_read_input_tokens {
            usage.cache_read_tokens = v;
        }
        if let Some(v) = self.cache_creation_input_tokens {
            usage.cache_write_tokens = v;
        }
    }
}
