//! Scripted responses in the OpenAI Responses API streaming format: `response.created`, output
//! items with their deltas, and `response.completed` (or `.incomplete`) with usage, as the
//! documented wire format has them.
//!
//! ```
//! use octo_testkit::responses::Reply;
//!
//! let body = Reply::new().reasoning("rs_1", "Looking.", "ENC").call("call_1", "glob", r#"{"pattern":"*.rs"}"#).sse();
//! assert!(body.contains("event: response.completed"));
//! assert!(body.contains("\"encrypted_content\":\"ENC\""));
//! ```

use crate::sse::{chunks, SseBody};
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Out {
    Reasoning { id: String, summary: String, encrypted: Option<String> },
    Text(String),
    Call { id: String, name: String, arguments: String },
}

/// One response as Responses API events.
#[derive(Debug, Clone)]
pub struct Reply {
    items: Vec<Out>,
    input_tokens: u64,
    output_tokens: u64,
    cached_tokens: u64,
    reasoning_tokens: u64,
    incomplete: Option<String>,
    completed: bool,
    chunk: usize,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            input_tokens: 20,
            output_tokens: 6,
            cached_tokens: 0,
            reasoning_tokens: 0,
            incomplete: None,
            completed: true,
            chunk: 8,
        }
    }
}

impl Reply {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }

    /// A reasoning item: its summary streams as `response.reasoning_summary_text.delta`, its
    /// encrypted content comes with `response.output_item.done` (empty: none).
    pub fn reasoning(mut self, id: &str, summary: &str, encrypted: &str) -> Self {
        let encrypted = (!encrypted.is_empty()).then(|| encrypted.to_owned());
        self.items.push(Out::Reasoning { id: id.into(), summary: summary.into(), encrypted });
        self
    }

    /// A message item whose text streams as `response.output_text.delta`.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.items.push(Out::Text(text.into()));
        self
    }

    /// A function call whose arguments stream as `response.function_call_arguments.delta`.
    pub fn call(mut self, call_id: &str, name: &str, arguments: &str) -> Self {
        self.items.push(Out::Call { id: call_id.into(), name: name.into(), arguments: arguments.into() });
        self
    }

    /// Usage: the whole prompt, its cached part, the output and its reasoning part.
    pub fn usage(mut self, input: u64, cached: u64, output: u64, reasoning: u64) -> Self {
        (self.input_tokens, self.cached_tokens, self.output_tokens, self.reasoning_tokens) =
            (input, cached, output, reasoning);
        self
    }

    /// Ends with `response.incomplete` for `reason` (`max_output_tokens`, `content_filter`).
    pub fn incomplete(mut self, reason: &str) -> Self {
        self.incomplete = Some(reason.into());
        self
    }

    /// Leaves out the closing `response.completed`.
    pub fn without_completed(mut self) -> Self {
        self.completed = false;
        self
    }

    /// Characters per delta (default 8).
    pub fn chunk_size(mut self, size: usize) -> Self {
        self.chunk = size.max(1);
        self
    }

    fn item_json(&self, item: &Out, index: usize, done: bool) -> Value {
        match item {
            Out::Reasoning { id, summary, encrypted } => {
                let mut v = json!({"type": "reasoning", "id": id, "summary": []});
                if done {
                    v["summary"] = json!([{"type": "summary_text", "text": summary}]);
                    if let Some(e) = encrypted {
                        v["encrypted_content"] = json!(e);
                    }
                }
                v
            }
            Out::Text(text) => {
                let content = if done {
                    json!([{"type": "output_text", "text": text, "annotations": []}])
                } else {
                    json!([])
                };
                json!({"type": "message", "id": format!("msg_{index}"), "role": "assistant", "status": if done {"completed"} else {"in_progress"}, "content": content})
            }
            Out::Call { id, name, arguments } => json!({
                "type": "function_call", "id": format!("fc_{index}"), "call_id": id, "name": name,
                "arguments": if done { arguments.as_str() } else { "" },
                "status": if done {"completed"} else {"in_progress"}
            }),
        }
    }

    /// The final response object.
    pub fn response_json(&self) -> Value {
        let output: Vec<Value> =
            self.items.iter().enumerate().map(|(i, it)| self.item_json(it, i, true)).collect();
        let status = if self.incomplete.is_some() { "incomplete" } else { "completed" };
        json!({
            "id": "resp_test", "object": "response", "status": status, "model": "gpt-test",
            "output": output,
            "incomplete_details": self.incomplete.as_ref().map(|r| json!({"reason": r})),
            "usage": {
                "input_tokens": self.input_tokens,
                "input_tokens_details": {"cached_tokens": self.cached_tokens},
                "output_tokens": self.output_tokens,
                "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
                "total_tokens": self.input_tokens + self.output_tokens
            }
        })
    }

    /// The response as a streaming SSE body.
    pub fn sse(&self) -> String {
        let mut seq = 0u64;
        let mut b = SseBody::new();
        let mut ev = |b: SseBody, name: &str, mut data: Value| {
            data["type"] = json!(name);
            data["sequence_number"] = json!(seq);
            seq += 1;
            b.event(Some(name), &data)
        };
        let created = json!({"id": "resp_test", "object": "response", "status": "in_progress", "output": []});
        b = ev(b, "response.created", json!({ "response": created }));
        for (i, item) in self.items.iter().enumerate() {
            b = ev(
                b,
                "response.output_item.added",
                json!({"output_index": i, "item": self.item_json(item, i, false)}),
            );
            match item {
                Out::Reasoning { id, summary, .. } => {
                    b = ev(
                        b,
                        "response.reasoning_summary_part.added",
                        json!({"item_id": id, "output_index": i, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
                    );
                    for c in chunks(summary, self.chunk) {
                        b = ev(
                            b,
                            "response.reasoning_summary_text.delta",
                            json!({"item_id": id, "output_index": i, "summary_index": 0, "delta": c}),
                        );
                    }
                    b = ev(
                        b,
                        "response.reasoning_summary_text.done",
                        json!({"item_id": id, "output_index": i, "summary_index": 0, "text": summary}),
                    );
                }
                Out::Text(text) => {
                    let id = format!("msg_{i}");
                    b = ev(
                        b,
                        "response.content_part.added",
                        json!({"item_id": id, "output_index": i, "content_index": 0, "part": {"type": "output_text", "text": ""}}),
                    );
                    for c in chunks(text, self.chunk) {
                        b = ev(
                            b,
                            "response.output_text.delta",
                            json!({"item_id": id, "output_index": i, "content_index": 0, "delta": c}),
                        );
                    }
                    b = ev(
                        b,
                        "response.output_text.done",
                        json!({"item_id": id, "output_index": i, "content_index": 0, "text": text}),
                    );
                }
                Out::Call { arguments, .. } => {
                    let id = format!("fc_{i}");
                    for c in chunks(arguments, self.chunk) {
                        b = ev(
                            b,
                            "response.function_call_arguments.delta",
                            json!({"item_id": id, "output_index": i, "delta": c}),
                        );
                    }
                    b = ev(
                        b,
                        "response.function_call_arguments.done",
                        json!({"item_id": id, "output_index": i, "arguments": arguments}),
                    );
                }
            }
            b = ev(
                b,
                "response.output_item.done",
                json!({"output_index": i, "item": self.item_json(item, i, true)}),
            );
        }
        if self.completed {
            let name = if self.incomplete.is_some() { "response.incomplete" } else { "response.completed" };
            b = ev(b, name, json!({ "response": self.response_json() }));
        }
        b.build()
    }
}
