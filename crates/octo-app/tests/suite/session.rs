//! Whole sessions through the facade against a mock endpoint: approvals, plan mode, abort,
//! queueing, status and model switching.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions, State, TurnEndReason};
use octo_testkit::anthropic::Reply;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{openai, MockLlm, Scripted, TempHome};
use serde_json::json;
use std::time::Duration;

struct Setup {
    _tmp: TempHome,
    ws: std::path::PathBuf,
    llm: MockLlm,
    session: Session,
}

fn env(k: &str) -> Option<String> {
    (k == "MOCK_KEY").then(|| "sk-mock".to_owned())
}

async fn setup(replies: Vec<Scripted>, options: SessionOptions) -> Setup {
    let built = Scenario::new()
        .config("[endpoints.compat]\nprotocol = \"openai\"\nbase_url = \"{mock}/v1\"")
        .replies(replies)
        .build()
        .await;
    let session = super::common::started(&built, options);
    let ws = built.workspace();
    let Built { home, llm, .. } = built;
    Setup { _tmp: home, ws, llm, session }
}

fn write_call() -> Scripted {
    Scripted::sse(
        Reply::new()
            .text("Writing.")
            .tool_use("toolu_1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
            .sse(),
    )
}

fn answer(t: &str) -> Scripted {
    Scripted::sse(Reply::new().text(t).usage(1000, 200, 0, 0).sse())
}

/// Drives one turn, answering approvals with `decide`; returns the events.
async fn drive(s: &Session, prompt: &str, mut decide: impl FnMut(&Session, &str)) -> Vec<AgentEvent> {
    let mut rx = s.subscribe();
    s.prompt(prompt).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        if let AgentEvent::ApprovalRequired { approval_id, .. } = &e {
            decide(s, approval_id);
        }
        let end = matches!(e, AgentEvent::TurnEnd { .. });
        events.push(e);
        if end {
            return events;
        }
    }
}

#[tokio::test]
async fn an_approved_write_happens_and_is_counted() {
    let t = setup(vec![write_call(), answer("Done.")], SessionOptions::default()).await;
    let events = drive(&t.session, "create hello.txt", |s, id| s.approvals().approve(id).unwrap()).await;
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::ApprovalRequired { request, .. } if request.summary.contains("hello.txt"))
    ));
    assert_eq!(std::fs::read_to_string(t.ws.join("hello.txt")).unwrap(), "hi\n");
    let st = t.session.status();
    assert_eq!((st.state, st.turns), (State::Idle, 1));
    assert_eq!(st.usage.output_tokens, 7 + 200);
    let cost = st.cost_usd.unwrap();
    assert!(cost > 0.0 && cost < 0.1, "{cost}");
    let body = &t.llm.request_bodies().await[0];
    assert!(body["system"][0]["text"].as_str().unwrap().contains("You are octo"));
    assert!(body["tools"].as_array().unwrap().len() >= 10);
}

#[tokio::test]
async fn a_write_outside_the_workspace_is_asked_once_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside.txt");
    let call = Scripted::sse(
        Reply::new()
            .tool_use("toolu_1", "write_file", json!({"path": outside.to_str().unwrap(), "content": "x\n"}))
            .sse(),
    );
    let t = setup(vec![call, answer("Done.")], SessionOptions::default()).await;
    let events = drive(&t.session, "write outside", |s, id| s.approvals().approve(id).unwrap()).await;
    let asks: Vec<&AgentEvent> =
        events.iter().filter(|e| matches!(e, AgentEvent::ApprovalRequired { .. })).collect();
    assert_eq!(asks.len(), 1, "one question for one write: {asks:?}");
    assert!(
        matches!(asks[0], AgentEvent::ApprovalRequired { request, .. }
            if request.reason.as_deref().is_some_and(|r| r.contains("outside the workspace"))),
        "{asks:?}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "x\n");
}

#[tokio::test]
async fn a_rejected_write_does_not_happen_and_the_model_is_told() {
    let t = setup(vec![write_call(), answer("OK, I won't.")], SessionOptions::default()).await;
    drive(&t.session, "create hello.txt", |s, id| s.approvals().reject(id, Some("not now".into())).unwrap())
        .await;
    assert!(!t.ws.join("hello.txt").exists());
    let second = &t.llm.request_bodies().await[1];
    let result = second["messages"][2]["content"][0].to_string();
    assert!(result.contains("denied") && result.contains("not now"), "{result}");
}

#[tokio::test]
async fn plan_mode_refuses_writes_without_asking() {
    let t = setup(
        vec![write_call(), answer("Here is my plan.")],
        SessionOptions { mode: Some(Mode::Plan), ..SessionOptions::default() },
    )
    .await;
    let events = drive(&t.session, "create hello.txt", |_, _| panic!("plan mode must not ask")).await;
    assert!(!t.ws.join("hello.txt").exists());
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolCallEnd { is_error: true, output, .. } if output.contains("plan mode"))));
    assert_eq!(t.session.status().mode, Mode::Plan);
    t.session.permissions().set_mode(Mode::AcceptEdits);
    assert_eq!(t.session.status().mode, Mode::AcceptEdits);
}

#[tokio::test]
async fn abort_stops_a_running_command_at_once() {
    let slow =
        Scripted::sse(Reply::new().tool_use("toolu_s", "terminal", json!({"command": "sleep 30"})).sse());
    let t = setup(vec![slow], SessionOptions { mode: Some(Mode::Auto), ..SessionOptions::default() }).await;
    let mut rx = t.session.subscribe();
    // The waits below bound it: `sleep 30` outlasts them unless the abort kills it.
    t.session.prompt("wait").unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap() {
            AgentEvent::ToolCallStart { .. } => t.session.abort(),
            AgentEvent::TurnEnd { reason, .. } => {
                assert_eq!(reason, TurnEndReason::Cancelled);
                break;
            }
            _ => {}
        }
    }
    let history = t.session.conversation().history().await.unwrap();
    assert_eq!(history.len(), 3, "the interrupted round is kept with its result");
}

#[tokio::test]
async fn prompts_queue_and_unknown_approvals_are_errors() {
    let t = setup(vec![answer("first"), answer("second")], SessionOptions::default()).await;
    let mut rx = t.session.subscribe();
    t.session.prompt("one").unwrap();
    t.session.prompt("two").unwrap();
    let mut ends = 0;
    let mut text = String::new();
    while ends < 2 {
        match tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap() {
            AgentEvent::TextDelta { text: t } => text.push_str(&t),
            AgentEvent::TurnEnd { .. } => ends += 1,
            _ => {}
        }
    }
    assert_eq!(text, "firstsecond");
    assert_eq!(t.session.status().turns, 2);
    let err = t.session.approvals().approve("approval-99").unwrap_err();
    assert!(err.to_string().contains("approval-99"));
}

#[tokio::test]
async fn unattended_sessions_deny_instead_of_waiting() {
    let t = setup(
        vec![write_call(), answer("Could not write.")],
        SessionOptions { unattended: true, ..SessionOptions::default() },
    )
    .await;
    let r = tokio::time::timeout(Duration::from_secs(20), t.session.run("create hello.txt"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.answer, "Could not write.");
    assert_eq!(r.denied, ["write_file"]);
    assert!(!t.ws.join("hello.txt").exists());
}

#[tokio::test]
async fn switching_model_keeps_the_conversation() {
    let t =
        setup(vec![answer("from anthropic")], SessionOptions { no_tools: true, ..SessionOptions::default() })
            .await;
    t.llm.script_openai([Scripted::sse(openai::Reply::new().text("from compat").sse())]).await;
    assert_eq!(t.session.run("hi").await.unwrap().answer, "from anthropic");
    let label =
        t.session.conversation().set_model("compat:local-model", &MemoryStore::default(), &env).unwrap();
    assert_eq!(label, "compat:local-model");
    assert_eq!(t.session.run("again").await.unwrap().answer, "from compat");
    let bodies = t.llm.request_bodies().await;
    let msgs = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4, "system + the first exchange + the new prompt: {msgs:?}");
    assert!(bodies[0].get("tools").is_none(), "--no-tools sends no tools");
    assert_eq!(t.session.status().model, "compat:local-model");
    let bad = t.session.conversation().set_model("nowhere", &MemoryStore::default(), &env).unwrap_err();
    assert!(bad.to_string().contains("unknown endpoint"));
}

async fn setup_saving(replies: Vec<Scripted>, options: SessionOptions) -> (Setup, std::path::PathBuf) {
    let t = setup(replies, SessionOptions { save: true, ..options }).await;
    let sessions = t.ws.parent().unwrap().join("home/sessions");
    (t, sessions)
}

#[tokio::test]
async fn conversations_are_saved_and_can_be_resumed() {
    let (t, sessions) = setup_saving(
        vec![
            answer("Saved answer."),
            Scripted::sse(Reply::new().text("A Good Title").sse()),
            answer("Resumed answer."),
        ],
        SessionOptions { model_titles: true, no_tools: true, ..SessionOptions::default() },
    )
    .await;
    assert!(t.session.conversation().id().is_none(), "no file before the first round");
    t.session.run("remember this").await.unwrap();
    let id = t.session.conversation().id().unwrap();
    let store = octo_app::session_store::SessionStore::new(&sessions);
    // the title request runs in the background
    let mut title = String::new();
    for _ in 0..100 {
        title = store.list(None).unwrap()[0].title.clone();
        if title == "A Good Title" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(title, "A Good Title");
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages.len(), 2);
    assert_eq!(loaded.meta.cwd, t.ws);
    drop(t.session);
    tokio::time::sleep(Duration::from_millis(50)).await;

    // resume in a new session: the history comes back and new rounds append to the same file
    let home = t.ws.parent().unwrap().join("home");
    let config = Config::load(&home, &t.ws, &env, &Overrides::default()).unwrap();
    let resumed = Session::start(
        config,
        SessionOptions {
            workspace: Some(t.ws.clone()),
            resume: Some(id.clone()),
            no_tools: true,
            ..SessionOptions::default()
        },
        &MemoryStore::default(),
        &env,
    )
    .unwrap();
    assert_eq!(resumed.conversation().history().await.unwrap().len(), 2);
    assert_eq!(resumed.conversation().id().as_deref(), Some(id.as_str()));
    let r = resumed.run("and now?").await.unwrap();
    assert_eq!(r.answer, "Resumed answer.");
    assert_eq!(store.load(&id).unwrap().messages.len(), 4);
    let last_body = t.llm.request_bodies().await.pop().unwrap();
    assert_eq!(last_body["messages"].as_array().unwrap().len(), 3, "the resumed history was sent");
}

#[tokio::test]
async fn a_session_of_another_directory_is_not_resumed_here() {
    let (t, sessions) =
        setup_saving(vec![answer("x")], SessionOptions { no_tools: true, ..SessionOptions::default() }).await;
    t.session.run("hi").await.unwrap();
    let id = t.session.conversation().id().unwrap();
    let elsewhere = t.ws.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let home = t.ws.parent().unwrap().join("home");
    let config = Config::load(&home, &elsewhere, &env, &Overrides::default()).unwrap();
    let err = Session::start(
        config,
        SessionOptions { workspace: Some(elsewhere), resume: Some(id), ..SessionOptions::default() },
        &MemoryStore::default(),
        &env,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("belongs to") && err.to_string().contains(&t.ws.display().to_string()),
        "{err}"
    );
    let _ = sessions;
}

#[cfg(unix)]
#[tokio::test]
async fn an_unwritable_sessions_directory_warns_and_goes_on() {
    use std::os::unix::fs::PermissionsExt;
    let (t, sessions) = setup_saving(
        vec![answer("still here"), answer("again")],
        SessionOptions { no_tools: true, ..SessionOptions::default() },
    )
    .await;
    // A file where the directory should be makes saving impossible, even for root.
    std::fs::write(&sessions, "not a directory").unwrap();
    let mut rx = t.session.subscribe();
    let r = t.session.run("hi").await.unwrap();
    assert_eq!(r.answer, "still here");
    let mut notice = None;
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::Notice { message } = e {
            notice = Some(message);
        }
    }
    assert!(notice.unwrap().contains("could not save this session"));
    assert_eq!(t.session.run("more").await.unwrap().answer, "again");
    let _ = std::fs::Permissions::from_mode(0o700);
}

#[tokio::test]
async fn every_block_type_survives_save_load_and_continue() {
    use octo_app::{ContentBlock, Message, Role};
    let t = setup(vec![answer("continued")], SessionOptions { no_tools: false, ..SessionOptions::default() })
        .await;
    let sessions = t.ws.parent().unwrap().join("home/sessions");
    let store = octo_app::session_store::SessionStore::new(&sessions);
    let mut w = store.create(&t.ws, "mock", "claude-sonnet-4-5", None).unwrap();
    let history = vec![
        Message::user("look at the screenshot"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking { thinking: "hm".into(), signature: Some("sig".into()) },
                ContentBlock::RedactedThinking { data: "opaque".into() },
                ContentBlock::text("Reading."),
                ContentBlock::ToolUse {
                    id: "toolu_1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a.png"}),
                },
            ],
        ),
        Message::new(Role::User, vec![ContentBlock::tool_result("toolu_1", "an image", false)]),
        Message::assistant("It shows a cat."),
    ];
    w.append(&history).unwrap();
    let id = w.id().to_owned();
    drop(w);
    let home = t.ws.parent().unwrap().join("home");
    let config = Config::load(&home, &t.ws, &env, &Overrides::default()).unwrap();
    let s = Session::start(
        config,
        SessionOptions { workspace: Some(t.ws.clone()), resume: Some(id), ..SessionOptions::default() },
        &MemoryStore::default(),
        &env,
    )
    .unwrap();
    assert_eq!(s.conversation().history().await.unwrap(), history);
    assert_eq!(s.run("and then?").await.unwrap().answer, "continued");
    // the request carried every block back, in the protocol's shape
    let body = &t.llm.request_bodies().await[0];
    let sent = body["messages"][1]["content"].to_string();
    assert!(
        sent.contains("\"signature\":\"sig\"")
            && sent.contains("redacted_thinking")
            && sent.contains("toolu_1"),
        "{sent}"
    );
}

#[tokio::test]
async fn compaction_is_saved_and_survives_a_resume() {
    let big = "x".repeat(4_000);
    let t = setup(
        vec![
            answer("one"),
            answer("two"),
            Scripted::sse(Reply::new().text("## Goals\nthe summary").sse()),
            answer("three"),
        ],
        SessionOptions { save: true, no_tools: true, ..SessionOptions::default() },
    )
    .await;
    t.session.run(format!("first {big}")).await.unwrap();
    t.session.run(format!("second {big}")).await.unwrap();
    let mut rx = t.session.subscribe();
    t.session.conversation().compact(Some("the plan".into())).unwrap();
    let folded = loop {
        if let AgentEvent::CompactionEnd { messages_folded, .. } =
            tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap()
        {
            break messages_folded;
        }
    };
    assert_eq!(folded, 2, "the first exchange was folded");
    let summary_req = &t.llm.request_bodies().await[2];
    assert!(
        summary_req["messages"][0]["content"][0]["text"].as_str().unwrap().contains("the plan"),
        "the focus reaches the summarizer"
    );
    assert_eq!(t.session.run("third").await.unwrap().answer, "three");
    let history = t.session.conversation().history().await.unwrap();
    assert!(history[0].text().contains("[Summary of the earlier conversation"));
    let id = t.session.conversation().id().unwrap();
    let store = octo_app::session_store::SessionStore::new(t.ws.parent().unwrap().join("home/sessions"));
    assert_eq!(store.load(&id).unwrap().messages, history, "the file holds the compacted history");
    assert!(
        std::fs::read_dir(t.ws.parent().unwrap().join("home/sessions/folded")).unwrap().count() == 1,
        "the folded part is archived"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_is_recorded_and_its_prompt_offered_on_resume() {
    let bad =
        Scripted::json(400, &octo_testkit::anthropic::error_body("invalid_request_error", "no such thing"));
    let (t, _sessions) = setup_saving(vec![answer("first"), bad], SessionOptions::default()).await;
    assert_eq!(t.session.run("one").await.unwrap().answer, "first");
    let r = t.session.run("the prompt that failed").await.unwrap();
    assert!(r.failed());
    let id = t.session.conversation().id().unwrap();
    let home = t.ws.parent().unwrap().join("home");
    let text = std::fs::read_to_string(home.join("sessions").join(format!("{id}.jsonl"))).unwrap();
    assert!(text.contains("\"type\":\"pending\"") && text.contains("\"type\":\"rolled_back\""), "{text}");
    let config = Config::load(&home, &t.ws, &env, &Overrides::default()).unwrap();
    drop(t.session);
    let resumed = Session::start(
        config,
        SessionOptions { workspace: Some(t.ws.clone()), resume: Some(id), ..SessionOptions::default() },
        &MemoryStore::default(),
        &env,
    )
    .unwrap();
    assert_eq!(resumed.approvals().unanswered(), Some("the prompt that failed"));
    assert_eq!(resumed.conversation().history().await.unwrap().len(), 2, "only the answered round");
}

#[tokio::test]
async fn close_cancels_the_turn_and_drops_the_queued_prompts() {
    let slow =
        Scripted::sse(Reply::new().tool_use("toolu_s", "terminal", json!({"command": "sleep 30"})).sse());
    let t = setup(
        vec![slow, answer("never")],
        SessionOptions { mode: Some(Mode::Auto), ..SessionOptions::default() },
    )
    .await;
    let mut rx = t.session.subscribe();
    t.session.prompt("wait").unwrap();
    t.session.prompt("then this").unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap() {
            AgentEvent::ToolCallStart { .. } => t.session.close(),
            AgentEvent::TurnEnd { .. } => break,
            _ => {}
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The cancelled turn's tool result may be sent back; the queued prompt never is.
    let bodies = t.llm.request_bodies().await;
    assert!(bodies.iter().all(|b| !b.to_string().contains("then this")), "the queued prompt ran");
    assert_eq!(t.session.status().queued, 0);
}

/// A session with tool calls saved on one server and resumed on a llama.cpp-compatible one,
/// which rejects an assistant message whose `content` is null (HTTP 500 with a validation
/// dump): the resumed history is sent with `content: ""` and the turn succeeds.
#[tokio::test]
async fn a_session_with_tool_calls_resumes_on_a_server_that_rejects_null_content() {
    use octo_testkit::wiremock::{matchers, Mock, ResponseTemplate};
    let (t, _) = setup_saving(
        vec![
            Scripted::sse(Reply::new().tool_use("toolu_1", "list_dir", json!({"path": "."})).sse()),
            answer("Looked."),
        ],
        SessionOptions::default(),
    )
    .await;
    t.session.run("look around").await.unwrap();
    let id = t.session.conversation().id().unwrap();
    drop(t.session);
    tokio::time::sleep(Duration::from_millis(50)).await;
    Mock::given(matchers::method("POST"))
        .and(matchers::path_regex(r"/chat/completions$"))
        .and(matchers::body_string_contains("\"content\":null"))
        .respond_with(ResponseTemplate::new(500).set_body_string(
            "{\"error\":{\"code\":500,\"message\":\"49 validation errors: messages.1.content: Input should be a valid string\"}}",
        ))
        .with_priority(1)
        .mount(t.llm.server())
        .await;
    t.llm.script_openai([Scripted::sse(openai::Reply::new().text("Resumed elsewhere.").sse())]).await;
    let home = t.ws.parent().unwrap().join("home");
    let overrides =
        Overrides { endpoint: Some("compat".into()), model: Some("m".into()), ..Overrides::default() };
    let config = Config::load(&home, &t.ws, &env, &overrides).unwrap();
    let options =
        SessionOptions { workspace: Some(t.ws.clone()), resume: Some(id), ..SessionOptions::default() };
    let resumed = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    let r = resumed.run("and now?").await.unwrap();
    assert_eq!(r.answer, "Resumed elsewhere.", "{:?}", r.error);
    let body = t.llm.request_bodies().await.pop().unwrap();
    let with_calls: Vec<&serde_json::Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .collect();
    assert_eq!(with_calls.len(), 1, "{body}");
    assert_eq!(with_calls[0]["content"], "", "never null");
}

/// A burst of ten thousand deltas (more than the event channel holds, so a follower falls
/// behind and loses some) still gives the whole answer: the committed round is what was said.
#[tokio::test]
async fn a_burst_of_deltas_a_follower_falls_behind_on_is_answered_whole() {
    let long = "x".repeat(10_000);
    let t = setup(
        vec![Scripted::sse(Reply::new().text(long.clone()).chunk_size(1).sse())],
        SessionOptions::default(),
    )
    .await;
    let r = t.session.run("talk").await.unwrap();
    assert_eq!(r.answer.len(), long.len());
}
