//! The Responses API shapes octo reads: stream events and the response object (whole, or inside
//! `response.completed`). Every field is optional: servers that copy the API leave out different
//! ones, and event types octo does not know are read as [`Event::Other`] and ignored.

use serde::Deserialize;
use serde_json::Value;

/// One streamed event, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Event {
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: usize,
        item: Item,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: usize,
        item: Item,
    },
    #[serde(rename = "response.output_text.delta", alias = "response.refusal.delta")]
    TextDelta {
        #[serde(default)]
        delta: String,
    },
    #[serde(
        rename = "response.reasoning_summary_text.delta",
        alias = "response.reasoning_text.delta",
        alias = "response.reasoning.delta"
    )]
    ReasoningDelta {
        #[serde(default)]
        output_index: usize,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    SummaryPart {
        #[serde(default)]
        output_index: usize,
        #[serde(default)]
        summary_index: usize,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        output_index: usize,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        #[serde(default)]
        output_index: usize,
        #[serde(default)]
        arguments: Option<String>,
    },
    #[serde(rename = "response.completed", alias = "response.done")]
    Completed { response: WireResponse },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: WireResponse },
    #[serde(rename = "response.failed")]
    Failed { response: WireResponse },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<Value>,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        error: Option<WireError>,
    },
    #[serde(other)]
    Other,
}

/// An output item: a message, a function call or reasoning.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Item {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub id: Option<String>,
    /// A function call's id, which its output names.
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<Value>,
    /// A message's parts (`output_text`, `refusal`).
    #[serde(default)]
    pub content: Option<Vec<Part>>,
    /// Reasoning's readable summary parts.
    #[serde(default)]
    pub summary: Option<Vec<Part>>,
    /// Reasoning the vendor keeps encrypted (with `store: false`).
    #[serde(default)]
    pub encrypted_content: Option<String>,
}

/// A text part of a message or a summary.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Part {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
}

/// The response object.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireResponse {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub output: Vec<Item>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub incomplete_details: Option<Incomplete>,
    #[serde(default)]
    pub error: Option<WireError>,
}

/// Why a response is incomplete.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Incomplete {
    #[serde(default)]
    pub reason: Option<String>,
}

/// An error object.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub code: Option<Value>,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

impl WireError {
    /// The most specific kind (`code` before `type`) and the message.
    pub fn parts(&self) -> (String, String) {
        let code = match &self.code {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let kind = [&code, &self.kind]
            .into_iter()
            .flatten()
            .find(|k| octo_provider::classify::is_known_stream_error(k))
            .or(code.as_ref())
            .or(self.kind.as_ref())
            .cloned()
            .unwrap_or_default();
        // The Responses API's own codes for a request that can never succeed as it is.
        let kind = if kind.starts_with("invalid_") && kind != "invalid_request_error"
            || kind.contains("image")
            || kind == "content_filter"
        {
            "invalid_request_error".to_owned()
        } else {
            kind
        };
        (kind, self.message.clone().unwrap_or_else(|| "the server reported an error".into()))
    }
}

/// Token counts: `input_tokens` is the whole prompt, the cached tokens a part of it;
/// `output_tokens` includes the reasoning tokens.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    pub output_tokens_details: Option<OutputDetails>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct InputDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct OutputDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

impl WireUsage {
    /// octo's non-overlapping buckets: the cached part of the prompt is its own bucket.
    pub fn normalize(&self) -> octo_agent::Usage {
        let input = self.input_tokens.unwrap_or(0);
        let cached = self.input_tokens_details.as_ref().and_then(|d| d.cached_tokens).unwrap_or(0).min(input);
        octo_agent::Usage {
            input_tokens: input - cached,
            output_tokens: self.output_tokens.unwrap_or(0),
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            estimated: false,
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

/// A call's arguments as text: normally a JSON-encoded string; a few servers send the object.
pub(crate) fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Item {
    /// The text of a message item's parts.
    pub fn text(&self) -> String {
        join_parts(self.content.as_deref())
    }

    /// The reasoning summary's text, parts separated by a blank line.
    pub fn summary_text(&self) -> String {
        self.summary
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter_map(|p| p.text.as_deref())
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

fn join_parts(parts: Option<&[Part]>) -> String {
    parts.unwrap_or_default().iter().filter_map(|p| p.text.as_deref().or(p.refusal.as_deref())).collect()
}
