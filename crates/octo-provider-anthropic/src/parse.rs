//! Reading Anthropic responses: the SSE event stream and the non-streaming JSON body.

use crate::wire::{WireBlock, WireEvent};
use octo_agent::{ContentBlock, Message, ProviderError, Response, Role, StopReason, StreamEvent, Usage};
use octo_provider::classify::classify_stream_error;
use octo_provider::sse::SseEvent;
use octo_provider::{synthetic_tool_id, EndpointInfo, StreamParser};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
enum Open {
    Text,
    Thinking,
    Tool(usize),
    Other,
}

/// Turns Anthropic's event stream into [`StreamEvent`]s.
#[derive(Debug, Clone)]
pub struct AnthropicParser {
    endpoint: Arc<EndpointInfo>,
    secret: Option<Arc<str>>,
    blocks: HashMap<usize, Open>,
    tools: usize,
    usage: Usage,
    stopped: bool,
    finished: bool,
    started: bool,
}

impl AnthropicParser {
    pub(crate) fn new(endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>) -> Self {
        Self {
            endpoint,
            secret,
            blocks: HashMap::new(),
            tools: 0,
            usage: Usage::default(),
            stopped: false,
            finished: false,
            started: false,
        }
    }

    fn malformed(&self, what: &str, detail: impl std::fmt::Display) -> ProviderError {
        ProviderError::MalformedStream {
            message: format!("endpoint `{}` sent an unreadable `{what}` event: {detail}", self.endpoint.name),
        }
    }

    fn block_start(&mut self, index: usize, block: WireBlock, out: &mut Vec<StreamEvent>) {
        let open = match block.kind.as_str() {
            "text" => {
                if let Some(t) = block.text.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta(t));
                }
                Open::Text
            }
            "thinking" => {
                if let Some(t) = block.thinking.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::ThinkingDelta(t));
                }
                if let Some(s) = block.signature.filter(|s| !s.is_empty()) {
                    out.push(StreamEvent::ThinkingSignature(s));
                }
                Open::Thinking
            }
            "redacted_thinking" => {
                out.push(StreamEvent::RedactedThinking(block.data.unwrap_or_default()));
                Open::Other
            }
            "tool_use" => {
                let i = self.tools;
                self.tools += 1;
                out.push(StreamEvent::ToolUseStart {
                    index: i,
                    // An empty id would poison every later request of the session.
                    id: block.id.filter(|id| !id.is_empty()).unwrap_or_else(|| synthetic_tool_id("toolu")),
                    name: block.name.unwrap_or_default(),
                });
                // Streaming sends `{}` here and the arguments as deltas; a gateway that sends the
                // whole input up front is honoured.
                if let Some(input) = block.input.filter(|v| v.as_object().is_some_and(|o| !o.is_empty())) {
                    out.push(StreamEvent::ToolUseInputDelta { index: i, partial_json: input.to_string() });
                }
                Open::Tool(i)
            }
            // Server-side tools and anything newer: not ours to run or show.
            _ => Open::Other,
        };
        self.blocks.insert(index, open);
    }
}

fn stop_reason(s: String) -> StopReason {
    StopReason::from(s)
}

impl StreamParser for AnthropicParser {
    fn event(&mut self, sse: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let ev: WireEvent = match serde_json::from_str(&sse.data) {
            Ok(ev) => ev,
            Err(e) => {
                let what = if sse.event.is_empty() { "data" } else { sse.event.as_str() };
                return Err(self.malformed(what, e));
            }
        };
        let kind = if ev.kind.is_empty() { sse.event.as_str() } else { ev.kind.as_ref() };
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(u) = ev.message.and_then(|m| m.usage) {
                    u.apply(&mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
            }
            "content_block_start" => {
                let (Some(index), Some(block)) = (ev.index, ev.content_block) else {
                    return Err(self.malformed(kind, "missing index or content_block"));
                };
                self.block_start(index, block, out);
            }
            "content_block_delta" => {
                let (Some(index), Some(delta)) = (ev.index, ev.delta) else {
                    return Err(self.malformed(kind, "missing index or delta"));
                };
                let open = self.blocks.get(&index).copied();
                match (delta.kind.as_ref(), open) {
                    ("text_delta", _) => out.push(StreamEvent::TextDelta(delta.text.unwrap_or_default())),
                    ("thinking_delta", _) => {
                        out.push(StreamEvent::ThinkingDelta(delta.thinking.unwrap_or_default()));
                    }
                    ("signature_delta", _) => {
                        out.push(StreamEvent::ThinkingSignature(delta.signature.unwrap_or_default()));
                    }
                    ("input_json_delta", Some(Open::Tool(i))) => out.push(StreamEvent::ToolUseInputDelta {
                        index: i,
                        partial_json: delta.partial_json.unwrap_or_default(),
                    }),
                    ("input_json_delta", _) => {
                        return Err(self.malformed(
                            kind,
                            format!("arguments for block {index}, which is not a tool call"),
                        ))
                    }
                    _ => {} // citations and newer delta kinds
                }
            }
            "content_block_stop" => {
                if let Some(Open::Tool(i)) = ev.index.and_then(|i| self.blocks.get(&i).copied()) {
                    out.push(StreamEvent::ToolUseStop { index: i });
                }
            }
            "message_delta" => {
                if let Some(u) = ev.usage {
                    u.apply(&mut self.usage);
                    out.push(StreamEvent::Usage(self.usage));
                }
                if let Some(r) = ev.delta.and_then(|d| d.stop_reason) {
                    self.stopped = true;
                    out.push(StreamEvent::Stop(stop_reason(r)));
                }
            }
            "message_stop" => self.finished = true,
            "error" => {
                let (k, m) = ev.error.map(|e| (e.kind, e.message)).unwrap_or_default();
                return Err(classify_stream_error(&k, &m, &self.endpoint, self.secret.as_deref()));
            }
            _ => {} // ping and event types added after this was written
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.stopped {
            // Everything arrived; only the closing `message_stop` is missing.
            return Ok(());
        }
        let name = &self.endpoint.name;
        Err(ProviderError::Transport {
            message: if self.started {
                format!("endpoint `{name}` closed the connection before the response was complete")
            } else {
                format!("endpoint `{name}` sent an empty response (no events)")
            },
        })
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        out.extend(octo_provider::response_events(response_from_json(body, &self.endpoint)?));
        self.finished = true;
        Ok(())
    }
}

/// Parses a non-streaming response body.
pub(crate) fn response_from_json(body: &[u8], endpoint: &EndpointInfo) -> Result<Response, ProviderError> {
    let malformed = |detail: String| ProviderError::MalformedStream {
        message: format!("endpoint `{}` sent an unreadable response: {detail}", endpoint.name),
    };
    let ev: WireEvent = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
    if ev.kind == "error" {
        let (k, m) = ev.error.map(|e| (e.kind, e.message)).unwrap_or_default();
        return Err(classify_stream_error(&k, &m, endpoint, None));
    }
    let msg: crate::wire::WireMessage = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
    let mut usage = Usage::default();
    if let Some(u) = &msg.usage {
        u.apply(&mut usage);
    }
    let content: Vec<ContentBlock> = msg
        .content
        .into_iter()
        .filter_map(|b| match b.kind.as_str() {
            "text" => Some(ContentBlock::Text { text: b.text.unwrap_or_default() }),
            "thinking" => Some(ContentBlock::Thinking {
                thinking: b.thinking.unwrap_or_default(),
                signature: b.signature,
            }),
            "redacted_thinking" => Some(ContentBlock::RedactedThinking { data: b.data.unwrap_or_default() }),
            "tool_use" => Some(ContentBlock::ToolUse {
                id: b.id.filter(|id| !id.is_empty()).unwrap_or_else(|| synthetic_tool_id("toolu")),
                name: b.name.unwrap_or_default(),
                input: b.input.filter(serde_json::Value::is_object).unwrap_or_else(|| serde_json::json!({})),
            }),
            _ => None,
        })
        .collect();
    let message = Message::new(Role::Assistant, content);
    let stop_reason = msg.stop_reason.map(stop_reason).unwrap_or(if message.has_tool_use() {
        StopReason::ToolUse
    } else {
        StopReason::EndTurn
    });
    Ok(Response { message, usage, stop_reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use octo_provider::sse::SseDecoder;
    use octo_testkit::anthropic::Reply;
    use serde_json::json;

    fn parse_chunks(chunks: &[&[u8]]) -> (Vec<StreamEvent>, bool) {
        let mut d = SseDecoder::new();
        let mut p = AnthropicParser::new(Arc::new(EndpointInfo::default()), None);
        let mut sse = Vec::new();
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c, &mut sse);
        }
        d.finish(&mut sse);
        for ev in sse {
            p.event(ev, &mut out).unwrap();
        }
        (out, p.finished())
    }

    #[test]
    fn same_events_whatever_the_chunking() {
        let body = Reply::new()
            .thinking("step one, step two", "sig")
            .text("Hé, the answer ✓ is")
            .tool_use("t1", "grep", json!({"pattern": "fn main", "path": "src"}))
            .chunk_size(4)
            .sse()
            .replace('\n', "\r\n");
        let bytes = body.as_bytes();
        let (whole, finished) = parse_chunks(&[bytes]);
        assert!(finished);
        assert!(whole.len() > 10);
        for i in 0..=bytes.len() {
            assert_eq!(parse_chunks(&[&bytes[..i], &bytes[i..]]).0, whole, "split at byte {i}");
        }
    }

    #[test]
    fn end_without_stop_is_an_error_but_stop_without_message_stop_is_fine() {
        let mut p = AnthropicParser::new(Arc::new(EndpointInfo::default()), None);
        assert!(p.end(&mut Vec::new()).is_err());
        p.stopped = true;
        assert!(p.end(&mut Vec::new()).is_ok());
    }

    #[test]
    fn non_streaming_error_body_is_classified() {
        let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let e = response_from_json(body, &EndpointInfo::default()).unwrap_err();
        assert!(matches!(e, ProviderError::Overloaded { .. }));
        let e = response_from_json(b"not json", &EndpointInfo::default()).unwrap_err();
        assert!(matches!(e, ProviderError::MalformedStream { .. }));
    }
}
