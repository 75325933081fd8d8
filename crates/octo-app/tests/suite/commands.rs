//! The shared command vocabulary run on a session: typed replies, the errors users see, and
//! what a command changes.

use octo_app::commands::{parse, Parsed, Reply, SessionCommand};
use octo_app::{Launch, Launcher, Mode, SessionOptions};
use octo_testkit::anthropic::Reply as Answer;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};

async fn setup(replies: Vec<Scripted>) -> (TempHome, Launcher, octo_app::Session, MockLlm) {
    let Built { home, llm, .. } = Scenario::new().replies(replies).build().await;
    let l = super::common::launcher(&home);
    let options = SessionOptions { save: true, ..SessionOptions::default() };
    let s = l.start(Launch { workspace: Some(home.workspace()), options, ..Launch::default() }).unwrap();
    (home, l, s, llm)
}

fn command(line: &str) -> SessionCommand {
    match parse(line) {
        Parsed::Command(c) => c,
        other => panic!("{line}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_mode_and_permissions_run_through_one_call() {
    let (_tmp, l, s, _llm) = setup(vec![Scripted::sse(Answer::new().text("Hi.").sse())]).await;
    assert_eq!(s.run("hello").await.unwrap().answer, "Hi.");
    let plan = s.command(&l, command("/mode plan")).await.unwrap();
    assert!(matches!(plan, Reply::Mode(Mode::Plan)), "{plan:?}");
    assert_eq!(s.status().mode, Mode::Plan, "the command changed the session");
    let status = s.command(&l, command("/status")).await.unwrap();
    let text = status.text();
    assert!(
        text.contains("model: mock:claude-sonnet-4-5") && text.contains("permission mode: plan"),
        "{text}"
    );
    assert!(text.contains("usage: 1 turn ·") && text.contains("session: "), "{text}");
    let Reply::Status(report) = status else { panic!() };
    assert_eq!(report.status.turns, 1);
    // `/build` leaves plan mode for the configured mode.
    assert!(matches!(s.command(&l, command("/build")).await.unwrap(), Reply::Mode(Mode::Default)));
    // Rules: added, listed, removed; a bad one is an error with the usage.
    let added = s.command(&l, command("/permissions allow terminal(cargo test*)")).await.unwrap();
    assert_eq!(added.text(), "allow terminal(cargo test*): added for this session");
    assert!(s.command(&l, command("/permissions")).await.unwrap().text().contains("terminal(cargo test*)"));
    assert_eq!(
        s.command(&l, command("/permissions remove terminal(cargo test*)")).await.unwrap().text(),
        "removed 1 rule(s) `terminal(cargo test*)` for this session"
    );
    let err = s.command(&l, command("/permissions remove nothing(here)")).await.unwrap_err();
    assert!(err.to_string().contains("no rule `nothing(here)`"), "{err}");
    let err = s.command(&l, command("/permissions allow write_file(/etc/*)x(")).await.unwrap_err();
    assert!(err.to_string().contains("Usage: /permissions"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_resume_clear_and_stop_are_replies_a_front_end_acts_on() {
    let (_tmp, l, s, llm) = setup(vec![Scripted::sse(Answer::new().text("Hi.").sse())]).await;
    s.run("hello").await.unwrap();
    let id = s.conversation().id().unwrap();
    let Reply::History { sessions, current } = s.command(&l, command("/history")).await.unwrap() else {
        panic!()
    };
    assert_eq!((sessions.len(), current.as_deref()), (1, Some(id.as_str())));
    let Reply::Resume(picked) = s.command(&l, command("/resume 1")).await.unwrap() else { panic!() };
    assert_eq!(picked, id, "a number from /history");
    assert!(
        matches!(s.command(&l, command("/resume")).await.unwrap(), Reply::PickSession(list) if list.len() == 1)
    );
    let err = s.command(&l, command("/resume no such words")).await.unwrap_err();
    assert!(err.to_string().contains("no such words") || err.to_string().contains("no session"), "{err}");
    assert!(matches!(s.command(&l, command("/clear")).await.unwrap(), Reply::Cleared));
    assert!(s.conversation().history().await.unwrap().is_empty(), "/clear forgot the conversation");
    assert!(matches!(s.command(&l, command("/stop")).await.unwrap(), Reply::Stopped));
    assert!(matches!(s.command(&l, command("/todos")).await.unwrap(), Reply::Todos(t) if t.is_empty()));
    assert_eq!(llm.request_bodies().await.len(), 1, "no command reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_and_todos_follow_resume_and_rewind() {
    let todos = serde_json::json!({"todos": [{"content": "Run the tests", "status": "in_progress"}]});
    let (tmp, l, s, _llm) = setup(vec![
        Scripted::sse(Answer::new().text("Planning.").tool_use("t1", "todo_write", todos).sse()),
        Scripted::sse(Answer::new().text("Listed.").sse()),
        Scripted::sse(Answer::new().text("Second answer.").sse()),
    ])
    .await;
    s.run("make a plan").await.unwrap();
    s.run("and then?").await.unwrap();
    assert_eq!(s.conversation().todos().len(), 1);
    let id = s.conversation().id().unwrap();
    drop(s);
    // Resumed, the conversation counts in the context and its task list is back.
    let resumed = l
        .start(Launch {
            workspace: Some(tmp.workspace()),
            resume: octo_app::Resume::Id(id),
            options: SessionOptions { save: true, ..SessionOptions::default() },
            ..Launch::default()
        })
        .unwrap();
    let status = resumed.status();
    assert!(status.context_tokens > 0, "a resumed conversation is not an empty context");
    assert_eq!(resumed.conversation().todos().len(), 1, "the task list the history left");
    let text = resumed.command(&l, command("/status")).await.unwrap().text();
    assert!(!text.contains("context: empty"), "{text}");
    // Rewinding the second turn keeps the list; rewinding the first forgets it.
    let Reply::Rewind(plan) = resumed.command(&l, command("/rewind 1")).await.unwrap() else { panic!() };
    resumed.conversation().rewind(&plan, &[]).await.unwrap();
    assert_eq!(resumed.conversation().todos().len(), 1);
    let Reply::Rewind(plan) = resumed.command(&l, command("/rewind 1")).await.unwrap() else { panic!() };
    resumed.conversation().rewind(&plan, &[]).await.unwrap();
    assert!(resumed.conversation().history().await.unwrap().is_empty());
    assert!(
        resumed.conversation().todos().is_empty(),
        "the rewound turn's list is gone: {:?}",
        resumed.conversation().todos()
    );
    assert!(matches!(resumed.command(&l, command("/todos")).await.unwrap(), Reply::Todos(t) if t.is_empty()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_after_compact_says_what_the_compaction_reported() {
    let (_tmp, l, s, _llm) = setup(vec![
        Scripted::sse(Answer::new().text("One.").sse()),
        Scripted::sse(Answer::new().text("Two.").sse()),
        Scripted::sse(Answer::new().text("Three.").sse()),
        Scripted::sse(Answer::new().text("The user counted to three.").sse()),
    ])
    .await;
    for p in ["one", "two", "three"] {
        s.run(p).await.unwrap();
    }
    let reported = s.status().context_tokens;
    let Reply::Compacted { tokens_after, .. } = s.command(&l, command("/compact")).await.unwrap() else {
        panic!("compacted")
    };
    assert_ne!(reported, tokens_after, "the mock's usage differs from the estimate");
    assert_eq!(s.status().context_tokens, tokens_after);
    assert!(s.command(&l, command("/status")).await.unwrap().text().contains(&format!("{tokens_after} ")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permissions_lists_what_was_allowed_always() {
    let run = serde_json::json!({"command": "echo hi"});
    let (_tmp, l, s, _llm) = setup(vec![
        Scripted::sse(Answer::new().tool_use("t1", "terminal", run).sse()),
        Scripted::sse(Answer::new().text("Ran it.").sse()),
    ])
    .await;
    let before = s.command(&l, command("/permissions")).await.unwrap().text();
    assert!(!before.contains("always"), "{before}");
    let mut rx = s.subscribe();
    s.prompt("run it").unwrap();
    loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        if let octo_agent::AgentEvent::ApprovalRequired { approval_id, .. } = &e {
            s.approvals().approve_always(approval_id).unwrap();
        }
        if matches!(e, octo_agent::AgentEvent::TurnEnd { .. }) {
            break;
        }
    }
    let after = s.command(&l, command("/permissions")).await.unwrap().text();
    assert!(after.contains("answered \"always\" for this session:"), "{after}");
    assert!(after.contains("  allowed terminal(echo hi)"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_reads_the_configuration_again_for_an_endpoint_added_since() {
    let (tmp, l, s, llm) = setup(vec![]).await;
    let err = s.command(&l, command("/model other:m2")).await.unwrap_err();
    assert!(err.to_string().contains("unknown endpoint `other`"), "{err}");
    let config = tmp.home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[endpoints.other]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n",
        llm.uri()
    ));
    std::fs::write(&config, text).unwrap();
    let Reply::Model { label, switched: true } = s.command(&l, command("/model other:m2")).await.unwrap()
    else {
        panic!()
    };
    assert_eq!(label, "other:m2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_adds_up_to_the_next_request_and_export_folds_the_tool_calls() {
    let (_tmp, l, s, _llm) = setup(vec![
        Scripted::sse(
            Answer::new()
                .tool_use("t1", "list_dir", serde_json::json!({"path": "."}))
                .usage(4_000, 20, 0, 0)
                .sse(),
        ),
        Scripted::sse(Answer::new().text("Nothing here.").usage(4_100, 10, 0, 0).sse()),
    ])
    .await;
    let Reply::Context(empty) = s.command(&l, command("/context")).await.unwrap() else { panic!() };
    let sum = |r: &octo_app::session::ContextReport| r.parts.iter().map(|p| p.tokens).sum::<u64>();
    assert_eq!(sum(&empty), empty.total);
    assert_eq!(empty.window, 200_000);
    s.run("what is here?").await.unwrap();
    let reply = s.command(&l, command("/context")).await.unwrap();
    let Reply::Context(r) = &reply else { panic!() };
    assert_eq!(sum(r), r.total, "{r:?}");
    // The server counted 4,100 for the last prompt; only the short answer came after it.
    assert!((4_100..4_110).contains(&r.total), "{r:?}");
    let part = |name: &str| r.parts.iter().find(|p| p.name == name).unwrap().tokens;
    assert!(part("system prompt") > 0 && part("built-in tools") > 0 && part("tool results") > 0, "{r:?}");
    assert_eq!(part("MCP tools"), 0);
    let text = reply.text();
    assert!(text.contains("of 200000 tokens") && text.contains("compaction at 75%"), "{text}");
    // `/export`: the conversation as Markdown, never over an existing file.
    let Reply::Exported { path, messages } = s.command(&l, command("/export")).await.unwrap() else {
        panic!()
    };
    assert_eq!(messages, 4);
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(
        md.contains("## You\n\nwhat is here?") && md.contains("<details><summary>list_dir</summary>"),
        "{md}"
    );
    assert!(md.trim_end().ends_with("Nothing here."), "{md}");
    let again = s.command(&l, command("/export")).await.unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_before_any_conversation_says_so() {
    let (_tmp, l, s, _llm) = setup(vec![]).await;
    let err = s.command(&l, command("/export notes.md")).await.unwrap_err();
    assert!(err.to_string().contains("no conversation to export"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_a_worktree_names_it_and_shares_the_repositorys_memory() {
    let (tmp, l, main_session, _llm) = setup(vec![]).await;
    let ws = std::fs::canonicalize(tmp.workspace()).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(&ws)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("README.md"), "hi\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "first"]);
    let wt = octo_app::worktree::enter(&ws, Some("feat"), None).unwrap().worktree.path;
    let options = SessionOptions { save: true, ..SessionOptions::default() };
    let s = l.start(Launch { workspace: Some(wt.clone()), options, ..Launch::default() }).unwrap();
    let text = s.command(&l, command("/status")).await.unwrap().text();
    assert!(text.contains(&format!("worktree: feat of {}", ws.display())), "{text}");
    assert!(!main_session.command(&l, command("/status")).await.unwrap().text().contains("worktree:"));
    // A note taken in the worktree is the repository's: the main tree's next session has it.
    s.command(&l, command("/remember the build needs protoc")).await.unwrap();
    let options = SessionOptions { save: true, ..SessionOptions::default() };
    let again = l.start(Launch { workspace: Some(ws), options, ..Launch::default() }).unwrap();
    let shown = again.command(&l, command("/memory")).await.unwrap().text();
    assert!(shown.contains("the build needs protoc"), "{shown}");
}
