//! Reading Responses API replies: the streamed events, and a whole response object (a server
//! that ignores `stream: true`, or a non-streaming request).

use crate::wire::{arguments_text, Event, Item, WireError, WireResponse};
use octo_agent::{ContentBlock, Message, ProviderError, Response, Role, StopReason, StreamEvent};
use octo_provider::classify::classify_stream_error;
use octo_provider::sse::SseEvent;
use octo_provider::{synthetic_tool_id, EndpointInfo, StreamParser};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What one output item has become so far.
#[derive(Debug, Clone)]
enum Open {
    /// A function call: its index among the calls, whether argument deltas came, whether open.
    Call { index: usize, deltas: bool, open: bool },
    /// Reasoning: how many summary parts have begun.
    Reasoning { parts: usize },
    /// A message (its text arrives as deltas).
    Message,
}

/// Turns a stream of Responses events into [`StreamEvent`]s.
#[derive(Debug, Clone)]
pub struct ResponsesParser {
    endpoint: Arc<EndpointInfo>,
    /// `endpoint:model`, which reasoning items are tagged with.
    source: Arc<str>,
    secret: Option<Arc<str>>,
    items: BTreeMap<usize, Open>,
    calls: usize,
    done: bool,
    any: bool,
}

impl ResponsesParser {
    pub(crate) fn new(endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>, source: Arc<str>) -> Self {
        Self { endpoint, source, secret, items: BTreeMap::new(), calls: 0, done: false, any: false }
    }

    fn error(&self, e: &WireError) -> ProviderError {
        let (kind, message) = e.parts();
        classify_stream_error(&kind, &message, &self.endpoint, self.secret.as_deref())
    }

    fn added(&mut self, output_index: usize, item: Item, out: &mut Vec<StreamEvent>) {
        let open = match item.kind.as_str() {
            "function_call" | "custom_tool_call" => {
                let index = self.calls;
                self.calls += 1;
                out.push(StreamEvent::ToolUseStart {
                    index,
                    id: item
                        .call_id
                        .or(item.id)
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| synthetic_tool_id("call")),
                    name: item.name.unwrap_or_default(),
                });
                Open::Call { index, deltas: false, open: true }
            }
            "reasoning" => Open::Reasoning { parts: 0 },
            _ => Open::Message,
        };
        self.items.insert(output_index, open);
    }

    /// Ends a call: its whole arguments when no deltas carried them, then its stop.
    fn close_call(&mut self, output_index: usize, arguments: Option<String>, out: &mut Vec<StreamEvent>) {
        if let Some(Open::Call { index, deltas, open }) = self.items.get_mut(&output_index) {
            if !*open {
                return;
            }
            if let (false, Some(a)) = (*deltas, arguments.filter(|a| !a.is_empty())) {
                out.push(StreamEvent::ToolUseInputDelta { index: *index, partial_json: a });
            }
            *open = false;
            out.push(StreamEvent::ToolUseStop { index: *index });
        }
    }

    fn item_done(&mut self, output_index: usize, item: Item, out: &mut Vec<StreamEvent>) {
        match item.kind.as_str() {
            "function_call" | "custom_tool_call" => {
                if !self.items.contains_key(&output_index) {
                    // A server that sends calls only when they are done.
                    let args = item.arguments.as_ref().map(arguments_text);
                    self.added(output_index, item, out);
                    self.close_call(output_index, args, out);
                } else {
                    self.close_call(output_index, item.arguments.as_ref().map(arguments_text), out);
                }
            }
            "reasoning" => {
                let summary = item.summary_text();
                // A summary that did not stream is shown now, so the user sees it once.
                if !matches!(self.items.get(&output_index), Some(Open::Reasoning { parts }) if *parts > 0)
                    && !summary.is_empty()
                {
                    out.push(StreamEvent::ThinkingDelta(summary.clone()));
                }
                out.push(StreamEvent::Reasoning {
                    id: item.id.unwrap_or_default(),
                    summary,
                    encrypted_content: item.encrypted_content,
                    source: self.source.to_string(),
                });
            }
            "message" if !self.items.contains_key(&output_index) => {
                let text = item.text();
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta(text));
                }
            }
            _ => {}
        }
        self.items.entry(output_index).or_insert(Open::Message);
    }

    /// The response ended (completed or incomplete): open calls close, usage and why it stopped.
    fn finish(&mut self, response: &WireResponse, stop: StopReason, out: &mut Vec<StreamEvent>) {
        let open: Vec<usize> = self.items.keys().copied().collect();
        for i in open {
            self.close_call(i, None, out);
        }
        if let Some(u) = &response.usage {
            out.push(StreamEvent::Usage(u.normalize()));
        }
        out.push(StreamEvent::Stop(stop));
        self.done = true;
    }
}

/// Why an incomplete response stopped.
fn incomplete_reason(response: &WireResponse) -> StopReason {
    match response.incomplete_details.as_ref().and_then(|d| d.reason.as_deref()) {
        Some("max_output_tokens") | None => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

impl StreamParser for ResponsesParser {
    fn event(&mut self, sse: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = sse.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let event: Event = serde_json::from_str(data).map_err(|e| ProviderError::MalformedStream {
            message: format!("endpoint `{}` sent an unreadable event: {e}", self.endpoint.name),
        })?;
        self.any = true;
        match event {
            Event::ItemAdded { output_index, item } => self.added(output_index, item, out),
            Event::ItemDone { output_index, item } => self.item_done(output_index, item, out),
            Event::TextDelta { delta } if !delta.is_empty() => out.push(StreamEvent::TextDelta(delta)),
            Event::ReasoningDelta { output_index, delta } if !delta.is_empty() => {
                if let Some(Open::Reasoning { parts }) = self.items.get_mut(&output_index) {
                    *parts = (*parts).max(1);
                }
                out.push(StreamEvent::ThinkingDelta(delta));
            }
            Event::SummaryPart { output_index, summary_index } => {
                if let Some(Open::Reasoning { parts }) = self.items.get_mut(&output_index) {
                    if summary_index > 0 && *parts > 0 {
                        out.push(StreamEvent::ThinkingDelta("\n\n".into()));
                    }
                    *parts = (*parts).max(summary_index + 1);
                }
            }
            Event::ArgumentsDelta { output_index, delta } if !delta.is_empty() => {
                if let Some(Open::Call { index, deltas, open: true }) = self.items.get_mut(&output_index) {
                    *deltas = true;
                    out.push(StreamEvent::ToolUseInputDelta { index: *index, partial_json: delta });
                }
            }
            Event::ArgumentsDone { output_index, arguments } => self.close_call(output_index, arguments, out),
            Event::Completed { response } => {
                let stop = if self.calls > 0 { StopReason::ToolUse } else { StopReason::EndTurn };
                let stop = match response.status.as_deref() {
                    Some("incomplete") => incomplete_reason(&response),
                    _ => stop,
                };
                self.finish(&response, stop, out);
            }
            Event::Incomplete { response } => {
                let stop = incomplete_reason(&response);
                self.finish(&response, stop, out);
            }
            Event::Failed { response } => {
                return Err(self.error(&response.error.unwrap_or_default()));
            }
            Event::Error { code, message, error } => {
                let e = error.unwrap_or(WireError { code, kind: None, message });
                return Err(self.error(&e));
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        let name = &self.endpoint.name;
        Err(ProviderError::Transport {
            message: if self.any {
                format!("endpoint `{name}` ended the stream without response.completed (connection closed early?)")
            } else {
                format!("endpoint `{name}` sent an empty response (no events)")
            },
        })
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        out.extend(octo_provider::response_events(response_from_json(body, &self.endpoint, &self.source)?));
        self.done = true;
        Ok(())
    }
}

/// Parses a whole response object.
pub(crate) fn response_from_json(
    body: &[u8],
    endpoint: &EndpointInfo,
    source: &str,
) -> Result<Response, ProviderError> {
    let r: WireResponse = serde_json::from_slice(body).map_err(|e| ProviderError::MalformedStream {
        message: format!("endpoint `{}` sent an unreadable response: {e}", endpoint.name),
    })?;
    if let Some(e) = r.error.as_ref().filter(|_| r.status.as_deref() == Some("failed") || r.output.is_empty())
    {
        let (kind, message) = e.parts();
        return Err(classify_stream_error(&kind, &message, endpoint, None));
    }
    let mut content = Vec::new();
    let mut calls = false;
    for item in &r.output {
        match item.kind.as_str() {
            "message" => {
                let text = item.text();
                if !text.is_empty() {
                    content.push(ContentBlock::text(text));
                }
            }
            "reasoning" => content.push(ContentBlock::Reasoning {
                id: item.id.clone().unwrap_or_default(),
                summary: item.summary_text(),
                encrypted_content: item.encrypted_content.clone(),
                source: source.to_owned(),
            }),
            "function_call" | "custom_tool_call" => {
                calls = true;
                let raw = item.arguments.as_ref().map(arguments_text).unwrap_or_default();
                let input = if raw.trim().is_empty() {
                    serde_json::json!({})
                } else {
                    serde_json::from_str(&raw).unwrap_or(serde_json::Value::String(raw))
                };
                content.push(ContentBlock::ToolUse {
                    id: item
                        .call_id
                        .clone()
                        .or_else(|| item.id.clone())
                        .unwrap_or_else(|| synthetic_tool_id("call")),
                    name: item.name.clone().unwrap_or_default(),
                    input,
                });
            }
            _ => {}
        }
    }
    let stop_reason = match r.status.as_deref() {
        Some("incomplete") => incomplete_reason(&r),
        _ if calls => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    };
    Ok(Response {
        message: Message { role: Role::Assistant, content },
        usage: r.usage.as_ref().map(crate::wire::WireUsage::normalize).unwrap_or_default(),
        stop_reason,
    })
}
