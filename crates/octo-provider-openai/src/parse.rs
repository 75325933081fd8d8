//! Reading Chat Completions responses: streamed `chat.completion.chunk`s and whole bodies.

use crate::wire::{arguments_text, Chunk, WireCall};
use octo_agent::{ContentBlock, Message, ProviderError, Response, Role, StopReason, StreamEvent};
use octo_provider::classify::classify_stream_error;
use octo_provider::sse::SseEvent;
use octo_provider::{synthetic_tool_id, EndpointInfo, StreamParser};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Normalizes a `finish_reason`.
pub(crate) fn finish_reason(reason: &str, has_tool_calls: bool) -> StopReason {
    match reason {
        "tool_calls" | "function_call" => StopReason::ToolUse,
        // Some servers say `stop` after tool calls; the calls are what matters.
        "stop" | "eos" | "end_turn" if has_tool_calls => StopReason::ToolUse,
        "stop" | "eos" | "end_turn" => StopReason::EndTurn,
        "length" | "max_tokens" => StopReason::MaxTokens,
        "content_filter" | "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

fn error_parts(v: &Value) -> (String, String) {
    let field = |k: &str| match v.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    // The code is more specific, but servers put the known kind in either field.
    let (code, kind) = (field("code"), field("type"));
    let kind = [&code, &kind]
        .into_iter()
        .flatten()
        .find(|k| octo_provider::classify::is_known_stream_error(k))
        .or(code.as_ref())
        .or(kind.as_ref())
        .cloned()
        .unwrap_or_default();
    let message =
        v.get("message").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| v.to_string());
    (kind, message)
}

/// Turns a stream of chunks into [`StreamEvent`]s.
#[derive(Debug, Clone)]
pub struct OpenAiParser {
    endpoint: Arc<EndpointInfo>,
    secret: Option<Arc<str>>,
    /// Server call index → (our index, still open).
    calls: BTreeMap<usize, (usize, bool)>,
    last_call: Option<usize>,
    finish: Option<String>,
    done: bool,
    any_chunk: bool,
}

impl OpenAiParser {
    pub(crate) fn new(endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>) -> Self {
        Self {
            endpoint,
            secret,
            calls: BTreeMap::new(),
            last_call: None,
            finish: None,
            done: false,
            any_chunk: false,
        }
    }

    fn call(&mut self, position: usize, call: WireCall, out: &mut Vec<StreamEvent>) {
        // Servers that omit `index` send each call whole: a new id means a new call.
        let server_index = call.index.unwrap_or_else(|| match (&call.id, self.last_call) {
            (Some(_), _) | (None, None) => self.calls.keys().next_back().map_or(position, |k| k + 1),
            (None, Some(last)) => last,
        });
        let (name, args) = match call.function {
            Some(f) => (f.name, f.arguments.as_ref().map(arguments_text)),
            None => (None, None),
        };
        let ours = match self.calls.get(&server_index) {
            Some(&(ours, _)) => ours,
            None => {
                let ours = self.calls.len();
                self.calls.insert(server_index, (ours, true));
                out.push(StreamEvent::ToolUseStart {
                    index: ours,
                    id: call.id.filter(|s| !s.is_empty()).unwrap_or_else(|| synthetic_tool_id("call")),
                    name: name.unwrap_or_default(),
                });
                ours
            }
        };
        self.last_call = Some(server_index);
        if let Some(a) = args.filter(|a| !a.is_empty()) {
            out.push(StreamEvent::ToolUseInputDelta { index: ours, partial_json: a });
        }
    }

    fn close_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for (ours, open) in self.calls.values_mut() {
            if *open {
                *open = false;
                out.push(StreamEvent::ToolUseStop { index: *ours });
            }
        }
    }

    fn stop(&mut self, out: &mut Vec<StreamEvent>) {
        self.close_calls(out);
        if let Some(f) = self.finish.take() {
            out.push(StreamEvent::Stop(finish_reason(&f, !self.calls.is_empty())));
        }
    }
}

impl StreamParser for OpenAiParser {
    fn event(&mut self, sse: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = sse.data.trim();
        if data == "[DONE]" {
            self.stop(out);
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| ProviderError::MalformedStream {
            message: format!("endpoint `{}` sent an unreadable chunk: {e}", self.endpoint.name),
        })?;
        self.any_chunk = true;
        if let Some(err) = chunk.error {
            let (kind, message) = error_parts(&err);
            return Err(classify_stream_error(&kind, &message, &self.endpoint, self.secret.as_deref()));
        }
        for choice in chunk.choices {
            if let Some(delta) = choice.delta.or(choice.message) {
                if let Some(r) = delta.reasoning_content.or(delta.reasoning).filter(|r| !r.is_empty()) {
                    out.push(StreamEvent::ThinkingDelta(r));
                }
                if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta(t));
                }
                for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                    self.call(position, call, out);
                }
            }
            if let Some(f) = choice.finish_reason.filter(|f| !f.is_empty()) {
                self.finish = Some(f);
                // Close calls now; the Stop itself waits until usage (which may follow) is in.
                self.close_calls(out);
            }
        }
        if let Some(u) = chunk.usage {
            out.push(StreamEvent::Usage(u.normalize()));
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        let name = &self.endpoint.name;
        if self.finish.is_some() {
            // Everything arrived; only `[DONE]` is missing, which many servers never send.
            self.stop(out);
            return Ok(());
        }
        Err(ProviderError::Transport {
            message: if self.any_chunk {
                format!(
                    "endpoint `{name}` ended the stream without a finish_reason (connection closed early?)"
                )
            } else {
                format!("endpoint `{name}` sent an empty response (no chunks)")
            },
        })
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        out.extend(octo_provider::response_events(response_from_json(body, &self.endpoint)?));
        self.done = true;
        Ok(())
    }
}

/// Parses a non-streaming `chat.completion` body.
pub(crate) fn response_from_json(body: &[u8], endpoint: &EndpointInfo) -> Result<Response, ProviderError> {
    let chunk: Chunk = serde_json::from_slice(body).map_err(|e| ProviderError::MalformedStream {
        message: format!("endpoint `{}` sent an unreadable response: {e}", endpoint.name),
    })?;
    if let Some(err) = chunk.error {
        let (kind, message) = error_parts(&err);
        return Err(classify_stream_error(&kind, &message, endpoint, None));
    }
    let usage = chunk.usage.map(|u| u.normalize()).unwrap_or_default();
    let Some(choice) = chunk.choices.into_iter().next() else {
        return Err(ProviderError::MalformedStream {
            message: format!("endpoint `{}` answered with no choices", endpoint.name),
        });
    };
    let msg = choice.message.or(choice.delta).unwrap_or_default();
    let mut content = Vec::new();
    if let Some(r) = msg.reasoning_content.or(msg.reasoning).filter(|r| !r.is_empty()) {
        content.push(ContentBlock::Thinking { thinking: r, signature: None });
    }
    if let Some(t) = msg.content.filter(|t| !t.is_empty()) {
        content.push(ContentBlock::Text { text: t });
    }
    for call in msg.tool_calls.unwrap_or_default() {
        let (name, args) = match call.function {
            Some(f) => {
                (f.name.unwrap_or_default(), f.arguments.as_ref().map(arguments_text).unwrap_or_default())
            }
            None => (String::new(), String::new()),
        };
        // Unparseable arguments travel as the raw string; the agent answers the call with an
        // error the model can correct.
        let input = if args.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str::<Value>(&args).unwrap_or(Value::String(args))
        };
        content.push(ContentBlock::ToolUse {
            id: call.id.filter(|s| !s.is_empty()).unwrap_or_else(|| synthetic_tool_id("call")),
            name,
            input,
        });
    }
    let message = Message::new(Role::Assistant, content);
    let stop_reason = match choice.finish_reason {
        Some(f) => finish_reason(&f, message.has_tool_use()),
        None if message.has_tool_use() => StopReason::ToolUse,
        None => StopReason::EndTurn,
    };
    Ok(Response { message, usage, stop_reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use octo_provider::sse::SseDecoder;
    use octo_testkit::openai::Reply;

    fn parse(chunks: &[&[u8]]) -> Vec<StreamEvent> {
        let mut d = SseDecoder::new();
        let mut p = OpenAiParser::new(Arc::new(EndpointInfo::default()), None);
        let (mut sse, mut out) = (Vec::new(), Vec::new());
        for c in chunks {
            d.feed(c, &mut sse);
        }
        d.finish(&mut sse);
        for ev in sse {
            p.event(ev, &mut out).unwrap();
        }
        p.end(&mut out).unwrap();
        out
    }

    #[test]
    fn same_events_whatever_the_chunking() {
        let body = Reply::new()
            .reasoning("weighing options")
            .text("Calling twö tools")
            .tool_call("a", "glob", r#"{"pattern":"**/*.rs"}"#)
            .tool_call("b", "grep", r#"{"pattern":"fn main"}"#)
            .chunk_size(3)
            .sse();
        let bytes = body.as_bytes();
        let whole = parse(&[bytes]);
        assert!(whole.contains(&StreamEvent::Stop(StopReason::ToolUse)));
        assert_eq!(whole.iter().filter(|e| matches!(e, StreamEvent::ToolUseStop { .. })).count(), 2);
        for i in 0..=bytes.len() {
            assert_eq!(parse(&[&bytes[..i], &bytes[i..]]), whole, "split at byte {i}");
        }
    }

    #[test]
    fn finish_reasons_normalize() {
        assert_eq!(finish_reason("tool_calls", true), StopReason::ToolUse);
        assert_eq!(finish_reason("function_call", false), StopReason::ToolUse);
        assert_eq!(finish_reason("length", false), StopReason::MaxTokens);
        assert_eq!(finish_reason("stop", false), StopReason::EndTurn);
        assert_eq!(finish_reason("stop", true), StopReason::ToolUse);
        assert_eq!(finish_reason("content_filter", false), StopReason::Refusal);
        assert_eq!(
            finish_reason("insufficient_system_resource", false),
            StopReason::Other("insufficient_system_resource".into())
        );
    }

    #[test]
    fn a_completion_without_choices_is_malformed() {
        let e = response_from_json(br#"{"choices": []}"#, &EndpointInfo::default()).unwrap_err();
        assert!(matches!(e, ProviderError::MalformedStream { .. }));
    }
}
