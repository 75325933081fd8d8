//! What the loop itself costs per turn, with the model and tools taken out of the picture.
//!
//! `make bench` prints: a streamed text turn (500 deltas), a tool round (10 parallel read-only
//! calls), and whether per-turn cost grows with the length of the history (it must not: requests
//! borrow the history and commits copy only new messages).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use futures_util::{stream, StreamExt};
use octo_agent::*;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Canned {
    text: Vec<StreamEvent>,
    tools: Vec<StreamEvent>,
    with_tools: bool,
}

#[async_trait]
impl Sender for Canned {
    fn name(&self) -> &str {
        "bench"
    }
    async fn send(&self, _r: Request<'_>) -> Result<Response, ProviderError> {
        Err(ProviderError::Unsupported { message: "bench streams".into() })
    }
    fn as_streaming(&self) -> Option<&dyn StreamingSender> {
        Some(self)
    }
    fn as_tool(&self) -> Option<&dyn ToolSender> {
        Some(self)
    }
    fn as_tool_streaming(&self) -> Option<&dyn ToolStreamingSender> {
        Some(self)
    }
}

#[async_trait]
impl StreamingSender for Canned {
    async fn send_stream(&self, r: Request<'_>) -> Result<EventStream, ProviderError> {
        self.send_stream_with_tools(r).await
    }
}

#[async_trait]
impl ToolSender for Canned {
    async fn send_with_tools(&self, r: Request<'_>) -> Result<Response, ProviderError> {
        self.send(r).await
    }
}

#[async_trait]
impl ToolStreamingSender for Canned {
    async fn send_stream_with_tools(&self, r: Request<'_>) -> Result<EventStream, ProviderError> {
        // Call tools when the last message is the user's prompt, answer after the results.
        let last_is_prompt = r.messages.last().is_some_and(|m| m.tool_result_ids().next().is_none());
        let events = if self.with_tools && last_is_prompt { self.tools.clone() } else { self.text.clone() };
        Ok(Box::pin(stream::iter(events.into_iter().map(Ok))))
    }
}

struct Noop;

#[async_trait]
impl ToolExecutor for Noop {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new("noop", "does nothing", json!({"type": "object"}))
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }
    async fn execute(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text("ok")
    }
}

fn text_events(n: usize) -> Vec<StreamEvent> {
    let mut v: Vec<StreamEvent> = (0..n).map(|i| StreamEvent::TextDelta(format!("word{i} "))).collect();
    v.push(StreamEvent::Usage(Usage { input_tokens: 100, output_tokens: n as u64, ..Usage::default() }));
    v.push(StreamEvent::Stop(StopReason::EndTurn));
    v
}

fn tool_events(n: usize) -> Vec<StreamEvent> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(StreamEvent::ToolUseStart { index: i, id: format!("c{i}"), name: "noop".into() });
        v.push(StreamEvent::ToolUseInputDelta { index: i, partial_json: "{\"a\":".into() });
        v.push(StreamEvent::ToolUseInputDelta { index: i, partial_json: format!("{i}}}") });
        v.push(StreamEvent::ToolUseStop { index: i });
    }
    v.push(StreamEvent::Stop(StopReason::ToolUse));
    v
}

async fn time_turns(agent: &mut Agent, turns: usize, streamed: bool) -> Duration {
    let start = Instant::now();
    for _ in 0..turns {
        if streamed {
            let mut s = agent.turn_stream(Message::user("go"), CancellationToken::new());
            while s.next().await.is_some() {}
        } else {
            agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
        }
    }
    start.elapsed() / turns as u32
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let sender = Arc::new(Canned { text: text_events(500), tools: tool_events(10), with_tools: false });
        let mut agent = Agent::builder(sender).build();
        time_turns(&mut agent, 50, true).await; // warm up
        agent.clear_history();
        let per = time_turns(&mut agent, 500, true).await;
        println!(
            "streamed text turn, 500 deltas:        {:>8.1} µs/turn  ({:.2} µs/delta, events consumed)",
            per.as_secs_f64() * 1e6,
            per.as_secs_f64() * 1e6 / 500.0
        );

        let sender = Arc::new(Canned { text: text_events(20), tools: tool_events(10), with_tools: true });
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Noop));
        let mut agent = Agent::builder(sender).tools(reg).build();
        let per = time_turns(&mut agent, 500, true).await;
        println!(
            "tool round, 10 parallel calls + answer: {:>8.1} µs/turn  ({:.2} µs/call; budget 1000 µs/call)",
            per.as_secs_f64() * 1e6,
            per.as_secs_f64() * 1e6 / 10.0
        );

        // The same agent keeps growing its history; later turns must cost about the same.
        let sender = Arc::new(Canned { text: text_events(20), tools: tool_events(1), with_tools: true });
        let mut reg = ToolRegistry::new();
        reg.register(Arc::new(Noop));
        let mut agent = Agent::builder(sender).tools(reg).build();
        let early = time_turns(&mut agent, 200, false).await;
        for _ in 0..2000 {
            agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
        }
        let late = time_turns(&mut agent, 200, false).await;
        println!(
            "turn cost vs history length:           {:>8.1} µs at {} msgs, {:.1} µs at {} msgs (ratio {:.2})",
            early.as_secs_f64() * 1e6,
            800,
            late.as_secs_f64() * 1e6,
            agent.history().len(),
            late.as_secs_f64() / early.as_secs_f64()
        );
    });
}
