//! A scripted in-test `Sender`: each request pops the next scripted reply.

#![allow(dead_code)]

use futures_util::stream;
use octo_agent::*;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One scripted reply.
pub enum Reply {
    /// These items, then the stream ends.
    Events(Vec<StreamEvent>),
    /// These items, then the stream never yields again (to test cancellation mid-stream).
    EventsThenHang(Vec<StreamEvent>),
    /// These items, then this error mid-stream.
    EventsThenError(Vec<StreamEvent>, ProviderError),
    /// The request fails before any item.
    Fail(ProviderError),
}

/// What the agent sent.
#[derive(Debug, Clone)]
pub struct Seen {
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<String>,
    pub streamed: bool,
    pub max_tokens: Option<u32>,
}

#[derive(Clone, Copy)]
pub struct Caps {
    pub streaming: bool,
    pub tools: bool,
}

pub struct Scripted {
    replies: Mutex<VecDeque<Reply>>,
    seen: Mutex<Vec<Seen>>,
    caps: Caps,
}

impl Scripted {
    pub fn new(replies: Vec<Reply>) -> Arc<Self> {
        Self::with_caps(replies, Caps { streaming: true, tools: true })
    }

    pub fn with_caps(replies: Vec<Reply>, caps: Caps) -> Arc<Self> {
        Arc::new(Self { replies: Mutex::new(replies.into()), seen: Mutex::new(Vec::new()), caps })
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn record(&self, req: &Request<'_>, streamed: bool, with_tools: bool) {
        self.seen.lock().unwrap().push(Seen {
            system: req.system.map(str::to_owned),
            messages: req.messages.to_vec(),
            tools: if with_tools { req.tools.iter().map(|t| t.name.clone()).collect() } else { vec![] },
            streamed,
            max_tokens: req.max_tokens,
        });
    }

    fn next(&self) -> Reply {
        self.replies.lock().unwrap().pop_front().expect("the agent sent more requests than were scripted")
    }

    fn stream(&self) -> Result<EventStream, ProviderError> {
        let summarizing = self
            .seen
            .lock()
            .unwrap()
            .last()
            .and_then(|s| s.system.clone())
            .is_some_and(|s| s.contains("You compress"));
        if summarizing {
            // Summary requests are answered here, so scripts need not know when they happen.
            let ev = vec![
                StreamEvent::TextDelta("## Goals\nsummarized goals\n## Open tasks\nnone".into()),
                StreamEvent::Stop(StopReason::EndTurn),
            ];
            return Ok(Box::pin(stream::iter(ev.into_iter().map(Ok))));
        }
        match self.next() {
            Reply::Fail(e) => Err(e),
            Reply::Events(ev) => Ok(Box::pin(stream::iter(ev.into_iter().map(Ok)))),
            Reply::EventsThenError(ev, e) => {
                Ok(Box::pin(stream::iter(ev.into_iter().map(Ok).chain(std::iter::once(Err(e))))))
            }
            Reply::EventsThenHang(ev) => {
                use futures_util::StreamExt;
                Ok(Box::pin(stream::iter(ev.into_iter().map(Ok)).chain(stream::pending())))
            }
        }
    }

    async fn buffered(&self) -> Result<Response, ProviderError> {
        use futures_util::StreamExt;
        let mut s = self.stream()?;
        let mut a = Assembler::new();
        while let Some(item) = s.next().await {
            a.push(item?)?;
        }
        Ok(a.finish().response)
    }
}

#[async_trait]
impl Sender for Scripted {
    fn name(&self) -> &str {
        "scripted:test-model"
    }
    async fn send(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.record(&request, false, false);
        self.buffered().await
    }
    fn as_streaming(&self) -> Option<&dyn StreamingSender> {
        self.caps.streaming.then_some(self as &dyn StreamingSender)
    }
    fn as_tool(&self) -> Option<&dyn ToolSender> {
        self.caps.tools.then_some(self as &dyn ToolSender)
    }
    fn as_tool_streaming(&self) -> Option<&dyn ToolStreamingSender> {
        (self.caps.tools && self.caps.streaming).then_some(self as &dyn ToolStreamingSender)
    }
}

#[async_trait]
impl StreamingSender for Scripted {
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.record(&request, true, false);
        self.stream()
    }
}

#[async_trait]
impl ToolSender for Scripted {
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.record(&request, false, true);
        self.buffered().await
    }
}

#[async_trait]
impl ToolStreamingSender for Scripted {
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.record(&request, true, true);
        self.stream()
    }
}

/// A text answer.
pub fn text(t: &str) -> Reply {
    Reply::Events(vec![
        StreamEvent::TextDelta(t.to_owned()),
        StreamEvent::Usage(Usage { input_tokens: 10, output_tokens: 2, ..Usage::default() }),
        StreamEvent::Stop(StopReason::EndTurn),
    ])
}

/// Tool calls `(id, name, json args)` in one response, the arguments split in two fragments.
pub fn tools(calls: &[(&str, &str, &str)]) -> Reply {
    let mut ev = vec![StreamEvent::TextDelta("working on it".into())];
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let mid = args.len() / 2;
        ev.push(StreamEvent::ToolUseStart { index: i, id: (*id).into(), name: (*name).into() });
        ev.push(StreamEvent::ToolUseInputDelta { index: i, partial_json: args[..mid].into() });
        ev.push(StreamEvent::ToolUseInputDelta { index: i, partial_json: args[mid..].into() });
        ev.push(StreamEvent::ToolUseStop { index: i });
    }
    ev.push(StreamEvent::Usage(Usage { input_tokens: 5, output_tokens: 5, ..Usage::default() }));
    ev.push(StreamEvent::Stop(StopReason::ToolUse));
    Reply::Events(ev)
}

/// A shared log of what tools did, in order.
#[derive(Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Every tool_use in `history` has exactly one tool_result in the next message.
pub fn assert_consistent(history: &[Message]) {
    for (i, m) in history.iter().enumerate() {
        let ids: Vec<&str> = m.tool_uses().map(|t| t.id).collect();
        if ids.is_empty() {
            continue;
        }
        let next = history.get(i + 1).unwrap_or_else(|| panic!("tool_use at {i} has no results after it"));
        let results: Vec<&str> = next.tool_result_ids().collect();
        assert_eq!(ids, results, "results at {} do not answer the calls at {i}", i + 1);
    }
}

pub fn result_text(block: &ContentBlock) -> (String, bool) {
    match block {
        ContentBlock::ToolResult { content, is_error, .. } => {
            (content.iter().filter_map(ToolResultPart::as_text).collect::<Vec<_>>().join("\n"), *is_error)
        }
        other => panic!("not a tool result: {other:?}"),
    }
}

pub fn input_str(input: &Value, key: &str) -> String {
    input.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}
