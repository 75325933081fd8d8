//! Scripted responses in the OpenAI Chat Completions streaming format.
//!
//! ```
//! use octo_testkit::openai::Reply;
//!
//! let body = Reply::new().text("Hi").tool_call("call_1", "glob", r#"{"pattern":"*.rs"}"#).sse();
//! assert!(body.ends_with("data: [DONE]\n\n"));
//! assert!(body.contains("\"finish_reason\":\"tool_calls\""));
//! ```

use crate::sse::{chunks, SseBody};
use serde_json::{json, Value};

/// How cached prompt tokens are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheShape {
    /// `usage.prompt_tokens_details.cached_tokens` (OpenAI, most compatibles).
    OpenAi,
    /// `usage.prompt_cache_hit_tokens` / `prompt_cache_miss_tokens` (DeepSeek).
    DeepSeek,
}

/// One assistant response as `chat.completion.chunk`s.
#[derive(Debug, Clone)]
pub struct Reply {
    reasoning: Option<String>,
    reasoning_field: &'static str,
    text: Option<String>,
    tool_calls: Vec<(String, String, String)>,
    finish_reason: Option<String>,
    prompt_tokens: u64,
    completion_tokens: u64,
    cached_tokens: u64,
    cache_shape: CacheShape,
    chunk: usize,
    done: bool,
    usage_chunk: bool,
    model: String,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            reasoning: None,
            reasoning_field: "reasoning_content",
            text: None,
            tool_calls: Vec::new(),
            finish_reason: None,
            prompt_tokens: 20,
            completion_tokens: 6,
            cached_tokens: 0,
            cache_shape: CacheShape::OpenAi,
            chunk: 8,
            done: true,
            usage_chunk: true,
            model: "gpt-test".into(),
        }
    }
}

impl Reply {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answer text, streamed in `delta.content` fragments.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Reasoning streamed in `delta.reasoning_content` (DeepSeek, Qwen, Kimi).
    pub fn reasoning(mut self, text: impl Into<String>) -> Self {
        self.reasoning = Some(text.into());
        self
    }

    /// Reasoning streamed in `delta.reasoning` instead (OpenRouter, some gateways).
    pub fn reasoning_in_reasoning_field(mut self) -> Self {
        self.reasoning_field = "reasoning";
        self
    }

    /// A tool call whose `arguments` string streams in fragments; the id and name come only in
    /// the first fragment, as real servers send them.
    pub fn tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        self.tool_calls.push((id.into(), name.into(), arguments.into()));
        self
    }

    /// Sets `finish_reason` (default `tool_calls` with tool calls, else `stop`).
    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// Sends no `finish_reason` at all.
    pub fn no_finish_reason(mut self) -> Self {
        self.finish_reason = Some(String::new());
        self
    }

    /// Usage as reported: the whole prompt, the completion, and the cached subset of the prompt.
    pub fn usage(mut self, prompt: u64, completion: u64, cached: u64, shape: CacheShape) -> Self {
        self.prompt_tokens = prompt;
        self.completion_tokens = completion;
        self.cached_tokens = cached;
        self.cache_shape = shape;
        self
    }

    /// Leaves out the final usage chunk.
    pub fn without_usage(mut self) -> Self {
        self.usage_chunk = false;
        self
    }

    /// Leaves out the `data: [DONE]` sentinel.
    pub fn without_done(mut self) -> Self {
        self.done = false;
        self
    }

    /// Characters per fragment (default 8).
    pub fn chunk_size(mut self, size: usize) -> Self {
        self.chunk = size.max(1);
        self
    }

    fn finish(&self) -> Option<String> {
        match &self.finish_reason {
            Some(r) if r.is_empty() => None,
            Some(r) => Some(r.clone()),
            None => Some(if self.tool_calls.is_empty() { "stop" } else { "tool_calls" }.into()),
        }
    }

    fn usage_json(&self) -> Value {
        let mut u = json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        });
        match self.cache_shape {
            CacheShape::OpenAi => u["prompt_tokens_details"] = json!({"cached_tokens": self.cached_tokens}),
            CacheShape::DeepSeek => {
                u["prompt_cache_hit_tokens"] = json!(self.cached_tokens);
                u["prompt_cache_miss_tokens"] =
                    json!(self.prompt_tokens - self.cached_tokens.min(self.prompt_tokens));
            }
        }
        u
    }

    fn chunk_json(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
    }

    /// The response as a streaming SSE body.
    pub fn sse(&self) -> String {
        let mut b =
            SseBody::new().event(None, &self.chunk_json(json!({"role": "assistant", "content": ""}), None));
        if let Some(r) = &self.reasoning {
            for c in chunks(r, self.chunk) {
                b = b.event(None, &self.chunk_json(json!({ self.reasoning_field: c }), None));
            }
        }
        if let Some(t) = &self.text {
            for c in chunks(t, self.chunk) {
                b = b.event(None, &self.chunk_json(json!({"content": c}), None));
            }
        }
        for (index, (id, name, args)) in self.tool_calls.iter().enumerate() {
            b = b.event(
                None,
                &self.chunk_json(
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}}]}),
                    None,
                ),
            );
            for c in chunks(args, self.chunk) {
                b = b.event(
                    None,
                    &self.chunk_json(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": c}}]}),
                        None,
                    ),
                );
            }
        }
        if let Some(f) = self.finish() {
            b = b.event(None, &self.chunk_json(json!({}), Some(&f)));
        }
        if self.usage_chunk {
            b = b.event(
                None,
                &json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1_700_000_000,
                    "model": self.model, "choices": [], "usage": self.usage_json()}),
            );
        }
        if self.done {
            b = b.raw_data("[DONE]");
        }
        b.build()
    }

    /// The response as a non-streaming `chat.completion` JSON body.
    pub fn json(&self) -> Value {
        let mut message = json!({"role": "assistant", "content": self.text});
        if let Some(r) = &self.reasoning {
            message[self.reasoning_field] = json!(r);
        }
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
                .collect();
        }
        json!({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 1_700_000_000, "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish()}],
            "usage": self.usage_json()
        })
    }
}

/// An OpenAI-style error body (`{"error":{...}}`).
pub fn error_body(kind: &str, code: Option<&str>, message: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "code": code, "param": null}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks_of(sse: &str) -> Vec<Value> {
        sse.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn two_tool_calls_reassemble_by_index() {
        let sse = Reply::new()
            .chunk_size(4)
            .tool_call("a", "x", r#"{"n":1}"#)
            .tool_call("b", "y", r#"{"m":"two"}"#)
            .sse();
        let mut args = [String::new(), String::new()];
        for c in chunks_of(&sse) {
            if let Some(calls) = c["choices"][0]["delta"]["tool_calls"].as_array() {
                for call in calls {
                    let i = call["index"].as_u64().unwrap() as usize;
                    args[i].push_str(call["function"]["arguments"].as_str().unwrap());
                }
            }
        }
        assert_eq!(args, [r#"{"n":1}"#, r#"{"m":"two"}"#]);
        assert!(sse.contains(r#""finish_reason":"tool_calls""#));
    }

    #[test]
    fn usage_shapes() {
        let o = Reply::new().usage(100, 5, 80, CacheShape::OpenAi).json();
        assert_eq!(o["usage"]["prompt_tokens_details"]["cached_tokens"], 80);
        let d = Reply::new().usage(100, 5, 80, CacheShape::DeepSeek).json();
        assert_eq!(d["usage"]["prompt_cache_hit_tokens"], 80);
        assert_eq!(d["usage"]["prompt_cache_miss_tokens"], 20);
    }

    #[test]
    fn optional_parts_can_be_left_out() {
        let sse = Reply::new().text("x").without_done().without_usage().no_finish_reason().sse();
        assert!(!sse.contains("[DONE]"));
        assert!(!sse.contains("usage"));
        assert!(!sse.contains("finish_reason\":\"stop"));
    }
}
