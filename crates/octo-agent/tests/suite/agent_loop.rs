//! The agent loop driven by a scripted in-test sender.

use super::common::*;
use futures_util::StreamExt;
use octo_agent::*;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    /// Sleep for the delay, then answer with the `text` argument.
    Sleep,
    /// Wait for cancellation, then report it.
    WaitForCancel,
    /// Ignore cancellation entirely.
    Stubborn,
    /// Return this many bytes.
    Big(usize),
    Panic,
}

struct TestTool {
    name: &'static str,
    read_only: bool,
    safe: bool,
    delay: Duration,
    log: Log,
    behaviour: Behaviour,
}

impl TestTool {
    fn new(name: &'static str, read_only: bool, log: &Log) -> Self {
        Self {
            name,
            read_only,
            safe: read_only,
            delay: Duration::from_millis(100),
            log: log.clone(),
            behaviour: Behaviour::Sleep,
        }
    }
    fn behaving(mut self, b: Behaviour) -> Self {
        self.behaviour = b;
        self
    }
}

#[async_trait]
impl ToolExecutor for TestTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            self.name,
            "test tool",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
    }
    fn meta(&self) -> ToolMeta {
        let base = if self.read_only { ToolMeta::reads() } else { ToolMeta::writes() };
        base.concurrency_safe(self.safe)
    }
    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let arg = input_str(&input, "text");
        self.log.push(format!("start {arg}"));
        let out = match self.behaviour {
            Behaviour::Sleep => {
                tokio::time::sleep(self.delay).await;
                ToolOutput::text(format!("{} did {arg}", self.name))
            }
            Behaviour::WaitForCancel => {
                ctx.cancel().cancelled().await;
                self.log.push("saw cancel");
                ToolOutput::text("partial output before cancel")
            }
            Behaviour::Stubborn => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                ToolOutput::text("never")
            }
            Behaviour::Big(n) => ToolOutput::text("x".repeat(n)),
            Behaviour::Panic => panic!("boom in tool"),
        };
        self.log.push(format!("end {arg}"));
        out
    }
}

fn registry(tools: Vec<TestTool>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    for t in tools {
        r.register(Arc::new(t));
    }
    r
}

async fn collect(stream: AgentStream<'_>) -> Vec<AgentEvent> {
    stream.collect().await
}

fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["type"].as_str().unwrap().to_owned())
        .filter(|k| k != "text_delta" && k != "usage")
        .collect()
}

#[tokio::test]
async fn tool_call_then_answer() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t1", "read", r#"{"text":"a"}"#)]), text("done")]);
    let mut agent = Agent::builder(sender.clone())
        .tools(registry(vec![TestTool::new("read", true, &log)]))
        .system_prompt("SYS")
        .build();
    let out = agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "done");
    assert_eq!(out.reason, TurnEndReason::Completed);
    assert_eq!(out.requests, 2);
    assert_eq!(out.usage.input_tokens, 15);
    assert_eq!(log.take(), ["start a", "end a"]);

    let h = agent.history();
    assert_eq!(h.len(), 4);
    assert_consistent(h);
    assert_eq!(result_text(&h[2].content[0]), ("read did a".to_owned(), false));

    let seen = sender.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].system.as_deref(), Some("SYS"));
    assert_eq!(seen[0].tools, ["read"]);
    assert!(seen[0].streamed);
    assert_eq!(seen[1].messages.len(), 3, "second request carries the tool result");
}

#[tokio::test]
async fn events_come_in_the_documented_order() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t1", "read", r#"{"text":"a"}"#)]), text("done")]);
    let mut agent = Agent::builder(sender).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    assert_eq!(
        kinds(&events),
        [
            "turn_start",
            "request_start",
            "tool_call_start",
            "tool_call_end",
            "committed",
            "request_start",
            "committed",
            "turn_end"
        ]
    );
    let text: String = events
        .iter()
        .filter_map(|e| if let AgentEvent::TextDelta { text } = e { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(text, "working on itdone");
    // committed messages, concatenated, are exactly the history
    let committed: Vec<Message> = events
        .iter()
        .filter_map(
            |e| if let AgentEvent::Committed { messages } = e { Some(messages.clone()) } else { None },
        )
        .flatten()
        .collect();
    assert_eq!(committed, agent.history());
}

#[tokio::test]
async fn plain_string_content_history_can_be_continued() {
    let old: Vec<Message> =
        serde_json::from_str(r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#)
            .unwrap();
    let sender = Scripted::new(vec![text("again")]);
    let mut agent = Agent::builder(sender.clone()).history(old).build();
    agent.turn(Message::user("more"), CancellationToken::new()).await.unwrap();
    assert_eq!(agent.history().len(), 4);
    assert_eq!(sender.seen()[0].messages[1], Message::assistant("hello"));
}

#[tokio::test]
async fn failure_on_first_request_leaves_history_untouched() {
    let sender = Scripted::new(vec![
        text("first"),
        Reply::Fail(ProviderError::Auth { message: "bad key for `x`".into() }),
    ]);
    let mut agent = Agent::builder(sender).build();
    agent.turn(Message::user("one"), CancellationToken::new()).await.unwrap();
    let before = agent.history().to_vec();
    let err = agent.turn(Message::user("two"), CancellationToken::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth);
    assert_eq!(agent.history(), before.as_slice());
}

#[tokio::test]
async fn failure_after_a_round_keeps_the_completed_round() {
    let log = Log::default();
    let sender = Scripted::new(vec![
        tools(&[("t1", "write", r#"{"text":"a"}"#)]),
        Reply::EventsThenError(
            vec![StreamEvent::TextDelta("half an ans".into())],
            ProviderError::Transport { message: "connection reset".into() },
        ),
    ]);
    let mut agent = Agent::builder(sender).tools(registry(vec![TestTool::new("write", false, &log)])).build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    let h = agent.history();
    assert_eq!(h.len(), 3, "user + tool call + results survive; the partial answer does not");
    assert_consistent(h);
    assert!(h.iter().all(|m| !m.text().contains("half an ans")));
    let n = events.len();
    assert!(matches!(&events[n - 2], AgentEvent::Error { kind: ErrorKind::Transport, .. }));
    assert!(matches!(&events[n - 1], AgentEvent::TurnEnd { reason: TurnEndReason::Failed, .. }));
}

#[tokio::test]
async fn max_turns_stops_with_a_consistent_history() {
    let log = Log::default();
    let replies = (0..5).map(|i| tools(&[(&format!("t{i}"), "read", r#"{"text":"x"}"#)])).collect();
    let sender = Scripted::new(replies);
    let mut agent = Agent::builder(sender.clone())
        .tools(registry(vec![TestTool::new("read", true, &log)]))
        .max_turns(3)
        .build();
    let out = agent.turn(Message::user("loop"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.reason, TurnEndReason::MaxTurns);
    assert_eq!(out.requests, 3);
    assert_eq!(sender.seen().len(), 3);
    assert_eq!(agent.history().len(), 7);
    assert_consistent(agent.history());
}

#[tokio::test(start_paused = true)]
async fn cancel_mid_stream_rolls_back_the_turn() {
    let sender = Scripted::new(vec![Reply::EventsThenHang(vec![StreamEvent::TextDelta("partial".into())])]);
    let mut agent = Agent::builder(sender).build();
    let cancel = CancellationToken::new();
    let mut stream = agent.turn_stream(Message::user("go"), cancel.clone());
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        if matches!(e, AgentEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        events.push(e);
    }
    drop(stream);
    assert!(matches!(events.last(), Some(AgentEvent::TurnEnd { reason: TurnEndReason::Cancelled, .. })));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { kind: ErrorKind::Cancelled, .. })));
    assert!(agent.history().is_empty());
}

#[tokio::test(start_paused = true)]
async fn cancel_mid_tool_completes_the_round_with_interrupted_results() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[
        ("t1", "wait", r#"{"text":"a"}"#),
        ("t2", "stubborn", r#"{"text":"b"}"#),
        ("t3", "wait", r#"{"text":"c"}"#),
    ])]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![
            TestTool::new("wait", false, &log).behaving(Behaviour::WaitForCancel),
            TestTool::new("stubborn", false, &log).behaving(Behaviour::Stubborn),
        ]))
        .build();
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        }
    };
    let (result, ()) = tokio::join!(agent.turn(Message::user("go"), cancel.clone()), canceller);
    assert_eq!(result.unwrap_err(), AgentError::Cancelled);
    assert_eq!(
        log.take(),
        ["start a", "saw cancel", "end a"],
        "the tool saw the cancellation; later calls never started"
    );
    let h = agent.history();
    assert_eq!(h.len(), 3);
    assert_consistent(h);
    let (t1, e1) = result_text(&h[2].content[0]);
    assert!(e1 && t1.contains("partial output before cancel") && t1.contains("interrupted"), "{t1}");
    let (t2, e2) = result_text(&h[2].content[1]);
    assert!(e2 && t2.contains("interrupted"), "{t2}");
    let (t3, e3) = result_text(&h[2].content[2]);
    assert!(e3 && t3.contains("not run"), "{t3}");
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_ignores_cancellation_is_dropped_after_the_grace_period() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t1", "stubborn", r#"{"text":"a"}"#)])]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("stubborn", false, &log).behaving(Behaviour::Stubborn)]))
        .build();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let started = tokio::time::Instant::now();
    let (r, ()) = tokio::join!(agent.turn(Message::user("go"), cancel), async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        c2.cancel();
    });
    assert!(r.is_err());
    assert!(started.elapsed() < Duration::from_secs(5), "did not wait for the stubborn tool");
    let (t, e) = result_text(&agent.history()[2].content[0]);
    assert!(e && t.contains("interrupted by the user before the tool finished"), "{t}");
}

#[tokio::test(start_paused = true)]
async fn read_only_safe_calls_run_in_parallel_others_in_order() {
    let log = Log::default();
    let sender = Scripted::new(vec![
        tools(&[
            ("1", "read", r#"{"text":"r1"}"#),
            ("2", "read", r#"{"text":"r2"}"#),
            ("3", "write", r#"{"text":"w3"}"#),
            ("4", "read", r#"{"text":"r4"}"#),
            ("5", "write", r#"{"text":"w5"}"#),
            ("6", "write", r#"{"text":"w6"}"#),
        ]),
        text("ok"),
    ]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("read", true, &log), TestTool::new("write", false, &log)]))
        .build();
    agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(
        log.take(),
        [
            "start r1", "start r2", "end r1", "end r2", "start w3", "end w3", "start r4", "end r4",
            "start w5", "end w5", "start w6", "end w6"
        ]
    );
    let ids: Vec<&str> = agent.history()[2].tool_result_ids().collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"], "results stay in call order");
}

#[tokio::test(start_paused = true)]
async fn parallel_batch_finishes_in_the_time_of_the_slowest() {
    let log = Log::default();
    let calls: Vec<(String, &str, String)> =
        (0..8).map(|i| (format!("c{i}"), "read", format!(r#"{{"text":"{i}"}}"#))).collect();
    let calls_ref: Vec<(&str, &str, &str)> =
        calls.iter().map(|(a, b, c)| (a.as_str(), *b, c.as_str())).collect();
    let sender = Scripted::new(vec![tools(&calls_ref), text("ok")]);
    let mut agent = Agent::builder(sender).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    let start = tokio::time::Instant::now();
    agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert!(start.elapsed() < Duration::from_millis(250), "8 × 100 ms ran serially: {:?}", start.elapsed());
}

#[tokio::test]
async fn large_tool_output_is_truncated_head_and_tail() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t1", "big", r#"{"text":"a"}"#)]), text("ok")]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("big", true, &log).behaving(Behaviour::Big(100_000))]))
        .config(AgentConfig { max_tool_output_bytes: 1000, ..AgentConfig::default() })
        .build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    let (t, _) = result_text(&agent.history()[2].content[0]);
    assert!(t.len() < 1300, "{}", t.len());
    assert!(t.contains("99000 bytes (0 lines) cut"), "{t}");
    let shown = events.iter().find_map(|e| match e {
        AgentEvent::ToolCallEnd { output, .. } => Some(output.clone()),
        _ => None,
    });
    assert_eq!(shown.unwrap(), t, "front ends see what the model sees");
}

#[tokio::test]
async fn invalid_json_arguments_become_an_error_the_model_can_fix() {
    let log = Log::default();
    let sender = Scripted::new(vec![
        tools(&[("t1", "read", r#"{"text": "a"#)]),
        tools(&[("t2", "read", r#"{"text":"a"}"#)]),
        text("fixed"),
    ]);
    let mut agent = Agent::builder(sender).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    let out = agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "fixed");
    let h = agent.history();
    let (t, e) = result_text(&h[2].content[0]);
    assert!(e && t.contains("not valid JSON"), "{t}");
    assert_eq!(h[1].tool_uses().next().unwrap().input, &json!({}), "history keeps a valid object");
    assert_eq!(log.take(), ["start a", "end a"], "only the valid call ran");
}

#[tokio::test]
async fn unknown_tool_and_panicking_tool_are_error_results() {
    let log = Log::default();
    let sender = Scripted::new(vec![
        tools(&[("t1", "nope", "{}"), ("t2", "crash", r#"{"text":"x"}"#)]),
        text("recovered"),
    ]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("crash", false, &log).behaving(Behaviour::Panic)]))
        .build();
    let out = agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "recovered");
    let (t1, e1) = result_text(&agent.history()[2].content[0]);
    assert!(e1 && t1.contains("no tool named `nope`") && t1.contains("crash"), "{t1}");
    let (t2, e2) = result_text(&agent.history()[2].content[1]);
    assert!(e2 && t2.contains("crashed: boom in tool"), "{t2}");
}

#[tokio::test]
async fn approvals_are_asked_and_answered_through_events() {
    let log = Log::default();
    let sender = Scripted::new(vec![
        tools(&[
            ("t1", "write", r#"{"text":"yes"}"#),
            ("t2", "write", r#"{"text":"no"}"#),
            ("t3", "read", r#"{"text":"r"}"#),
        ]),
        text("done"),
    ]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("write", false, &log), TestTool::new("read", true, &log)]))
        .permission_gate(Arc::new(AskForWrites))
        .build();
    let broker = agent.approvals();
    let mut stream = agent.turn_stream(Message::user("go"), CancellationToken::new());
    let mut asked = Vec::new();
    while let Some(e) = stream.next().await {
        if let AgentEvent::ApprovalRequired { approval_id, request } = e {
            let decision = if request.input["text"] == "yes" {
                ApprovalDecision::Allow
            } else {
                ApprovalDecision::Deny { message: Some("not that one".into()) }
            };
            asked.push(request.tool_use_id.clone());
            broker.resolve(&approval_id, decision).unwrap();
        }
    }
    drop(stream);
    assert_eq!(asked, ["t1", "t2"], "read-only calls are not asked");
    assert_eq!(log.take(), ["start yes", "end yes", "start r", "end r"]);
    let (t, e) = result_text(&agent.history()[2].content[1]);
    assert!(e && t.contains("denied") && t.contains("not that one"), "{t}");
}

#[tokio::test]
async fn unattended_turn_denies_what_needs_approval() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t1", "write", r#"{"text":"a"}"#)]), text("ok")]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("write", false, &log)]))
        .permission_gate(Arc::new(AskForWrites))
        .build();
    agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert!(log.take().is_empty());
    let (t, e) = result_text(&agent.history()[2].content[0]);
    assert!(e && t.contains("without anyone to ask"), "{t}");
}

struct DenyTerminal;
impl PermissionGate for DenyTerminal {
    fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        if q.tool == "write" {
            PermissionDecision::Deny {
                message: "plan mode: writing is not allowed".into(),
                kind: DenyKind::PlanMode,
            }
        } else {
            PermissionDecision::Allow
        }
    }
}

#[tokio::test]
async fn denied_calls_never_start() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t1", "write", r#"{"text":"a"}"#)]), text("ok")]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("write", false, &log)]))
        .permission_gate(Arc::new(DenyTerminal))
        .build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    assert!(log.take().is_empty());
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::ToolCallStart { .. })));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolCallEnd { is_error: true, output, .. } if output.contains("plan mode"))));
}

#[tokio::test]
async fn capability_discovery() {
    let all = [
        (true, true, Capability::ToolStreaming),
        (false, true, Capability::Tools),
        (true, false, Capability::Streaming),
        (false, false, Capability::Buffered),
    ];
    for (streaming, tools, expected) in all {
        let s = Scripted::with_caps(vec![], Caps { streaming, tools });
        assert_eq!(Capability::of(s.as_ref()), expected);
    }
}

#[tokio::test]
async fn buffered_tool_sender_still_runs_tools_and_emits_text() {
    let log = Log::default();
    let sender = Scripted::with_caps(
        vec![tools(&[("t1", "read", r#"{"text":"a"}"#)]), text("done")],
        Caps { streaming: false, tools: true },
    );
    let mut agent =
        Agent::builder(sender.clone()).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    assert_eq!(log.take(), ["start a", "end a"]);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::TextDelta { text } if text == "done")));
    assert!(sender.seen().iter().all(|s| !s.streamed && s.tools == ["read"]));
}

#[tokio::test]
async fn sender_without_tools_runs_as_plain_chat_with_a_notice() {
    let log = Log::default();
    let sender = Scripted::with_caps(vec![text("just text")], Caps { streaming: true, tools: false });
    let mut agent =
        Agent::builder(sender.clone()).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("does not support tool calls"))
    ));
    let seen = sender.seen();
    assert!(seen[0].streamed && seen[0].tools.is_empty());
    assert_eq!(agent.history()[1].text(), "just text");
}

#[tokio::test]
async fn streaming_can_be_turned_off() {
    let sender = Scripted::new(vec![text("whole")]);
    let mut agent = Agent::builder(sender.clone())
        .config(AgentConfig { streaming: false, ..AgentConfig::default() })
        .build();
    let events = collect(agent.turn_stream(Message::user("hi"), CancellationToken::new())).await;
    assert!(!sender.seen()[0].streamed);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::TurnStart { capability: Capability::Tools })));
    assert_eq!(agent.history()[1].text(), "whole");
}

#[tokio::test]
async fn buffered_only_sender_works() {
    let sender = Scripted::with_caps(vec![text("plain")], Caps { streaming: false, tools: false });
    let mut agent = Agent::builder(sender).build();
    let out = agent.turn(Message::user("hi"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "plain");
}

#[tokio::test]
async fn empty_input_is_rejected_without_touching_history() {
    let sender = Scripted::new(vec![]);
    let mut agent = Agent::builder(sender.clone()).build();
    let err = agent.turn(Message::user("   "), CancellationToken::new()).await.unwrap_err();
    assert!(matches!(err, AgentError::InvalidInput(_)));
    let err = agent.turn(Message::assistant("x"), CancellationToken::new()).await.unwrap_err();
    assert!(matches!(err, AgentError::InvalidInput(_)));
    assert!(agent.history().is_empty());
    assert!(sender.seen().is_empty());
}

#[tokio::test]
async fn run_and_run_stream_stop_at_the_first_failure() {
    let sender = Scripted::new(vec![text("a"), text("b")]);
    let mut agent = Agent::builder(sender).build();
    let outs =
        agent.run(vec![Message::user("1"), Message::user("2")], CancellationToken::new()).await.unwrap();
    assert_eq!(outs.iter().map(|o| o.text.as_str()).collect::<Vec<_>>(), ["a", "b"]);

    let sender = Scripted::new(vec![
        text("a"),
        Reply::Fail(ProviderError::Server { status: Some(500), message: "x".into() }),
    ]);
    let mut agent = Agent::builder(sender.clone()).build();
    let events = collect(agent.run_stream(
        vec![Message::user("1"), Message::user("2"), Message::user("3")],
        CancellationToken::new(),
    ))
    .await;
    let ends = events.iter().filter(|e| matches!(e, AgentEvent::TurnEnd { .. })).count();
    assert_eq!(ends, 2, "the third turn never started");
    assert_eq!(sender.seen().len(), 2);
    assert_eq!(agent.history().len(), 2);
}

#[tokio::test]
async fn retry_notices_from_the_provider_become_events() {
    let sender = Scripted::new(vec![Reply::Events(vec![
        StreamEvent::Retry {
            attempt: 2,
            max_attempts: 4,
            delay: Duration::from_millis(1500),
            reason: "HTTP 529".into(),
            restart: false,
        },
        StreamEvent::TextDelta("ok".into()),
    ])]);
    let mut agent = Agent::builder(sender).build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    assert!(events.contains(&AgentEvent::Retry {
        attempt: 2,
        max_attempts: 4,
        delay_ms: 1500,
        reason: "HTTP 529".into(),
        restart: false,
    }));
}

#[tokio::test]
async fn a_restarted_reply_leaves_no_trace_of_the_broken_one() {
    let sender = Scripted::new(vec![Reply::Events(vec![
        StreamEvent::TextDelta("the broken par".into()),
        StreamEvent::ToolUseStart { index: 0, id: "half".into(), name: "read".into() },
        StreamEvent::ToolUseInputDelta { index: 0, partial_json: "{\"te".into() },
        StreamEvent::Retry {
            attempt: 2,
            max_attempts: 5,
            delay: Duration::ZERO,
            reason: "connection reset".into(),
            restart: true,
        },
        StreamEvent::TextDelta("the whole answer".into()),
        StreamEvent::Stop(StopReason::EndTurn),
    ])]);
    let log = Log::default();
    let mut agent = Agent::builder(sender).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    let events = collect(agent.turn_stream(Message::user("go"), CancellationToken::new())).await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Retry { restart: true, .. })));
    assert_eq!(agent.history().len(), 2);
    assert_eq!(agent.history()[1].text(), "the whole answer", "the void reply is not in the history");
    assert!(!agent.history()[1].has_tool_use(), "nor its half tool call");
    assert!(log.take().is_empty());
}

#[tokio::test]
async fn switching_sender_keeps_history() {
    let mut agent = Agent::builder(Scripted::new(vec![text("from a")])).build();
    agent.turn(Message::user("1"), CancellationToken::new()).await.unwrap();
    let b = Scripted::new(vec![text("from b")]);
    agent.set_sender(b.clone());
    agent.turn(Message::user("2"), CancellationToken::new()).await.unwrap();
    assert_eq!(b.seen()[0].messages.len(), 3);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_stream_mid_tool_leaves_no_dangling_tool_use() {
    let log = Log::default();
    let sender = Scripted::new(vec![text("first"), tools(&[("t1", "stubborn", r#"{"text":"a"}"#)])]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("stubborn", false, &log).behaving(Behaviour::Stubborn)]))
        .build();
    agent.turn(Message::user("one"), CancellationToken::new()).await.unwrap();
    let before = agent.history().to_vec();
    {
        let mut stream = agent.turn_stream(Message::user("two"), CancellationToken::new());
        while let Some(e) = stream.next().await {
            if matches!(e, AgentEvent::ToolCallStart { .. }) {
                break; // the front end goes away while the tool runs
            }
        }
    }
    assert_eq!(log.take(), ["start a"]);
    assert_eq!(agent.history(), before.as_slice());
    assert_consistent(agent.history());
}

/// Asks about calls whose `text` is "ask"; records what it is told to remember.
#[derive(Default)]
struct AskSome {
    remembered: std::sync::Mutex<Vec<ApprovalDecision>>,
}

impl PermissionGate for AskSome {
    fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        if q.input["text"] == "ask" {
            PermissionDecision::Ask { summary: None, reason: Some("test".into()) }
        } else {
            PermissionDecision::Allow
        }
    }
    fn remember(&self, _q: &PermissionQuery<'_>, d: &ApprovalDecision) {
        self.remembered.lock().unwrap().push(d.clone());
    }
}

#[tokio::test]
async fn cancelling_during_an_approval_runs_nothing_and_remembers_nothing() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[
        ("a", "read", r#"{"text":"free"}"#),
        ("b", "read", r#"{"text":"ask"}"#),
    ])]);
    let gate = Arc::new(AskSome::default());
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("read", true, &log)]))
        .permission_gate(gate.clone())
        .build();
    let cancel = CancellationToken::new();
    let events = {
        let mut stream = agent.turn_stream(Message::user("go"), cancel.clone());
        let mut events = Vec::new();
        while let Some(e) = stream.next().await {
            if matches!(e, AgentEvent::ApprovalRequired { .. }) {
                cancel.cancel();
            }
            events.push(e);
        }
        events
    };
    assert!(log.take().is_empty(), "the already-allowed call must not start after cancellation");
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::ToolCallStart { .. })));
    assert!(gate.remembered.lock().unwrap().is_empty());
    let h = agent.history();
    assert_consistent(h);
    assert!(result_text(&h[2].content[0]).0.contains("not run"));
}

#[tokio::test]
async fn dropping_the_stream_withdraws_pending_approvals() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("b", "read", r#"{"text":"ask"}"#)])]);
    let mut agent = Agent::builder(sender)
        .tools(registry(vec![TestTool::new("read", true, &log)]))
        .permission_gate(Arc::new(AskSome::default()))
        .build();
    let broker = agent.approvals();
    {
        let mut stream = agent.turn_stream(Message::user("go"), CancellationToken::new());
        while let Some(e) = stream.next().await {
            if matches!(e, AgentEvent::ApprovalRequired { .. }) {
                assert_eq!(broker.pending().len(), 1);
                break;
            }
        }
    }
    assert!(broker.pending().is_empty(), "no ghost approvals after the turn is gone");
    assert!(agent.history().is_empty());
}

struct Spawner(Log);

#[async_trait]
impl ToolExecutor for Spawner {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new("spawn", "starts background work", json!({"type": "object"}))
    }
    async fn execute(&self, _input: Value, ctx: &ToolContext) -> ToolOutput {
        let token = ctx.cancel().clone();
        let log = self.0.clone();
        tokio::spawn(async move {
            token.cancelled().await;
            log.push("background stopped");
        });
        ToolOutput::text("started")
    }
}

#[tokio::test]
async fn work_a_tool_started_is_told_to_stop_when_the_turn_ends() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("s", "spawn", "{}")]), text("done")]);
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(Spawner(log.clone())));
    let mut agent = Agent::builder(sender).tools(reg).build();
    agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), async {
        while log.0.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    assert_eq!(log.take(), ["background stopped"]);
}

#[tokio::test]
async fn max_turns_outcome_carries_the_last_assistant_text() {
    let log = Log::default();
    let sender = Scripted::new(vec![tools(&[("t", "read", r#"{"text":"x"}"#)])]);
    let mut agent =
        Agent::builder(sender).tools(registry(vec![TestTool::new("read", true, &log)])).max_turns(1).build();
    let out = agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.reason, TurnEndReason::MaxTurns);
    assert_eq!(out.text, "working on it");
}

#[tokio::test]
async fn buffered_responses_with_unparseable_arguments_get_an_error_result() {
    let bad = Message::new(
        Role::Assistant,
        vec![ContentBlock::ToolUse { id: "x".into(), name: "read".into(), input: json!("{\"text\": oops") }],
    );
    let sender = Scripted::buffered(vec![whole(bad), whole(Message::assistant("ok"))]);
    let log = Log::default();
    let mut agent = Agent::builder(sender).tools(registry(vec![TestTool::new("read", true, &log)])).build();
    agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert!(log.take().is_empty());
    assert_eq!(agent.history()[1].tool_uses().next().unwrap().input, &json!({}));
    let (t, e) = result_text(&agent.history()[2].content[0]);
    assert!(e && t.contains("not valid JSON"), "{t}");
}

#[tokio::test]
async fn a_server_that_reports_no_usage_gets_an_estimate_that_says_so() {
    let sender = Scripted::new(vec![Reply::Events(vec![
        StreamEvent::TextDelta("an answer of some length".into()),
        StreamEvent::Stop(StopReason::EndTurn),
    ])]);
    let mut agent = Agent::builder(sender).system_prompt("You are terse.").build();
    let out = agent.turn(Message::user("a question of some length"), CancellationToken::new()).await.unwrap();
    assert!(out.usage.estimated);
    assert!(out.usage.input_tokens > 0 && out.usage.output_tokens > 0, "{:?}", out.usage);
    // A reported usage is never marked.
    let mut agent = Agent::builder(Scripted::new(vec![text("hi")])).build();
    let out = agent.turn(Message::user("q"), CancellationToken::new()).await.unwrap();
    assert!(!out.usage.estimated);
}
