//! Turning a stream of [`StreamEvent`]s back into a complete assistant message.

use crate::error::ProviderError;
use crate::message::{ContentBlock, Message, Role};
use crate::sender::{Response, StreamEvent};
use crate::usage::{StopReason, Usage};
use serde_json::Value;
use std::collections::HashMap;

/// Builds an assistant [`Message`] from streamed items.
///
/// Text and thinking deltas extend the current block of their kind; tool-call argument fragments
/// are concatenated per call `index` and parsed once, when the call stops (or when the response
/// ends). Arguments that never form valid JSON do not fail the response: the call is kept with an
/// empty input and [`Assembled::invalid_inputs`] records why, so the loop can answer it with an
/// error result the model can correct.
#[derive(Debug, Default)]
pub struct Assembler {
    blocks: Vec<ContentBlock>,
    tools: HashMap<usize, PendingTool>,
    usage: Usage,
    stop: Option<StopReason>,
}

#[derive(Debug)]
struct PendingTool {
    block: usize,
    json: String,
    done: bool,
}

/// The result of assembling one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembled {
    /// The message, with empty text blocks dropped.
    pub response: Response,
    /// Tool call id → why its arguments could not be parsed.
    pub invalid_inputs: HashMap<String, String>,
}

impl Assembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one item. Fails only on items that contradict the protocol (arguments for a call
    /// that never started).
    pub fn push(&mut self, event: StreamEvent) -> Result<(), ProviderError> {
        match event {
            StreamEvent::TextDelta(text) => match self.blocks.last_mut() {
                Some(ContentBlock::Text { text: t }) => t.push_str(&text),
                _ => self.blocks.push(ContentBlock::Text { text }),
            },
            StreamEvent::ThinkingDelta(delta) => match self.blocks.last_mut() {
                Some(ContentBlock::Thinking { thinking, signature: None }) => thinking.push_str(&delta),
                _ => self.blocks.push(ContentBlock::Thinking { thinking: delta, signature: None }),
            },
            StreamEvent::ThinkingSignature(sig) => match self.blocks.last_mut() {
                Some(ContentBlock::Thinking { signature, .. }) => *signature = Some(sig),
                _ => {
                    self.blocks
                        .push(ContentBlock::Thinking { thinking: String::new(), signature: Some(sig) });
                }
            },
            StreamEvent::RedactedThinking(data) => self.blocks.push(ContentBlock::RedactedThinking { data }),
            StreamEvent::Reasoning { id, summary, encrypted_content, source } => {
                // The summary streamed as thinking for the user; the item itself replaces it, so
                // the reasoning is kept (and counted) once.
                if matches!(self.blocks.last(), Some(ContentBlock::Thinking { thinking, signature: None }) if *thinking == summary)
                {
                    self.blocks.pop();
                }
                self.blocks.push(ContentBlock::Reasoning { id, summary, encrypted_content, source });
            }
            StreamEvent::ToolUseStart { index, id, name } => {
                self.finish_tool(index);
                self.tools.insert(
                    index,
                    PendingTool { block: self.blocks.len(), json: String::new(), done: false },
                );
                self.blocks.push(ContentBlock::ToolUse { id, name, input: Value::Null });
            }
            StreamEvent::ToolUseInputDelta { index, partial_json } => match self.tools.get_mut(&index) {
                Some(t) if !t.done => t.json.push_str(&partial_json),
                _ => {
                    return Err(ProviderError::MalformedStream {
                        message: format!("arguments arrived for tool call #{index}, which is not open"),
                    })
                }
            },
            StreamEvent::ToolUseStop { index } => self.finish_tool(index),
            StreamEvent::Usage(u) => self.usage = u,
            StreamEvent::Stop(r) => self.stop = Some(r),
            // What came before a restart is void: the reply starts again from nothing.
            StreamEvent::Retry { restart: true, .. } => *self = Self::default(),
            StreamEvent::Retry { .. } | StreamEvent::Progress(_) => {}
        }
        Ok(())
    }

    fn finish_tool(&mut self, index: usize) {
        if let Some(t) = self.tools.get_mut(&index) {
            if !t.done {
                t.done = true;
                let parsed = parse_arguments(&t.json);
                if let Some(ContentBlock::ToolUse { input, .. }) = self.blocks.get_mut(t.block) {
                    *input = parsed.unwrap_or_else(Value::String);
                }
            }
        }
    }

    /// Finishes the response. A missing stop reason is inferred: `tool_use` when the response
    /// calls tools, else `end_turn`.
    pub fn finish(mut self) -> Assembled {
        let indices: Vec<usize> = self.tools.keys().copied().collect();
        for i in indices {
            self.finish_tool(i);
        }
        let mut invalid_inputs = HashMap::new();
        let mut blocks = Vec::with_capacity(self.blocks.len());
        for block in self.blocks {
            match block {
                ContentBlock::Text { ref text } if text.is_empty() => {}
                ContentBlock::ToolUse { id, name, input: Value::String(err) } => {
                    invalid_inputs.insert(id.clone(), err);
                    blocks.push(ContentBlock::ToolUse { id, name, input: Value::Object(Default::default()) });
                }
                other => blocks.push(other),
            }
        }
        let message = Message::new(Role::Assistant, blocks);
        let stop_reason = self.stop.unwrap_or(if message.has_tool_use() {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        });
        Assembled { response: Response { message, usage: self.usage, stop_reason }, invalid_inputs }
    }
}

/// Parses concatenated argument fragments. Empty means "no arguments"; anything but an object is
/// an error, because every tool takes an object.
fn parse_arguments(json: &str) -> Result<Value, String> {
    if json.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(json) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("the arguments must be a JSON object, got {}", kind_of(&other))),
        Err(e) => {
            let shown: String = json.chars().take(200).collect();
            let more = if json.len() > shown.len() { "…" } else { "" };
            Err(format!("the arguments were not valid JSON ({e}): {shown}{more}"))
        }
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start(index: usize, id: &str) -> StreamEvent {
        StreamEvent::ToolUseStart { index, id: id.into(), name: "t".into() }
    }
    fn delta(index: usize, s: &str) -> StreamEvent {
        StreamEvent::ToolUseInputDelta { index, partial_json: s.into() }
    }

    #[test]
    fn text_thinking_and_tools_assemble_in_order() {
        let mut a = Assembler::new();
        for e in [
            StreamEvent::ThinkingDelta("let me ".into()),
            StreamEvent::ThinkingDelta("think".into()),
            StreamEvent::ThinkingSignature("sig".into()),
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            start(0, "a"),
            delta(0, "{\"x\":"),
            delta(0, " 1}"),
            StreamEvent::ToolUseStop { index: 0 },
            StreamEvent::Usage(Usage { input_tokens: 1, ..Usage::default() }),
            StreamEvent::Usage(Usage { input_tokens: 1, output_tokens: 9, ..Usage::default() }),
            StreamEvent::Stop(StopReason::ToolUse),
        ] {
            a.push(e).unwrap();
        }
        let out = a.finish();
        assert!(out.invalid_inputs.is_empty());
        assert_eq!(
            out.response.message.content,
            vec![
                ContentBlock::Thinking { thinking: "let me think".into(), signature: Some("sig".into()) },
                ContentBlock::text("Hello"),
                ContentBlock::ToolUse { id: "a".into(), name: "t".into(), input: json!({"x": 1}) },
            ]
        );
        assert_eq!(out.response.usage.output_tokens, 9, "usage replaces, not adds");
        assert_eq!(out.response.stop_reason, StopReason::ToolUse);
    }

    #[test]
    fn interleaved_fragments_join_by_index() {
        let mut a = Assembler::new();
        for e in [start(0, "a"), start(1, "b"), delta(1, "{\"q\""), delta(0, "{}"), delta(1, ":2}")] {
            a.push(e).unwrap();
        }
        let out = a.finish();
        let inputs: Vec<_> = out.response.message.tool_uses().map(|t| t.input.clone()).collect();
        assert_eq!(inputs, vec![json!({}), json!({"q": 2})]);
        assert_eq!(out.response.stop_reason, StopReason::ToolUse, "inferred");
    }

    #[test]
    fn invalid_arguments_are_recorded_not_fatal() {
        let mut a = Assembler::new();
        for e in [
            start(0, "a"),
            delta(0, "{\"x\": tru"),
            StreamEvent::ToolUseStop { index: 0 },
            start(1, "b"),
            delta(1, "[1]"),
        ] {
            a.push(e).unwrap();
        }
        let out = a.finish();
        assert!(out.invalid_inputs["a"].contains("not valid JSON"), "{:?}", out.invalid_inputs);
        assert!(out.invalid_inputs["b"].contains("must be a JSON object"));
        for t in out.response.message.tool_uses() {
            assert_eq!(t.input, &json!({}));
        }
    }

    #[test]
    fn empty_arguments_mean_an_empty_object() {
        let mut a = Assembler::new();
        a.push(start(0, "a")).unwrap();
        let out = a.finish();
        assert!(out.invalid_inputs.is_empty());
        assert_eq!(out.response.message.tool_uses().next().unwrap().input, &json!({}));
    }

    #[test]
    fn fragment_for_unknown_call_is_malformed() {
        let mut a = Assembler::new();
        assert!(matches!(a.push(delta(3, "{}")), Err(ProviderError::MalformedStream { .. })));
    }

    #[test]
    fn empty_text_blocks_are_dropped() {
        let mut a = Assembler::new();
        a.push(StreamEvent::TextDelta(String::new())).unwrap();
        let out = a.finish();
        assert!(out.response.message.content.is_empty());
        assert_eq!(out.response.stop_reason, StopReason::EndTurn);
    }
}
