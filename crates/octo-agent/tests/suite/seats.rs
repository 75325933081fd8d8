//! The turn's seats and explicit outcomes: plugins that deny, add context and make a turn go on;
//! tools that describe themselves; every way a call can end, said in the event.

use super::common::*;
use futures_util::StreamExt;
use octo_agent::*;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// A tool defined only here: a "deploy" command runner. Everything octo needs to know about it
/// comes from what it declares.
struct Deploy;

#[async_trait]
impl ToolExecutor for Deploy {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new("deploy", "deploys", json!({"type": "object"}))
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::writes().subject(Subject::command("target")).output(OutputKind::Diff)
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!("deployed {}\n+new\n-old", input["target"].as_str().unwrap_or("?")))
    }
}

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(Arc::new(Deploy));
    r
}

async fn events(agent: &mut Agent, prompt: &str) -> Vec<AgentEvent> {
    agent.turn_stream(Message::user(prompt), CancellationToken::new()).collect().await
}

fn ends(events: &[AgentEvent]) -> Vec<(String, ToolOutcome)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallEnd { name, outcome, .. } => Some((name.clone(), *outcome)),
            _ => None,
        })
        .collect()
}

/// Records the order plugins ran in; denies `deploy` to production.
struct Guard {
    name: &'static str,
    priority: i32,
    order: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Plugin for Guard {
    fn name(&self) -> &str {
        self.name
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    async fn before_tool(&self, call: plugin::ToolCallInfo<'_>) -> BeforeTool {
        self.order.lock().unwrap().push(self.name.to_owned());
        if call.input["target"] == "production" && self.name == "policy" {
            return BeforeTool::deny("production deploys need a change ticket");
        }
        BeforeTool::proceed()
    }
}

#[tokio::test]
async fn a_plugin_denies_a_call_with_a_reason_the_model_sees_and_plugins_run_by_priority() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let sender = Scripted::new(vec![tools(&[("t1", "deploy", r#"{"target":"production"}"#)]), text("ok")]);
    let mut agent = Agent::builder(sender.clone())
        .tools(registry())
        .plugin(Arc::new(Guard { name: "audit", priority: -5, order: order.clone() }))
        .plugin(Arc::new(Guard { name: "policy", priority: 10, order: order.clone() }))
        .plugin(Arc::new(Guard { name: "log", priority: 0, order: order.clone() }))
        .build();
    let ev = events(&mut agent, "ship it").await;
    assert_eq!(ends(&ev), [("deploy".to_owned(), ToolOutcome::DeniedByPlugin)]);
    assert_eq!(*order.lock().unwrap(), ["policy"], "the deny stopped the plugins after it");
    let (said, is_error) = result_text(&agent.history()[2].content[0]);
    assert!(is_error && said.contains("change ticket") && said.contains("policy"), "{said}");
    assert!(!ev.iter().any(|e| matches!(e, AgentEvent::ToolCallStart { .. })), "a denied call never starts");

    order.lock().unwrap().clear();
    let sender = Scripted::new(vec![tools(&[("t1", "deploy", r#"{"target":"staging"}"#)]), text("ok")]);
    agent.set_sender(sender);
    let ev = events(&mut agent, "stage it").await;
    assert_eq!(ends(&ev), [("deploy".to_owned(), ToolOutcome::Ran)]);
    assert_eq!(*order.lock().unwrap(), ["policy", "log", "audit"], "highest priority first");
}

/// Adds a note before every request.
struct Note;

#[async_trait]
impl Plugin for Note {
    fn name(&self) -> &str {
        "note"
    }
    async fn before_request(&self, r: plugin::RequestInfo<'_>) -> Option<String> {
        (r.request == 1).then(|| "[note: the build is red]".to_owned())
    }
}

#[tokio::test]
async fn a_plugin_adds_context_before_a_request_and_it_stays_in_history() {
    let sender = Scripted::new(vec![text("seen"), text("again")]);
    let mut agent = Agent::builder(sender.clone()).plugin(Arc::new(Note)).build();
    agent.turn(Message::user("status?"), CancellationToken::new()).await.unwrap();
    let first = &sender.seen()[0].messages;
    assert_eq!(first.len(), 1);
    assert!(first[0].text().contains("status?") && first[0].text().contains("build is red"), "{first:?}");
    agent.turn(Message::user("and now?"), CancellationToken::new()).await.unwrap();
    let second = &sender.seen()[1].messages;
    assert_eq!(&second[..2], &agent.history()[..2], "the note is part of the stable prefix");
}

/// Makes the turn go on once.
struct OnceMore;

#[async_trait]
impl Plugin for OnceMore {
    fn name(&self) -> &str {
        "once-more"
    }
    async fn before_finish(&self, f: plugin::FinishInfo<'_>) -> Option<String> {
        (f.extensions == 0).then(|| format!("You said `{}`; now run the tests too.", f.answer))
    }
}

#[tokio::test]
async fn a_plugin_makes_the_turn_go_on_once_at_its_end() {
    let sender = Scripted::new(vec![text("fixed"), text("tests pass")]);
    let mut agent = Agent::builder(sender.clone()).plugin(Arc::new(OnceMore)).build();
    let out = agent.turn(Message::user("fix it"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "tests pass");
    assert_eq!(out.requests, 2);
    let h = agent.history();
    assert_eq!(h.len(), 4);
    assert!(h[2].text().contains("You said `fixed`"), "{h:?}");
}

/// Rewrites the target and adds context to every result.
struct Rewriter;

#[async_trait]
impl Plugin for Rewriter {
    fn name(&self) -> &str {
        "rewriter"
    }
    async fn before_tool(&self, call: plugin::ToolCallInfo<'_>) -> BeforeTool {
        BeforeTool::rewrite(
            json!({"target": format!("{}-canary", call.input["target"].as_str().unwrap_or(""))}),
        )
    }
    async fn after_tool(&self, _call: plugin::ToolCallInfo<'_>, _output: &ToolOutput) -> AfterTool {
        AfterTool::AddContext("[checked by rewriter]".into())
    }
}

#[tokio::test]
async fn a_plugin_rewrites_input_and_adds_to_results() {
    let sender = Scripted::new(vec![tools(&[("t1", "deploy", r#"{"target":"web"}"#)]), text("ok")]);
    let mut agent = Agent::builder(sender).tools(registry()).plugin(Arc::new(Rewriter)).build();
    let ev = events(&mut agent, "go").await;
    let started = ev.iter().find_map(|e| match e {
        AgentEvent::ToolCallStart { summary, .. } => Some(summary.clone()),
        _ => None,
    });
    assert_eq!(started.as_deref(), Some("web-canary"), "the summary comes from the tool's subject");
    let (said, _) = result_text(&agent.history()[2].content[0]);
    assert!(said.starts_with("deployed web-canary") && said.ends_with("[checked by rewriter]"), "{said}");
    let kind = ev.iter().find_map(|e| match e {
        AgentEvent::ToolCallEnd { kind, .. } => Some(*kind),
        _ => None,
    });
    assert_eq!(kind, Some(OutputKind::Diff), "front ends learn the output kind from the tool");
}

/// A gate that denies by rule, blocks writes in plan mode or asks, by the call's subject.
struct Gate;

impl PermissionGate for Gate {
    fn check(&self, q: &PermissionQuery<'_>) -> PermissionDecision {
        match q.subject_value() {
            Some("prod") => PermissionDecision::Deny { message: "rule says no".into(), kind: DenyKind::Rule },
            Some("plan") => {
                PermissionDecision::Deny { message: "plan mode".into(), kind: DenyKind::PlanMode }
            }
            Some("rm") => PermissionDecision::Deny { message: "never".into(), kind: DenyKind::HardDeny },
            Some("ask") => PermissionDecision::Ask { summary: None, reason: None },
            _ => PermissionDecision::Allow,
        }
    }
}

#[tokio::test]
async fn every_outcome_is_said_in_the_event() {
    let calls = [
        ("a", "deploy", r#"{"target":"prod"}"#),
        ("b", "deploy", r#"{"target":"plan"}"#),
        ("c", "deploy", r#"{"target":"rm"}"#),
        ("d", "deploy", r#"{"target":"ask"}"#),
        ("e", "nope", r#"{}"#),
        ("f", "deploy", r#"{"target":"fine"}"#),
    ];
    let sender = Scripted::new(vec![tools(&calls), text("done")]);
    let mut agent = Agent::builder(sender).tools(registry()).permission_gate(Arc::new(Gate)).build();
    let broker = agent.approvals();
    let mut stream = agent.turn_stream(Message::user("go"), CancellationToken::new());
    let mut ev = Vec::new();
    while let Some(e) = stream.next().await {
        if let AgentEvent::ApprovalRequired { approval_id, request } = &e {
            assert_eq!(request.summary, "ask", "the approval names the call by its subject");
            broker.resolve(approval_id, ApprovalDecision::Deny { message: None }).unwrap();
        }
        ev.push(e);
    }
    drop(stream);
    let got: Vec<ToolOutcome> = ends(&ev).into_iter().map(|(_, o)| o).collect();
    assert_eq!(
        got,
        [
            ToolOutcome::DeniedByRule,
            ToolOutcome::BlockedByPlanMode,
            ToolOutcome::HardDenied,
            ToolOutcome::DeniedByUser,
            ToolOutcome::UnknownTool,
            ToolOutcome::Ran,
        ]
    );

    // Unattended: what would be asked is denied for want of anyone to ask.
    let sender = Scripted::new(vec![tools(&[("g", "deploy", r#"{"target":"ask"}"#)]), text("done")]);
    agent.set_sender(sender);
    let ev: Vec<AgentEvent> =
        agent.turn_stream_unattended(Message::user("go"), CancellationToken::new()).collect().await;
    assert_eq!(ends(&ev), [("deploy".to_owned(), ToolOutcome::DeniedUnattended)]);
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_is_interrupted_not_denied() {
    let sender = Scripted::new(vec![tools(&[("a", "deploy", r#"{"target":"ask"}"#)])]);
    let mut agent = Agent::builder(sender).tools(registry()).permission_gate(Arc::new(Gate)).build();
    let cancel = CancellationToken::new();
    let mut stream = agent.turn_stream(Message::user("go"), cancel.clone());
    let mut ev = Vec::new();
    while let Some(e) = stream.next().await {
        if matches!(e, AgentEvent::ApprovalRequired { .. }) {
            cancel.cancel();
        }
        ev.push(e);
    }
    drop(stream);
    assert_eq!(ends(&ev), [("deploy".to_owned(), ToolOutcome::Interrupted)]);
}

/// Adds a note before every request, numbered.
struct EveryRequest;

#[async_trait]
impl Plugin for EveryRequest {
    fn name(&self) -> &str {
        "every-request"
    }
    async fn before_request(&self, r: plugin::RequestInfo<'_>) -> Option<String> {
        Some(format!("[note {}]", r.request))
    }
}

#[tokio::test]
async fn context_before_a_later_request_is_a_message_of_its_own_and_is_committed() {
    let sender = Scripted::new(vec![tools(&[("t1", "deploy", r#"{"target":"x"}"#)]), text("done")]);
    let mut agent = Agent::builder(sender.clone()).tools(registry()).plugin(Arc::new(EveryRequest)).build();
    let ev = events(&mut agent, "go").await;
    let seen = sender.seen();
    assert!(seen[0].messages[0].text().contains("[note 1]"), "the turn's input carries the first note");
    let second = &seen[1].messages;
    assert_eq!(second.len(), 4, "{second:?}");
    assert_eq!(second[2].tool_result_ids().count(), 1, "the committed results message is unchanged");
    assert_eq!(second[3].text(), "[note 2]");
    let committed: Vec<Message> = ev
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Committed { messages } => Some(messages.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(committed, agent.history(), "the session file would hold exactly what the model saw");
    assert_consistent(agent.history());
}

#[tokio::test]
async fn a_retried_request_does_not_get_the_context_twice() {
    let cut = Reply::Events(vec![
        StreamEvent::TextDelta("partial".into()),
        StreamEvent::Stop(StopReason::MaxTokens),
    ]);
    let sender = Scripted::new(vec![cut, text("whole answer")]);
    let mut agent = Agent::builder(sender.clone()).plugin(Arc::new(EveryRequest)).build();
    agent.config_mut().max_tokens = Some(100);
    let out = agent.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "whole answer");
    let seen = sender.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].max_tokens, Some(200), "the retry asks for more room");
    assert_eq!(seen[1].messages, seen[0].messages, "the same request again, the note once");
}

/// Records whether the call reached it as approved by the user.
struct Probe(Arc<Mutex<Vec<bool>>>);

#[async_trait]
impl ToolExecutor for Probe {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new("probe", "probes", json!({"type": "object"}))
    }
    async fn execute(&self, _input: Value, ctx: &ToolContext) -> ToolOutput {
        self.0.lock().unwrap().push(ctx.user_approved());
        ToolOutput::text("ok")
    }
}

/// Asks about every call.
struct AlwaysAsk;

#[async_trait]
impl Plugin for AlwaysAsk {
    fn name(&self) -> &str {
        "always-ask"
    }
    async fn before_tool(&self, _call: plugin::ToolCallInfo<'_>) -> BeforeTool {
        BeforeTool::ask(Some("policy wants a look".into()))
    }
}

#[tokio::test]
async fn only_the_gates_own_question_counts_as_the_users_approval_of_the_call() {
    // The tool's own checks (a write outside the workspace) may rely on the user's yes only
    // when the gate asked: a plugin's question does not say what the tool would ask about.
    let seen = Arc::new(Mutex::new(Vec::new()));
    for (gate, want) in
        [(Arc::new(AllowAll) as Arc<dyn PermissionGate>, false), (Arc::new(AskForWrites), true)]
    {
        let sender = Scripted::new(vec![tools(&[("t", "probe", "{}")]), text("done")]);
        let mut r = ToolRegistry::new();
        r.register(Arc::new(Probe(seen.clone())));
        let mut agent =
            Agent::builder(sender).tools(r).permission_gate(gate).plugin(Arc::new(AlwaysAsk)).build();
        let broker = agent.approvals();
        let mut stream = agent.turn_stream(Message::user("go"), CancellationToken::new());
        while let Some(e) = stream.next().await {
            if let AgentEvent::ApprovalRequired { approval_id, request } = e {
                assert!(
                    request.reason.as_deref().is_some_and(|r| r.contains("policy wants a look")),
                    "{request:?}"
                );
                broker.resolve(&approval_id, ApprovalDecision::Allow).unwrap();
            }
        }
        drop(stream);
        assert_eq!(seen.lock().unwrap().pop(), Some(want));
    }
}
