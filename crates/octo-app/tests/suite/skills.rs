//! Skills and custom commands in whole sessions against a mock endpoint: the listing in the
//! prompt, the skill tool narrowing the tools, `/name args` with `!`command`` and `@file`, and
//! reloading.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions, ToolOutcome};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Setup {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    llm: MockLlm,
    session: Session,
}

fn env(k: &str) -> Option<String> {
    (k == "MOCK_KEY").then(|| "sk-mock".to_owned())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A session whose workspace has `files` (relative path, text) before it starts.
async fn setup(files: &[(&str, &str)], replies: Vec<Scripted>, rules: &str, mode: Mode) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    for (p, t) in files {
        write(&ws.join(p), t);
    }
    let llm = MockLlm::start().await;
    llm.script_anthropic(replies).await;
    write(
        &home.join("config.toml"),
        &format!(
            "default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n{rules}",
            llm.uri()
        ),
    );
    let config = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
    let options =
        SessionOptions { workspace: Some(ws.clone()), mode: Some(mode), ..SessionOptions::default() };
    let session = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    Setup { _tmp: tmp, ws, llm, session }
}

fn answer(t: &str) -> Scripted {
    Scripted::sse(Reply::new().text(t).sse())
}

fn call(id: &str, tool: &str, input: serde_json::Value) -> Scripted {
    Scripted::sse(Reply::new().tool_use(id, tool, input).sse())
}

/// Runs one queued turn to its end, approving every question; returns its events.
async fn run_turn(s: &Session, prepared: impl Into<octo_app::skills::Prepared>) -> Vec<AgentEvent> {
    let mut rx = s.subscribe();
    s.prompt_prepared(prepared.into()).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        if let AgentEvent::ApprovalRequired { approval_id, .. } = &e {
            s.approve(approval_id).unwrap();
        }
        let end = matches!(e, AgentEvent::TurnEnd { .. });
        events.push(e);
        if end {
            return events;
        }
    }
}

fn outcome(events: &[AgentEvent], id: &str) -> (ToolOutcome, String) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallEnd { id: call, outcome, output, .. } if call == id => {
                Some((*outcome, output.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}: {events:#?}"))
}

const REVIEW: &str = "---\nname: review\ndescription: Reviews code read-only\nallowed-tools: Read, Grep, Bash(git status:*)\n---\nRead the files and report.\n";

#[tokio::test]
async fn the_model_loads_a_skill_and_its_allowed_tools_hold_until_the_turn_ends() {
    let t = setup(
        &[(".claude/skills/review/SKILL.md", REVIEW), ("notes.txt", "hello\n")],
        vec![
            call("t1", "skill", json!({"name": "review"})),
            call("t2", "read_file", json!({"path": "notes.txt"})),
            call("t3", "write_file", json!({"path": "x.txt", "content": "no"})),
            call("t4", "terminal", json!({"command": "git status --short; touch y"})),
            answer("Reviewed."),
            call("t5", "write_file", json!({"path": "x.txt", "content": "later"})),
            answer("Wrote."),
        ],
        "",
        Mode::Auto,
    )
    .await;
    let events = run_turn(&t.session, octo_app::Message::user("review please")).await;
    let (o, text) = outcome(&events, "t1");
    assert_eq!(o, ToolOutcome::Ran, "{text}");
    assert!(
        text.contains("Read the files and report.") && text.contains("only these tools may run"),
        "{text}"
    );
    assert_eq!(outcome(&events, "t2").0, ToolOutcome::Ran);
    let (o, text) = outcome(&events, "t3");
    assert_ne!(o, ToolOutcome::Ran);
    assert!(text.contains("outside what the skill /review allows"), "{text}");
    assert!(!t.ws.join("x.txt").exists(), "auto mode, yet the skill's scope refused the write");
    let (o, _) = outcome(&events, "t4");
    assert_ne!(o, ToolOutcome::Ran, "a chained command is not `git status`");
    assert!(!t.ws.join("y").exists());
    // The next turn is free again.
    let events = run_turn(&t.session, octo_app::Message::user("now write")).await;
    assert_eq!(outcome(&events, "t5").0, ToolOutcome::Ran);
    assert_eq!(std::fs::read_to_string(t.ws.join("x.txt")).unwrap(), "later");
    // The listing was in the system prompt, with the skill tool offered.
    let body = &t.llm.request_bodies().await[0];
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("- review: Reviews code read-only"), "{system}");
    assert!(body["tools"].as_array().unwrap().iter().any(|t| t["name"] == "skill"));
}

#[tokio::test]
async fn a_command_runs_its_commands_and_includes_files_before_the_prompt_is_sent() {
    let cmd = "---\ndescription: Explain a file\nallowed-tools: Bash(echo:*), Read\n---\nContext: !`echo from-the-shell`\nExplain @src/lib.rs for $ARGUMENTS.\n";
    let t = setup(
        &[(".claude/commands/explain.md", cmd), ("src/lib.rs", "pub fn f() {}\n")],
        vec![answer("Explained.")],
        "",
        Mode::Default,
    )
    .await;
    let inv = t.session.invoke("explain", "\"new\" users\nand 'others'").await.unwrap().unwrap();
    // `echo` asks in default mode: the front end asks the user; here the test says yes.
    assert_eq!(inv.questions().count(), 1, "{:?}", inv.steps);
    let prepared = t.session.finish_invocation(inv).await.unwrap();
    assert!(prepared.scope.is_some());
    run_turn(&t.session, prepared).await;
    let body = &t.llm.request_bodies().await[0];
    let sent = body["messages"][0]["content"].to_string();
    assert!(sent.contains("Context: from-the-shell"), "{sent}");
    assert!(sent.contains("pub fn f() {}"), "{sent}");
    assert!(sent.contains(r#"for \"new\" users\nand 'others'."#), "arguments verbatim: {sent}");
}

#[tokio::test]
async fn refused_steps_stop_the_command_and_nothing_is_sent() {
    let cmds = [
        (".octo/commands/clean.md", "Cleaning: !`rm -rf build`\n"),
        (".octo/commands/leak.md", "Key: @.env\n"),
        (".octo/commands/narrow.md", "---\nallowed-tools: Read\n---\nNow: !`date`\n"),
        (".env", "SECRET=1\n"),
    ];
    let t = setup(&cmds, vec![], "[permissions]\ndeny = [\"terminal(rm*)\"]\n", Mode::Auto).await;
    let err = t.session.invoke("clean", "").await.unwrap().unwrap_err().to_string();
    assert!(err.contains("terminal(rm*)"), "{err}");
    // A secret is asked about even in auto mode; headless runs then stop (see the CLI tests).
    let inv = t.session.invoke("leak", "").await.unwrap().unwrap();
    let asks: Vec<_> = inv.questions().collect();
    assert!(asks.len() == 1 && asks[0].ask.as_deref().unwrap().contains("secrets"), "{asks:?}");
    let err = t.session.invoke("narrow", "").await.unwrap().unwrap_err().to_string();
    assert!(err.contains("outside what the command /narrow allows"), "{err}");
    assert!(t.session.invoke("nope", "").await.is_none());
    assert!(t.llm.request_bodies().await.is_empty());
}

#[tokio::test]
async fn reloading_reads_the_folders_again_and_rebuilds_the_listing() {
    let t = setup(&[], vec![answer("one"), answer("two")], "", Mode::Default).await;
    assert!(t.session.skills().is_empty());
    run_turn(&t.session, octo_app::Message::user("hi")).await;
    write(
        &t.ws.join(".octo/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ships it\n---\nShip.\n",
    );
    write(&t.ws.join(".octo/skills/bad/SKILL.md"), "---\nname: other\ndescription: x\n---\n");
    let notices = t.session.reload_skills().unwrap();
    assert!(notices.iter().any(|n| n.contains("bad/SKILL.md")), "{notices:?}");
    assert!(t.session.skills().get("deploy").is_some());
    run_turn(&t.session, octo_app::Message::user("again")).await;
    let bodies = t.llm.request_bodies().await;
    let system = |i: usize| bodies[i]["system"][0]["text"].as_str().unwrap().to_owned();
    assert!(!system(0).contains("deploy"));
    assert!(system(1).contains("- deploy: Ships it"), "{}", system(1));
    assert!(bodies[1]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "skill"));
}

#[cfg(unix)]
#[tokio::test]
async fn a_commands_lines_meet_the_pretooluse_hooks_and_arguments_stay_values() {
    let hook = tempfile::tempdir().unwrap();
    let script = hook.path().join("no-curl.sh");
    write(&script, "#!/bin/sh\ncase \"$(cat)\" in *curl*) echo 'no curl in commands' >&2; exit 2;; esac\n");
    std::process::Command::new("chmod").arg("+x").arg(&script).status().unwrap();
    let rules = format!("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"{}\"\n", script.display());
    let t = setup(
        &[
            (".octo/commands/fetch.md", "Got: !`curl -s example.com`\n"),
            (".octo/commands/say.md", "Said: !`printf '%s' \"$ARGUMENTS\"`\n"),
        ],
        vec![answer("ok")],
        &rules,
        Mode::Auto,
    )
    .await;
    let err = t.session.invoke("fetch", "").await.unwrap().unwrap_err().to_string();
    assert!(err.contains("no curl in commands"), "{err}");
    // An argument that looks like a command substitution is printed, not run.
    let inv = t.session.invoke("say", "$(touch pwned) it's").await.unwrap().unwrap();
    let prepared = t.session.finish_invocation(inv).await.unwrap();
    assert!(prepared.message.text().contains("Said: $(touch pwned) it's"), "{}", prepared.message.text());
    assert!(!t.ws.join("pwned").exists());
}
