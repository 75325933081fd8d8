//! Scripted responses in the Anthropic Messages streaming format.
//!
//! ```
//! use octo_testkit::anthropic::Reply;
//! use serde_json::json;
//!
//! let body = Reply::new().text("Let me look.").tool_use("toolu_1", "read_file", json!({"path": "a.rs"})).sse();
//! assert!(body.contains("event: message_start"));
//! assert!(body.contains("\"stop_reason\":\"tool_use\""));
//! ```

use crate::sse::{chunks, SseBody};
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Block {
    Text(String),
    Thinking(String, String),
    RedactedThinking(String),
    ToolUse(String, String, Value),
}

/// One assistant response, built block by block, rendered as an SSE body or a JSON body.
#[derive(Debug, Clone)]
pub struct Reply {
    blocks: Vec<Block>,
    stop_reason: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    cache_read: u64,
    cache_write: u64,
    chunk: usize,
    model: String,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            blocks: Vec::new(),
            stop_reason: None,
            input_tokens: 12,
            output_tokens: 7,
            cache_read: 0,
            cache_write: 0,
            chunk: 8,
            model: "claude-test".into(),
        }
    }
}

impl Reply {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a text block.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    /// Adds a thinking block with its signature.
    pub fn thinking(mut self, thinking: impl Into<String>, signature: impl Into<String>) -> Self {
        self.blocks.push(Block::Thinking(thinking.into(), signature.into()));
        self
    }

    /// Adds a redacted thinking block.
    pub fn redacted_thinking(mut self, data: impl Into<String>) -> Self {
        self.blocks.push(Block::RedactedThinking(data.into()));
        self
    }

    /// Adds a tool call; its arguments stream as several `input_json_delta` fragments.
    pub fn tool_use(mut self, id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        self.blocks.push(Block::ToolUse(id.into(), name.into(), input));
        self
    }

    /// Sets the stop reason (default: `tool_use` when there are tool calls, else `end_turn`).
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// Sets the usage buckets as Anthropic reports them.
    pub fn usage(mut self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> Self {
        self.input_tokens = input;
        self.output_tokens = output;
        self.cache_read = cache_read;
        self.cache_write = cache_write;
        self
    }

    /// Sets how many characters each text or argument delta carries (default 8).
    pub fn chunk_size(mut self, size: usize) -> Self {
        self.chunk = size.max(1);
        self
    }

    fn stop(&self) -> String {
        self.stop_reason.clone().unwrap_or_else(|| {
            let tools = self.blocks.iter().any(|b| matches!(b, Block::ToolUse(..)));
            if tools { "tool_use" } else { "end_turn" }.into()
        })
    }

    /// The response as a streaming SSE body, ending with `message_stop`.
    pub fn sse(&self) -> String {
        self.sse_events(true)
    }

    /// The same stream cut off before `message_delta` and `message_stop`, as when a connection
    /// drops mid-response.
    pub fn sse_truncated(&self) -> String {
        self.sse_events(false)
    }

    fn sse_events(&self, complete: bool) -> String {
        let mut b = SseBody::new().event(
            Some("message_start"),
            &json!({"type": "message_start", "message": {
                "id": "msg_test", "type": "message", "role": "assistant", "content": [],
                "model": self.model, "stop_reason": null, "stop_sequence": null,
                "usage": {
                    "input_tokens": self.input_tokens, "output_tokens": 1,
                    "cache_read_input_tokens": self.cache_read,
                    "cache_creation_input_tokens": self.cache_write
                }
            }}),
        );
        b = b.event(Some("ping"), &json!({"type": "ping"}));
        for (index, block) in self.blocks.iter().enumerate() {
            let (start, deltas): (Value, Vec<Value>) = match block {
                Block::Text(t) => (
                    json!({"type": "text", "text": ""}),
                    chunks(t, self.chunk)
                        .into_iter()
                        .map(|c| json!({"type": "text_delta", "text": c}))
                        .collect(),
                ),
                Block::Thinking(t, sig) => {
                    let mut d: Vec<Value> = chunks(t, self.chunk)
                        .into_iter()
                        .map(|c| json!({"type": "thinking_delta", "thinking": c}))
                        .collect();
                    d.push(json!({"type": "signature_delta", "signature": sig}));
                    (json!({"type": "thinking", "thinking": ""}), d)
                }
                Block::RedactedThinking(data) => (json!({"type": "redacted_thinking", "data": data}), vec![]),
                Block::ToolUse(id, name, input) => (
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    chunks(&input.to_string(), self.chunk)
                        .into_iter()
                        .map(|c| json!({"type": "input_json_delta", "partial_json": c}))
                        .collect(),
                ),
            };
            b = b.event(
                Some("content_block_start"),
                &json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                b = b.event(
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                );
            }
            b = b.event(Some("content_block_stop"), &json!({"type": "content_block_stop", "index": index}));
        }
        if complete {
            b = b
                .event(
                    Some("message_delta"),
                    &json!({"type": "message_delta",
                        "delta": {"stop_reason": self.stop(), "stop_sequence": null},
                        "usage": {"output_tokens": self.output_tokens}}),
                )
                .event(Some("message_stop"), &json!({"type": "message_stop"}));
        }
        b.build()
    }

    /// The response as a non-streaming JSON body.
    pub fn json(&self) -> Value {
        let content: Vec<Value> = self
            .blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => json!({"type": "text", "text": t}),
                Block::Thinking(t, s) => json!({"type": "thinking", "thinking": t, "signature": s}),
                Block::RedactedThinking(d) => json!({"type": "redacted_thinking", "data": d}),
                Block::ToolUse(id, name, input) => {
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
            })
            .collect();
        json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": self.stop(), "stop_sequence": null,
            "usage": {
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_input_tokens": self.cache_read, "cache_creation_input_tokens": self.cache_write
            }
        })
    }
}

/// An Anthropic error body (`{"type":"error","error":{...}}`).
pub fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_lines(sse: &str) -> Vec<Value> {
        sse.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn tool_arguments_reassemble() {
        let input = json!({"path": "src/main.rs", "limit": 20});
        let sse = Reply::new().chunk_size(3).tool_use("t", "read_file", input.clone()).sse();
        let joined: String = data_lines(&sse)
            .iter()
            .filter(|d| d["delta"]["type"] == "input_json_delta")
            .map(|d| d["delta"]["partial_json"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), input);
        let last = data_lines(&sse).pop().unwrap();
        assert_eq!(last["type"], "message_stop");
    }

    #[test]
    fn truncated_stream_has_no_stop() {
        let sse = Reply::new().text("hi").sse_truncated();
        assert!(!sse.contains("message_stop"));
        assert!(!sse.contains("message_delta"));
    }

    #[test]
    fn json_body_has_every_block() {
        let v = Reply::new().thinking("t", "s").redacted_thinking("r").text("x").usage(1, 2, 3, 4).json();
        assert_eq!(v["content"].as_array().unwrap().len(), 3);
        assert_eq!(v["usage"]["cache_read_input_tokens"], 3);
        assert_eq!(v["stop_reason"], "end_turn");
    }
}
