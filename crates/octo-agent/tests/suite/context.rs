//! Context management: compaction, overflow recovery, truncated replies, dangling calls, loops
//! and cache-friendly requests.

use super::common::*;
use futures_util::StreamExt;
use octo_agent::context::{estimate_tokens, ContextConfig};
use octo_agent::*;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// Returns `size` bytes of output.
struct Big(usize);

#[async_trait]
impl ToolExecutor for Big {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new("read_file", "reads", json!({"type": "object"}))
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!("{} {}", input, "z".repeat(self.0)))
    }
}

fn tools_with(t: impl ToolExecutor + 'static) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(Arc::new(t));
    r
}

/// Replies without usage reports, so occupancy comes from the agent's own estimate.
fn bare(r: Reply) -> Reply {
    match r {
        Reply::Events(ev) => {
            Reply::Events(ev.into_iter().filter(|e| !matches!(e, StreamEvent::Usage(_))).collect())
        }
        other => other,
    }
}

fn stop(reason: StopReason, text: &str) -> Reply {
    Reply::Events(vec![StreamEvent::TextDelta(text.into()), StreamEvent::Stop(reason)])
}

fn ctx(window: u64) -> AgentConfig {
    AgentConfig {
        context: ContextConfig { window, ..ContextConfig::default() },
        system_prompt: Some("RULES: be careful".into()),
        ..AgentConfig::default()
    }
}

async fn events(agent: &mut Agent, text: &str) -> Vec<AgentEvent> {
    agent.turn_stream(Message::user(text), CancellationToken::new()).collect().await
}

/// Runs `n` tool-using turns, returning every event.
async fn run_turns(agent: &mut Agent, n: usize) -> Vec<AgentEvent> {
    let mut all = Vec::new();
    for i in 0..n {
        all.extend(events(agent, &format!("turn {i}")).await);
    }
    all
}

fn script(turns: usize) -> Vec<Reply> {
    (0..turns)
        .flat_map(|i| {
            [
                bare(tools(&[(&format!("c{i}"), "read_file", r#"{"path":"x"}"#)])),
                bare(text(&format!("answer {i}"))),
            ]
        })
        .collect()
}

#[tokio::test]
async fn past_the_threshold_old_turns_are_summarized() {
    let sender = Scripted::new(script(6));
    let mut cfg = ctx(6_000);
    cfg.context.reclaim_min_bytes = 1_000_000; // reclaiming frees nothing here: summarizing must
    cfg.context.keep_ratio = 0.2;
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(6_000))).config(cfg).build();
    let ev = run_turns(&mut agent, 6).await;
    assert!(ev
        .iter()
        .any(|e| matches!(e, AgentEvent::CompactionStart { reason, .. } if *reason == CompactReason::Auto)));
    assert!(ev
        .iter()
        .any(|e| matches!(e, AgentEvent::CompactionEnd { messages_folded, .. } if *messages_folded > 0)));
    assert!(ev.iter().any(|e| matches!(e, AgentEvent::HistoryReplaced { .. })));
    let seen = sender.seen();
    assert!(
        seen.iter().any(|s| s.system.as_deref().is_some_and(|x| x.contains("compress"))),
        "a summary was asked for"
    );
    let last = seen.last().unwrap();
    assert_eq!(last.system.as_deref(), Some("RULES: be careful"), "the system prompt is never folded");
    let first = last.messages[0].text();
    assert!(
        first.starts_with("[Summary of the earlier conversation") && first.contains("## Goals"),
        "{first}"
    );
    assert!(last.messages.iter().any(|m| m.text().contains("turn 5")), "the latest prompt is intact");
    assert!(estimate_tokens(&last.messages) < 4_500);
    assert_consistent(agent.history());
    // The request prefix stays byte-identical from request to request, except where a
    // compaction rewrote the history: each compaction breaks it once.
    let main: Vec<&Seen> =
        seen.iter().filter(|s| !s.system.as_deref().is_some_and(|x| x.contains("compress"))).collect();
    let breaks = main.windows(2).filter(|w| !w[1].messages.starts_with(&w[0].messages)).count();
    let rewrites = ev
        .iter()
        .filter(|e| matches!(e, AgentEvent::CompactionEnd { messages_folded, reclaimed, .. } if *messages_folded > 0 || *reclaimed > 0))
        .count();
    assert!(rewrites >= 1);
    assert_eq!(breaks, rewrites);
}

#[tokio::test]
async fn reclaiming_alone_is_enough_when_it_frees_enough() {
    let sender = Scripted::new(script(4));
    let mut cfg = ctx(9_000);
    cfg.context.keep_recent_results = 1;
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(8_000))).config(cfg).build();
    let ev = run_turns(&mut agent, 4).await;
    assert!(ev.iter().any(|e| matches!(e, AgentEvent::CompactionEnd { messages_folded: 0, reclaimed, .. } if *reclaimed >= 1)), "{ev:?}");
    let last = sender.seen().pop().unwrap();
    let flat = serde_json::to_string(&last.messages).unwrap();
    assert!(flat.contains("[old result of `read_file`"), "placeholders name the call");
    assert!(
        !sender.seen().iter().any(|s| s.system.as_deref().is_some_and(|x| x.contains("compress"))),
        "no summary call"
    );
}

#[tokio::test]
async fn anti_thrash_skips_a_summary_that_would_fold_too_little() {
    // One enormous current turn: folding the small earlier turn would gain almost nothing.
    let sender = Scripted::new(
        vec![text("a"), tools(&[("c", "read_file", "{}")]), text("b")].into_iter().map(bare).collect(),
    );
    let mut cfg = ctx(3_000);
    cfg.context.keep_recent_results = 10;
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(20_000))).config(cfg).build();
    agent.turn(Message::user("hi"), CancellationToken::new()).await.unwrap();
    let ev = events(&mut agent, "read it").await;
    assert!(ev.iter().any(|e| matches!(e, AgentEvent::CompactionEnd { messages_folded: 0, .. })), "{ev:?}");
    assert_eq!(sender.seen().len(), 3, "no summary request was made");
}

#[tokio::test]
async fn an_overflow_is_recovered_by_compacting_and_retrying() {
    let too_long = || {
        Reply::Fail(ProviderError::ContextTooLong {
            deficit: Some(500),
            message: "prompt is too long".into(),
        })
    };
    let sender = Scripted::new(vec![
        tools(&[("c0", "read_file", "{}")]),
        text("first"),
        text("second"),
        too_long(), // retried after reclaiming
        too_long(), // retried after summarizing (the summary request is answered by the mock)
        text("fits now"),
    ]);
    let mut cfg = ctx(0); // window unknown: only overflow recovery can compact
    cfg.context.keep_recent_results = 0;
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(3_000))).config(cfg).build();
    agent.turn(Message::user("one"), CancellationToken::new()).await.unwrap();
    agent.turn(Message::user("two"), CancellationToken::new()).await.unwrap();
    let out = agent.turn(Message::user("three"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "fits now");
    assert_eq!(sender.seen().len(), 7, "two turns, the first try, two retries and the summary");
    let last = sender.seen().pop().unwrap();
    assert!(last.messages[0].text().contains("[Summary"), "{:?}", last.messages[0]);
}

#[tokio::test]
async fn an_overflow_that_never_fits_is_a_clear_error() {
    let too_long =
        || Reply::Fail(ProviderError::ContextTooLong { deficit: None, message: "prompt is too long".into() });
    let sender = Scripted::new(vec![too_long(), too_long(), too_long(), too_long()]);
    let mut agent = Agent::builder(sender).config(ctx(0)).build();
    let err = agent.turn(Message::user("x"), CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("does not fit even after compacting"), "{err}");
    assert!(agent.history().is_empty());
}

#[tokio::test]
async fn a_reply_cut_at_the_output_limit_is_continued() {
    let sender = Scripted::new(vec![
        stop(StopReason::MaxTokens, "The first half, "),
        stop(StopReason::EndTurn, "and the second half."),
    ]);
    let mut agent = Agent::builder(sender.clone()).build();
    let out = agent.turn(Message::user("write"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "The first half, and the second half.");
    let second = &sender.seen()[1];
    assert!(second.messages.last().unwrap().text().contains("Continue exactly where you stopped"));
}

#[tokio::test]
async fn with_a_configured_cap_the_reply_is_first_retried_with_room() {
    let sender =
        Scripted::new(vec![stop(StopReason::MaxTokens, "cut"), stop(StopReason::EndTurn, "whole answer")]);
    let mut agent = Agent::builder(sender.clone())
        .config(AgentConfig { max_tokens: Some(1_000), ..AgentConfig::default() })
        .build();
    let out = agent.turn(Message::user("write"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "whole answer");
    let seen = sender.seen();
    assert_eq!((seen[0].max_tokens, seen[1].max_tokens), (Some(1_000), Some(2_000)));
    assert_eq!(seen[1].messages.len(), 1, "the cut answer was not kept");
}

#[tokio::test]
async fn the_users_cap_limits_the_whole_answer() {
    let sender = Scripted::new((0..5).map(|i| stop(StopReason::MaxTokens, &format!("part{i} "))).collect());
    let mut agent = Agent::builder(sender.clone())
        .config(AgentConfig { max_tokens: Some(200), max_tokens_is_budget: true, ..AgentConfig::default() })
        .build();
    let events: Vec<AgentEvent> =
        agent.turn_stream(Message::user("write"), CancellationToken::new()).collect().await;
    assert_eq!(sender.seen().len(), 1, "neither asked again with more room nor continued");
    assert_eq!(sender.seen()[0].max_tokens, Some(200));
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Notice { message } if message.contains("200 tokens"))));
    assert_eq!(agent.history().last().unwrap().text(), "part0 ");
}

#[tokio::test]
async fn continuations_stop_after_the_limit() {
    let sender = Scripted::new((0..5).map(|i| stop(StopReason::MaxTokens, &format!("part{i} "))).collect());
    let mut agent = Agent::builder(sender.clone()).build();
    let out = agent.turn(Message::user("write"), CancellationToken::new()).await.unwrap();
    assert_eq!(sender.seen().len(), 4, "the first reply and three continuations");
    assert_eq!(out.text, "part0 part1 part2 part3 ");
}

#[tokio::test]
async fn a_continuation_that_only_repeats_ends_the_answer() {
    let line = "- `/tmp/workspace/my_repo.git/my_repo.git` is a file in this repository\n";
    let sender = Scripted::new((0..5).map(|_| stop(StopReason::MaxTokens, &line.repeat(6))).collect());
    let mut agent = Agent::builder(sender.clone()).build();
    let events: Vec<AgentEvent> =
        agent.turn_stream(Message::user("list"), CancellationToken::new()).collect().await;
    assert_eq!(sender.seen().len(), 2, "the first reply and one continuation that went nowhere");
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Notice { message } if message.contains("repeated itself"))));
}

#[tokio::test]
async fn a_tool_call_cut_at_the_limit_ends_the_turn_cleanly() {
    let sender = Scripted::new(vec![Reply::Events(vec![
        StreamEvent::TextDelta("Let me write it.".into()),
        StreamEvent::ToolUseStart { index: 0, id: "c".into(), name: "read_file".into() },
        StreamEvent::ToolUseInputDelta { index: 0, partial_json: "{\"path\": \"a".into() },
        StreamEvent::Stop(StopReason::MaxTokens),
    ])]);
    let mut agent = Agent::builder(sender).tools(tools_with(Big(10))).build();
    let ev = events(&mut agent, "go").await;
    assert!(ev.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("cut off at the output limit"))
    ));
    assert!(!ev.iter().any(|e| matches!(e, AgentEvent::ToolCallStart { .. })));
    assert_eq!(agent.history()[1].content, vec![ContentBlock::text("Let me write it.")]);
    assert!(matches!(
        ev.last(),
        Some(AgentEvent::TurnEnd {
            reason: TurnEndReason::Completed,
            stop_reason: Some(StopReason::MaxTokens),
            ..
        })
    ));
}

#[tokio::test]
async fn dangling_tool_calls_are_answered_before_the_next_request() {
    let old = vec![
        Message::user("start"),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolUse { id: "lost".into(), name: "read_file".into(), input: json!({}) }],
        ),
    ];
    let sender = Scripted::new(vec![text("ok")]);
    let mut agent = Agent::builder(sender.clone()).history(old).build();
    agent.turn(Message::user("again"), CancellationToken::new()).await.unwrap();
    let sent = &sender.seen()[0].messages;
    assert_eq!(sent[2].tool_result_ids().collect::<Vec<_>>(), ["lost"]);
    let (t, e) = result_text(&sent[2].content[0]);
    assert!(e && t.contains("no result was recorded"), "{t}");
}

#[tokio::test]
async fn a_call_repeated_ten_times_is_warned_about_then_stopped() {
    let replies = (0..10).map(|i| tools(&[(&format!("c{i}"), "read_file", r#"{"path":"same"}"#)])).collect();
    let sender = Scripted::new(replies);
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(10))).build();
    let out = agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.reason, TurnEndReason::LoopDetected);
    assert_eq!(sender.seen().len(), 5, "stopped at the fifth identical call");
    let third = result_text(&agent.history()[6].content[0]).0;
    assert!(
        third.contains("Warning: you have called `read_file` with the same arguments 3 times"),
        "{third}"
    );
    assert_consistent(agent.history());
}

#[tokio::test]
async fn requests_keep_a_stable_prefix_across_turns_until_a_compaction() {
    let mut replies = Vec::new();
    for i in 0..20 {
        replies.push(tools(&[(&format!("c{i}"), "read_file", "{}")]));
        replies.push(text(&format!("answer {i}")));
    }
    let sender = Scripted::new(replies);
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(100))).config(ctx(1_000_000)).build();
    for i in 0..20 {
        agent.turn(Message::user(format!("q{i}")), CancellationToken::new()).await.unwrap();
    }
    let seen = sender.seen();
    for w in seen.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert_eq!(a.system, b.system);
        assert_eq!(a.tools, b.tools);
        assert_eq!(
            &b.messages[..a.messages.len()],
            a.messages.as_slice(),
            "each request extends the previous one"
        );
    }
}

/// A model server in a test: counts tokens like a provider, refuses prompts over its window,
/// and answers every prompt with one tool call, then a short answer.
struct Sim {
    window: u64,
    requests: Mutex<u32>,
    overflows: Mutex<u32>,
}

impl Sim {
    fn answer(&self, req: &Request<'_>) -> Result<Response, ProviderError> {
        *self.requests.lock().unwrap() += 1;
        let tokens = estimate_tokens(req.messages) + req.system.map_or(0, |s| s.len() as u64 / 4);
        if tokens > self.window {
            *self.overflows.lock().unwrap() += 1;
            return Err(ProviderError::ContextTooLong {
                deficit: Some(tokens - self.window),
                message: "too long".into(),
            });
        }
        let usage = Usage { input_tokens: tokens, output_tokens: 20, ..Usage::default() };
        let message = if req.system.is_some_and(|s| s.contains("compress")) {
            Message::assistant("## Goals\nkeep going\n## Open tasks\nmore turns")
        } else if req.messages.last().is_some_and(|m| m.tool_result_ids().next().is_none()) {
            let n = req.messages.len();
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolUse {
                    id: format!("t{n}"),
                    name: "read_file".into(),
                    input: json!({"n": n}),
                }],
            )
        } else {
            Message::assistant(format!("done with {}", req.messages.len()))
        };
        Ok(Response { usage, ..whole(message) })
    }

    /// A sender that answers as this simulated server.
    fn sender(self: &Arc<Self>) -> Arc<Scripted> {
        let sim = Arc::clone(self);
        Scripted::responder(move |req| sim.answer(req))
    }
}

#[tokio::test]
async fn two_hundred_turns_in_a_small_window_never_overflow() {
    let sim = Arc::new(Sim { window: 8_000, requests: Mutex::new(0), overflows: Mutex::new(0) });
    let mut agent = Agent::builder(sim.sender()).tools(tools_with(Big(1_500))).config(ctx(8_000)).build();
    let mut compactions = 0;
    for i in 0..200 {
        let ev = events(&mut agent, &format!("step {i}")).await;
        compactions += ev.iter().filter(|e| matches!(e, AgentEvent::CompactionEnd { .. })).count();
        assert!(!ev.iter().any(|e| matches!(e, AgentEvent::Error { .. })), "turn {i} failed: {ev:?}");
    }
    assert_eq!(*sim.overflows.lock().unwrap(), 0, "compaction kept every request inside the window");
    assert!(compactions > 0);
    let h = agent.history();
    assert_eq!(agent.config().system_prompt.as_deref(), Some("RULES: be careful"));
    assert!(h.iter().any(|m| m.text().contains("step 199")), "the latest work is intact");
    assert!(h[0].text().contains("[Summary"), "older work is summarized");
    assert_consistent(h);
}

#[tokio::test]
async fn cancelling_right_after_a_summary_keeps_the_summarized_history() {
    let mut replies = script(3);
    replies.push(Reply::EventsThenHang(vec![StreamEvent::TextDelta("thinking".into())]));
    let sender = Scripted::new(replies);
    let mut cfg = ctx(1_000_000);
    cfg.context.reclaim_min_bytes = 1_000_000;
    cfg.context.keep_ratio = 0.01; // keep only the new turn
    let mut agent = Agent::builder(sender).tools(tools_with(Big(6_000))).config(cfg).build();
    run_turns(&mut agent, 3).await;
    agent.config_mut().context.window = 6_000; // now the next request is over the threshold
    let cancel = CancellationToken::new();
    let mut saw_compaction = false;
    {
        let mut stream = agent.turn_stream(Message::user("new prompt"), cancel.clone());
        while let Some(e) = stream.next().await {
            if matches!(e, AgentEvent::CompactionEnd { messages_folded, .. } if messages_folded > 0) {
                saw_compaction = true;
            }
            if matches!(e, AgentEvent::TextDelta { .. }) {
                cancel.cancel();
            }
        }
    }
    assert!(saw_compaction);
    let h = agent.history();
    assert!(!h.is_empty(), "the conversation survives the rollback");
    assert!(h[0].text().starts_with("[Summary"), "{:?}", h[0]);
    assert!(!h.iter().any(|m| m.text() == "new prompt"), "the cancelled prompt is rolled back");
    assert_consistent(h);
}

#[tokio::test]
async fn continued_requests_are_flagged_and_outcomes_never_borrow_an_earlier_answer() {
    let sender = Scripted::new(vec![
        stop(StopReason::EndTurn, "old answer"),
        stop(StopReason::MaxTokens, "first, "),
        stop(StopReason::EndTurn, "second"),
        Reply::Events(vec![StreamEvent::Stop(StopReason::EndTurn)]),
    ]);
    let mut agent = Agent::builder(sender).build();
    agent.turn(Message::user("one"), CancellationToken::new()).await.unwrap();
    let ev = events(&mut agent, "two").await;
    let flags: Vec<bool> = ev
        .iter()
        .filter_map(
            |e| if let AgentEvent::RequestStart { continues, .. } = e { Some(*continues) } else { None },
        )
        .collect();
    assert_eq!(flags, [false, true]);
    let out = agent.turn(Message::user("three"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "", "an empty answer is empty, not the previous turn's");
}

fn is_summary_request(s: &Seen) -> bool {
    s.system.as_deref().is_some_and(|x| x.contains("compress"))
}

#[tokio::test]
async fn the_compact_tool_compacts_before_the_next_step() {
    let sender = Scripted::new(vec![
        bare(tools(&[("c0", "read_file", r#"{"path":"x"}"#)])),
        bare(text("read it")),
        bare(tools(&[("c1", context::COMPACT_TOOL, "{}")])),
        bare(text("carrying on")),
    ]);
    let mut reg = tools_with(Big(2_000));
    reg.register(Arc::new(context::CompactTool));
    // Window unknown: nothing but the tool can start a compaction.
    let mut agent = Agent::builder(sender.clone()).tools(reg).config(ctx(0)).build();
    run_turns(&mut agent, 1).await;
    let ev = events(&mut agent, "tidy up, then go on").await;
    assert!(
        ev.iter().any(
            |e| matches!(e, AgentEvent::CompactionStart { reason, .. } if *reason == CompactReason::Tool)
        ),
        "{ev:?}"
    );
    let seen = sender.seen();
    assert_eq!(seen.iter().filter(|s| is_summary_request(s)).count(), 1, "one summary request");
    let last = seen.last().unwrap();
    assert!(last.messages[0].text().starts_with("[Summary"), "{:?}", last.messages[0]);
    assert!(last.messages.iter().any(|m| m.text().contains("tidy up")), "the current prompt stays");
    assert_consistent(agent.history());
}

#[tokio::test]
async fn a_negative_threshold_turns_automatic_compaction_off() {
    let sender = Scripted::new(script(6));
    let mut cfg = ctx(6_000);
    cfg.context.threshold = -1.0;
    let mut agent = Agent::builder(sender.clone()).tools(tools_with(Big(6_000))).config(cfg).build();
    let ev = run_turns(&mut agent, 6).await;
    assert!(!ev.iter().any(|e| matches!(e, AgentEvent::CompactionStart { .. })), "{ev:?}");
    assert!(!sender.seen().iter().any(is_summary_request));
}

#[tokio::test]
async fn a_configured_lite_model_writes_the_summary() {
    let main = Scripted::new(script(6));
    let lite = Scripted::new(Vec::new());
    let mut cfg = ctx(6_000);
    cfg.context.reclaim_min_bytes = 1_000_000;
    cfg.context.keep_ratio = 0.2;
    let mut agent = Agent::builder(main.clone())
        .compaction_sender(lite.clone())
        .tools(tools_with(Big(6_000)))
        .config(cfg)
        .build();
    run_turns(&mut agent, 6).await;
    assert!(!main.seen().iter().any(is_summary_request), "the main model wrote no summary");
    assert!(!lite.seen().is_empty() && lite.seen().iter().all(is_summary_request));
    assert!(main.seen().last().unwrap().messages[0].text().starts_with("[Summary"));
}
