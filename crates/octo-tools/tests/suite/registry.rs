//! The registry as a whole: every tool is well-formed and survives bad input; todos and questions
//! reach the front end through the agent's events.

use futures_util::StreamExt;
use octo_agent::*;
use octo_testkit::sender::{whole, ScriptedSender};
use octo_tools::{default_names, default_registry, ToolsConfig};
use serde_json::{json, Value};

#[test]
fn every_default_tool_is_registered_with_an_object_schema() {
    let reg = default_registry(ToolsConfig::default());
    let expected = [
        "terminal",
        "terminal_output",
        "kill_shell",
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "grep",
        "list_dir",
        "web_fetch",
        "web_search",
        "todo_write",
        "ask_user",
    ];
    assert_eq!(reg.names().collect::<Vec<_>>(), expected);
    assert_eq!(default_names(), expected);
    for d in reg.definitions() {
        assert_eq!(d.input_schema["type"], "object", "{}", d.name);
        assert!(d.description.len() > 40, "{} needs a description written for the model", d.name);
    }
}

#[tokio::test]
async fn no_tool_panics_on_garbage_input() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = default_registry(ToolsConfig::default());
    for name in &default_names() {
        for bad in
            [json!({}), json!({"path": 1, "command": [], "pattern": null, "url": 3, "id": {}}), json!("x")]
        {
            let out = reg.get(name).unwrap().execute(bad.clone(), &ToolContext::detached(tmp.path())).await;
            if name != "list_dir" {
                assert!(out.is_error, "{name} accepted {bad}: {}", out.text_content());
            }
        }
    }
}

fn call(id: &str, name: &str, input: Value) -> Message {
    Message::new(Role::Assistant, vec![ContentBlock::ToolUse { id: id.into(), name: name.into(), input }])
}

#[tokio::test]
async fn todos_and_questions_reach_the_front_end() {
    let tmp = tempfile::tempdir().unwrap();
    let todos = json!({"todos": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "active_form": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending"}
    ]});
    let script = ScriptedSender::buffered(vec![
        whole(call("t1", "todo_write", todos)),
        whole(call("t2", "ask_user", json!({"question": "Which branch?", "options": ["main", "dev"]}))),
        whole(Message::assistant("done")),
    ]);
    let mut agent =
        Agent::builder(script).tools(default_registry(ToolsConfig::default())).cwd(tmp.path()).build();
    let broker = agent.approvals();
    let mut events = agent.turn_stream(Message::user("go"), CancellationToken::new());
    let mut update = None;
    while let Some(e) = events.next().await {
        match e {
            AgentEvent::ToolUpdate { kind, data, .. } => update = Some((kind, data)),
            AgentEvent::QuestionAsked { question_id, question, options, .. } => {
                assert_eq!((question.as_str(), options.len()), ("Which branch?", 2));
                broker.answer(&question_id, "dev").unwrap();
            }
            _ => {}
        }
    }
    drop(events);
    let (kind, data) = update.unwrap();
    assert_eq!(kind, "todos");
    assert_eq!(data[1]["status"], "in_progress");
    let h = agent.history();
    let text = |i: usize| match &h[i].content[0] {
        ContentBlock::ToolResult { content, .. } => content[0].as_text().unwrap().to_owned(),
        _ => panic!(),
    };
    assert!(text(2).contains("1 pending, 1 in progress, 1 completed"), "{}", text(2));
    assert_eq!(text(4), "The user answered: dev");
}

#[tokio::test]
async fn an_unattended_question_tells_the_model_to_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = default_registry(ToolsConfig::default());
    let out = reg
        .get("ask_user")
        .unwrap()
        .execute(json!({"question": "Sure?"}), &ToolContext::detached(tmp.path()))
        .await;
    assert!(out.is_error && out.text_content().contains("best judgment"));
    let bad = reg
        .get("todo_write")
        .unwrap()
        .execute(json!({"todos": [{"content": "x", "status": "doing"}]}), &ToolContext::detached(tmp.path()))
        .await;
    assert!(bad.is_error && bad.text_content().contains("unknown variant"), "{}", bad.text_content());
}
