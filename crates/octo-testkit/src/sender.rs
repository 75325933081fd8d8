//! A scripted in-process [`Sender`] for tests that drive an agent without HTTP: each request
//! takes the next scripted [`Step`] (or asks a responder function), and every request is recorded
//! so a test can assert on what the agent really sent.
//!
//! ```
//! use octo_agent::{Agent, CancellationToken, Message};
//! use octo_testkit::sender::{text, ScriptedSender};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let sender = ScriptedSender::new(vec![text("hello")]);
//! let mut agent = Agent::builder(sender.clone()).build();
//! let out = agent.turn(Message::user("hi"), CancellationToken::new()).await?;
//! assert_eq!(out.text, "hello");
//! assert_eq!(sender.seen()[0].messages.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test support fails loudly

use futures_util::{stream, StreamExt};
use octo_agent::{
    async_trait, Assembler, EventStream, Message, ProviderError, Request, Response, Sender, StopReason,
    StreamEvent, StreamingSender, ToolSender, ToolStreamingSender, Usage,
};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One scripted reply.
#[derive(Debug)]
pub enum Step {
    /// These items, then the stream ends.
    Events(Vec<StreamEvent>),
    /// These items, then the stream never yields again (to test cancellation mid-stream).
    EventsThenHang(Vec<StreamEvent>),
    /// These items, then this error mid-stream.
    EventsThenError(Vec<StreamEvent>, ProviderError),
    /// The request fails before any item.
    Fail(ProviderError),
    /// A whole response (for buffered requests; streamed as its text and tool calls).
    Whole(Response),
}

/// What the agent sent in one request.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Names of the tools offered (empty when the request carried none).
    pub tools: Vec<String>,
    /// Whether it asked for a stream.
    pub streamed: bool,
    /// Its output cap.
    pub max_tokens: Option<u32>,
}

/// Which capabilities the sender claims.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Streaming.
    pub streaming: bool,
    /// Tool calls.
    pub tools: bool,
}

type Responder = dyn Fn(&Request<'_>) -> Result<Response, ProviderError> + Send + Sync;

/// A sender that replays scripted steps, then (if given) asks a responder function.
pub struct ScriptedSender {
    steps: Mutex<VecDeque<Step>>,
    seen: Mutex<Vec<Seen>>,
    caps: Caps,
    responder: Option<Box<Responder>>,
    summaries: bool,
}

impl std::fmt::Debug for ScriptedSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedSender").field("caps", &self.caps).finish()
    }
}

impl ScriptedSender {
    /// Streams and calls tools; answers compaction-summary requests itself, so scripts need not
    /// know when they happen.
    pub fn new(steps: Vec<Step>) -> Arc<Self> {
        Self::with_caps(steps, Caps { streaming: true, tools: true })
    }

    /// With these capabilities only.
    pub fn with_caps(steps: Vec<Step>, caps: Caps) -> Arc<Self> {
        Arc::new(Self {
            steps: Mutex::new(steps.into()),
            seen: Mutex::new(Vec::new()),
            caps,
            responder: None,
            summaries: true,
        })
    }

    /// A buffered sender with tools that answers every request through `respond` (a model
    /// simulated in the test).
    pub fn responder(
        respond: impl Fn(&Request<'_>) -> Result<Response, ProviderError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            steps: Mutex::new(VecDeque::new()),
            seen: Mutex::new(Vec::new()),
            caps: Caps { streaming: false, tools: true },
            responder: Some(Box::new(respond)),
            summaries: false,
        })
    }

    /// Whole responses, buffered, with tools.
    pub fn buffered(responses: Vec<Response>) -> Arc<Self> {
        Self::with_caps(
            responses.into_iter().map(Step::Whole).collect(),
            Caps { streaming: false, tools: true },
        )
    }

    /// Every request the agent made, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// How many requests were made.
    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
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

    fn next(&self, req: &Request<'_>) -> Step {
        let summarizing = self.summaries && req.system.is_some_and(|s| s.contains("You compress"));
        if summarizing {
            // Summary requests are answered here, so scripts need not know when they happen.
            return Step::Events(vec![
                StreamEvent::TextDelta("## Goals\nsummarized goals\n## Open tasks\nnone".into()),
                StreamEvent::Stop(StopReason::EndTurn),
            ]);
        }
        if let Some(step) = self.steps.lock().unwrap().pop_front() {
            return step;
        }
        match &self.responder {
            Some(f) => match f(req) {
                Ok(r) => Step::Whole(r),
                Err(e) => Step::Fail(e),
            },
            None => panic!("the agent sent more requests than were scripted"),
        }
    }

    fn stream(&self, req: &Request<'_>) -> Result<EventStream, ProviderError> {
        match self.next(req) {
            Step::Fail(e) => Err(e),
            Step::Events(ev) => Ok(Box::pin(stream::iter(ev.into_iter().map(Ok)))),
            Step::EventsThenError(ev, e) => {
                Ok(Box::pin(stream::iter(ev.into_iter().map(Ok).chain(std::iter::once(Err(e))))))
            }
            Step::EventsThenHang(ev) => {
                Ok(Box::pin(stream::iter(ev.into_iter().map(Ok)).chain(stream::pending())))
            }
            Step::Whole(r) => Ok(Box::pin(stream::iter(response_events(r).into_iter().map(Ok)))),
        }
    }

    async fn whole_reply(&self, req: &Request<'_>) -> Result<Response, ProviderError> {
        // A scripted failure must fail the buffered request too.
        let step = self.next(req);
        match step {
            Step::Fail(e) | Step::EventsThenError(_, e) => Err(e),
            Step::Whole(r) => Ok(r),
            Step::Events(ev) | Step::EventsThenHang(ev) => {
                let mut a = Assembler::new();
                for e in ev {
                    a.push(e)?;
                }
                Ok(a.finish().response)
            }
        }
    }
}

/// The stream events that deliver `r`: its text, thinking and tool calls, usage and stop reason.
fn response_events(r: Response) -> Vec<StreamEvent> {
    let mut ev = Vec::new();
    let mut index = 0;
    for block in r.message.content {
        match block {
            octo_agent::ContentBlock::Text { text } => ev.push(StreamEvent::TextDelta(text)),
            octo_agent::ContentBlock::Thinking { thinking, .. } => {
                ev.push(StreamEvent::ThinkingDelta(thinking));
            }
            octo_agent::ContentBlock::ToolUse { id, name, input } => {
                ev.push(StreamEvent::ToolUseStart { index, id, name });
                ev.push(StreamEvent::ToolUseInputDelta { index, partial_json: input.to_string() });
                ev.push(StreamEvent::ToolUseStop { index });
                index += 1;
            }
            _ => {}
        }
    }
    ev.push(StreamEvent::Usage(r.usage));
    ev.push(StreamEvent::Stop(r.stop_reason));
    ev
}

#[async_trait]
impl Sender for ScriptedSender {
    fn name(&self) -> &str {
        "scripted:test-model"
    }
    async fn send(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.record(&request, false, false);
        self.whole_reply(&request).await
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
impl StreamingSender for ScriptedSender {
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.record(&request, true, false);
        self.stream(&request)
    }
}

#[async_trait]
impl ToolSender for ScriptedSender {
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.record(&request, false, true);
        self.whole_reply(&request).await
    }
}

#[async_trait]
impl ToolStreamingSender for ScriptedSender {
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.record(&request, true, true);
        self.stream(&request)
    }
}

/// A text answer.
pub fn text(t: &str) -> Step {
    Step::Events(vec![
        StreamEvent::TextDelta(t.to_owned()),
        StreamEvent::Usage(Usage { input_tokens: 10, output_tokens: 2, ..Usage::default() }),
        StreamEvent::Stop(StopReason::EndTurn),
    ])
}

/// Tool calls `(id, name, json args)` in one response, after the text "working on it"; the
/// arguments arrive in two fragments.
pub fn tools(calls: &[(&str, &str, &str)]) -> Step {
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
    Step::Events(ev)
}

/// A whole response whose message is `m` (tool use when it calls tools, end of turn otherwise).
pub fn whole(m: Message) -> Response {
    let stop_reason = if m.has_tool_use() { StopReason::ToolUse } else { StopReason::EndTurn };
    Response { message: m, usage: Usage::default(), stop_reason }
}

/// Streams one request of any streaming sender with tools and assembles it: the items seen, and
/// the assembled reply (or the error that ended the stream). The provider crates' wire tests
/// share it.
pub async fn stream_once(
    s: &dyn ToolStreamingSender,
    req: Request<'_>,
) -> (Vec<StreamEvent>, Result<octo_agent::Assembled, ProviderError>) {
    let mut seen = Vec::new();
    let mut stream = match s.send_stream_with_tools(req).await {
        Ok(st) => st,
        Err(e) => return (seen, Err(e)),
    };
    let mut asm = Assembler::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(ev) => {
                seen.push(ev.clone());
                asm.push(ev).unwrap();
            }
            Err(e) => return (seen, Err(e)),
        }
    }
    (seen, Ok(asm.finish()))
}
