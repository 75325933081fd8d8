//! The Chat Completions shapes octo reads, for streamed chunks and whole responses. Every field
//! is optional: compatible servers leave out different ones.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub choices: Vec<Choice>,
    pub usage: Option<WireUsage>,
    pub error: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    /// `delta` in a streamed chunk.
    pub delta: Option<Delta>,
    /// `message` in a whole response.
    pub message: Option<Delta>,
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    pub content: Option<String>,
    pub reasoning_content: Option<String>,
    pub reasoning: Option<String>,
    pub tool_calls: Option<Vec<WireCall>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireCall {
    pub index: Option<usize>,
    pub id: Option<String>,
    pub function: Option<WireFunction>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireFunction {
    pub name: Option<String>,
    pub arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek's name for cached prompt tokens.
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct PromptDetails {
    pub cached_tokens: Option<u64>,
}

impl WireUsage {
    /// `prompt_tokens` is the whole prompt and the cached count a subset of it: split them into
    /// octo's non-overlapping buckets.
    pub fn normalize(&self) -> octo_agent::Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .unwrap_or(0)
            .min(prompt);
        octo_agent::Usage {
            input_tokens: prompt - cached,
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            estimated: false,
            reasoning_tokens: 0,
        }
    }
}

/// The arguments as a string: normally a JSON-encoded string, but a few servers send the object
/// itself.
pub(crate) fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
