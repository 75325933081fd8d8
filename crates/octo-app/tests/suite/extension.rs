//! A tool defined here, outside octo-tools, plugged into a real session with the real permission
//! engine: it gets a permission prompt that names what it touches, accept-edits treats it as the
//! file write it declares, the fold records its outcome and front ends learn how to render it —
//! with no other code changed.

use octo_agent::{
    async_trait, Access, Agent, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutput,
    ToolRegistry,
};
use octo_app::permissions::RuleSet;
use octo_app::{AgentEvent, Mode, OutputKind, PermissionEngine, Session, ToolOutcome, TurnFold};
use octo_testkit::sender::{text, tools, ScriptedSender};
use serde_json::{json, Value};
use std::sync::Arc;

/// Publishes a note: writes `body` to `file` in the workspace.
struct Publish;

#[async_trait]
impl ToolExecutor for Publish {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new("publish", "Publishes a note.", json!({"type": "object"}))
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::writes()
            .subject(Subject::path("file", Access::Write))
            .reclaimable(&["body"])
            .output(OutputKind::Diff)
    }
    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let file = input["file"].as_str().unwrap_or("note.md");
        let body = input["body"].as_str().unwrap_or("");
        match std::fs::write(ctx.cwd().join(file), body) {
            Ok(()) => ToolOutput::text(format!("published {file}\n+{body}")),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

fn session(ws: &std::path::Path, sender: Arc<ScriptedSender>, mode: Mode) -> Session {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Publish));
    let agent = Agent::builder(sender).tools(registry).cwd(ws).build();
    let engine = Arc::new(PermissionEngine::new(RuleSet::default(), mode));
    Session::from_agent(agent, engine, "test:model", octo_provider::Catalog::builtin().info("test-model"))
}

#[tokio::test]
async fn a_tool_from_outside_gets_its_prompt_rules_outcome_and_rendering() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().canonicalize().unwrap();
    let call = r#"{"file":"notes.md","body":"hello"}"#;
    let sender = ScriptedSender::new(vec![tools(&[("t1", "publish", call)]), text("done")]);
    let s = session(&ws, sender, Mode::Default);
    let mut rx = s.subscribe();
    s.prompt("publish it").unwrap();
    let mut fold = TurnFold::new();
    let mut asked = None;
    loop {
        let ev = rx.recv().await.unwrap();
        if let AgentEvent::ApprovalRequired { approval_id, request } = &ev {
            asked = Some(request.summary.clone());
            s.approvals().approve(approval_id).unwrap();
        }
        if let AgentEvent::ToolCallEnd { kind, .. } = &ev {
            assert_eq!(*kind, OutputKind::Diff, "front ends render it as the diff it declares");
        }
        fold.push(&ev);
        if fold.is_done() {
            break;
        }
    }
    assert_eq!(asked, Some(ws.join("notes.md").display().to_string()), "the prompt names the resolved path");
    let summary = s.conversation().summarize(&fold);
    assert_eq!(summary.tool_calls[0].outcome, ToolOutcome::Ran);
    assert_eq!(summary.tool_calls[0].summary, "notes.md");
    assert_eq!(std::fs::read_to_string(ws.join("notes.md")).unwrap(), "hello");

    // In accept-edits mode a declared file write inside the workspace needs no prompt, one into
    // a protected directory still does (and, headless, is denied for want of anyone to ask).
    let sender = ScriptedSender::new(vec![
        tools(&[("t2", "publish", r#"{"file":"more.md","body":"x"}"#)]),
        text("ok"),
        tools(&[("t3", "publish", r#"{"file":".git/hooks/pre-commit","body":"x"}"#)]),
        text("ok"),
    ]);
    let s = session(&ws, sender, Mode::AcceptEdits);
    let r = s.run("more").await.unwrap();
    assert_eq!(r.tool_calls[0].outcome, ToolOutcome::Ran);
    let mut rx = s.subscribe();
    s.prompt("hooks").unwrap();
    let mut asked = false;
    loop {
        match rx.recv().await.unwrap() {
            AgentEvent::ApprovalRequired { approval_id, .. } => {
                asked = true;
                s.approvals().reject(&approval_id, Some("not there".into())).unwrap();
            }
            AgentEvent::ToolCallEnd { outcome, .. } => assert_eq!(outcome, ToolOutcome::DeniedByUser),
            AgentEvent::TurnEnd { .. } => break,
            _ => {}
        }
    }
    assert!(asked, "a protected path is asked about even in accept-edits mode");

    // A rule added during the session is checked against what the tool declares.
    use octo_app::permissions::{Action, Rule};
    let bad = Rule::parse("publish(notes/[)", Action::Deny, "/permissions").unwrap();
    let err = s.permissions().add_rule(bad).unwrap_err().to_string();
    assert!(err.contains("invalid pattern"), "{err}");
    s.permissions()
        .add_rule(Rule::parse("publish(notes/**)", Action::Deny, "/permissions").unwrap())
        .unwrap();
    assert!(s.permissions().rules().describe().contains("deny publish(notes/**)"));
}
