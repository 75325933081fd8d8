//! Skills and custom commands in whole sessions against a mock endpoint: the listing in the
//! prompt, the skill tool narrowing the tools, `/name args` with `!`command`` and `@file`, and
//! reloading.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions, ToolOutcome};
use octo_testkit::anthropic::Reply;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

struct Setup {
    _tmp: TempHome,
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
    let mut scenario = Scenario::new().config(rules).replies(replies);
    for (p, t) in files {
        // `~octo/…` is in octo's home (the user's own skills), the rest in the workspace.
        scenario = match p.strip_prefix("~octo/") {
            Some(rel) => scenario.home_file(rel, t),
            None => scenario.file(p, t),
        };
    }
    let built = scenario.build().await;
    let session =
        super::common::started(&built, SessionOptions { mode: Some(mode), ..SessionOptions::default() });
    let ws = built.workspace();
    let Built { home, llm, .. } = built;
    Setup { _tmp: home, ws, llm, session }
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
    s.prompt(prepared.into()).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        if let AgentEvent::ApprovalRequired { approval_id, .. } = &e {
            s.approvals().approve(approval_id).unwrap();
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

/// How many approvals the turn asked for.
fn asked(events: &[AgentEvent]) -> usize {
    events.iter().filter(|e| matches!(e, AgentEvent::ApprovalRequired { .. })).count()
}

#[tokio::test]
async fn a_loaded_skills_allowed_tools_run_without_asking_until_the_turn_ends() {
    let project =
        "---\nname: proj\ndescription: From the clone\nallowed-tools: Bash(git status:*)\n---\nLook.\n";
    let t = setup(
        &[
            ("~octo/skills/review/SKILL.md", REVIEW),
            (".claude/skills/proj/SKILL.md", project),
            ("notes.txt", "hello\n"),
        ],
        vec![
            call("t1", "skill", json!({"name": "review"})),
            call("t2", "terminal", json!({"command": "git status --short"})),
            call("t3", "terminal", json!({"command": "git status --short; touch y"})),
            answer("Reviewed."),
            call("t4", "terminal", json!({"command": "git status --short"})),
            answer("Again."),
            call("t5", "skill", json!({"name": "proj"})),
            call("t6", "terminal", json!({"command": "git status --short"})),
            answer("Project."),
        ],
        "",
        Mode::Default,
    )
    .await;
    let events = run_turn(&t.session, octo_app::Message::user("review please")).await;
    let (o, text) = outcome(&events, "t1");
    assert_eq!(o, ToolOutcome::Ran, "{text}");
    assert!(text.contains("Read the files and report.") && text.contains("run without asking"), "{text}");
    // It ran (the workspace is no repository, so git itself fails) without a question.
    assert!(matches!(outcome(&events, "t2").0, ToolOutcome::Ran | ToolOutcome::Failed));
    assert_eq!(asked(&events), 1, "only the chained command, which is not `git status`, asked");
    // The grant ends with the turn.
    let events = run_turn(&t.session, octo_app::Message::user("again")).await;
    assert_eq!(asked(&events), 1, "{events:#?}");
    // A skill that came with the project grants nothing.
    let events = run_turn(&t.session, octo_app::Message::user("project")).await;
    let (_, text) = outcome(&events, "t5");
    assert!(text.contains("asked about as usual"), "{text}");
    assert_eq!(asked(&events), 1);
    let body = &t.llm.request_bodies().await[0];
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("- review: Reviews code read-only"), "{system}");
    assert!(body["tools"].as_array().unwrap().iter().any(|t| t["name"] == "skill"));
}

#[tokio::test]
async fn a_projects_skills_grant_only_once_trusted_and_a_change_asks_again() {
    let clean = "---\nname: clean\ndescription: Cleans up\nallowed-tools: Bash(rm:*)\n---\nRemove junk.\n";
    let t = setup(
        &[(".claude/skills/clean/SKILL.md", clean), ("junk.txt", "x\n"), ("junk2.txt", "x\n")],
        vec![
            call("t1", "skill", json!({"name": "clean"})),
            call("t2", "terminal", json!({"command": "rm -f junk.txt"})),
            answer("Asked."),
            call("t3", "skill", json!({"name": "clean"})),
            call("t4", "terminal", json!({"command": "rm -f junk2.txt"})),
            answer("Granted."),
        ],
        "",
        Mode::Default,
    )
    .await;
    let waiting = t.session.trust().untrusted_grants();
    assert!(waiting.len() == 1 && waiting[0].starts_with("/clean: Bash(rm:*)"), "{waiting:?}");
    let events = run_turn(&t.session, octo_app::Message::user("clean")).await;
    assert_eq!(asked(&events), 1, "before trust its rm is asked about");
    t.session.trust().trust_grants().unwrap();
    assert!(t.session.trust().untrusted_grants().is_empty());
    let events = run_turn(&t.session, octo_app::Message::user("clean again")).await;
    assert_eq!(asked(&events), 0, "trusted, its allowed-tools grant");
    assert!(!t.ws.join("junk2.txt").exists());
    // A changed file is asked about again.
    std::fs::write(t.ws.join(".claude/skills/clean/SKILL.md"), clean.replace("rm:*", "rm:*), Bash(curl:*"))
        .unwrap();
    t.session.skills().reload().unwrap();
    assert_eq!(t.session.trust().untrusted_grants().len(), 1);
}

#[tokio::test]
async fn a_projects_settings_allow_only_once_trusted() {
    let settings = r#"{"permissions": {"allow": ["Bash(touch:*)"], "deny": ["Bash(rm:*)"]}}"#;
    let t = setup(
        &[(".claude/settings.json", settings)],
        vec![
            call("t1", "terminal", json!({"command": "touch a"})),
            answer("Asked."),
            call("t2", "terminal", json!({"command": "touch b"})),
            answer("Allowed."),
        ],
        "",
        Mode::Default,
    )
    .await;
    let waiting = t.session.trust().untrusted_settings();
    assert!(waiting.len() == 1 && waiting[0].starts_with("Bash(touch:*) ("), "{waiting:?}");
    assert!(
        t.session.permissions().rules().iter().any(|r| r.action().as_str() == "deny"),
        "deny rules apply at once"
    );
    let events = run_turn(&t.session, octo_app::Message::user("one")).await;
    assert_eq!(asked(&events), 1);
    t.session.trust().trust_settings().unwrap();
    assert!(t.session.trust().untrusted_settings().is_empty());
    let events = run_turn(&t.session, octo_app::Message::user("two")).await;
    assert_eq!(asked(&events), 0, "trusted, the project's allow rule applies");
}

#[tokio::test]
async fn a_commands_model_runs_its_turn_and_the_sessions_comes_back() {
    let t = setup(
        &[
            (
                ".claude/commands/deep.md",
                "---\ndescription: Think hard\nmodel: opus\n---\nThink about $ARGUMENTS.\n",
            ),
            (".claude/commands/same.md", "---\ndescription: Same model\nmodel: inherit\n---\nGo.\n"),
            (".claude/commands/odd.md", "---\ndescription: Odd\nmodel: nowhere:nothing\n---\nGo.\n"),
        ],
        vec![answer("Deep."), answer("Plain."), answer("Same.")],
        "",
        Mode::Default,
    )
    .await;
    let notes = t.session.conversation().notes().join("\n");
    assert!(
        notes.contains("/odd asks for the model `nowhere:nothing`") && notes.contains("session's model"),
        "{notes}"
    );
    let inv = t.session.skills().invoke("deep", "it").await.unwrap().unwrap();
    let prepared = t.session.skills().finish(inv).await.unwrap();
    run_turn(&t.session, prepared).await;
    run_turn(&t.session, octo_app::Message::user("plain")).await;
    let inv = t.session.skills().invoke("same", "").await.unwrap().unwrap();
    let prepared = t.session.skills().finish(inv).await.unwrap();
    run_turn(&t.session, prepared).await;
    let bodies = t.llm.request_bodies().await;
    let models: Vec<&str> = bodies.iter().map(|b| b["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["claude-opus-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5"]);
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
    let inv = t.session.skills().invoke("explain", "\"new\" users\nand 'others'").await.unwrap().unwrap();
    // `echo` only looks: it runs without a question, as Claude Code runs such lines.
    assert_eq!(inv.questions().count(), 0, "{:?}", inv.steps);
    let prepared = t.session.skills().finish(inv).await.unwrap();
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
        (".octo/commands/looks.md", "---\nallowed-tools: Read\n---\nNow: !`date`\n"),
        (".env", "SECRET=1\n"),
    ];
    let t = setup(&cmds, vec![], "[permissions]\ndeny = [\"terminal(rm*)\"]\n", Mode::Auto).await;
    let err = t.session.skills().invoke("clean", "").await.unwrap().unwrap_err().to_string();
    assert!(err.contains("terminal(rm*)"), "{err}");
    // A secret is asked about even in auto mode; headless runs then stop (see the CLI tests).
    let inv = t.session.skills().invoke("leak", "").await.unwrap().unwrap();
    let asks: Vec<_> = inv.questions().collect();
    assert!(asks.len() == 1 && asks[0].ask.as_deref().unwrap().contains("secrets"), "{asks:?}");
    // A line that only looks needs no grant (`allowed-tools` grants; it no longer narrows).
    let inv = t.session.skills().invoke("looks", "").await.unwrap().unwrap();
    assert_eq!(inv.questions().count(), 0, "{:?}", inv.steps);
    assert!(t.session.skills().invoke("nope", "").await.is_none());
    assert!(t.llm.request_bodies().await.is_empty());
}

#[tokio::test]
async fn reloading_reads_the_folders_again_and_rebuilds_the_listing() {
    let t = setup(&[], vec![answer("one"), answer("two")], "", Mode::Default).await;
    assert!(t.session.skills().catalog().is_empty());
    run_turn(&t.session, octo_app::Message::user("hi")).await;
    write(
        &t.ws.join(".octo/skills/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ships it\n---\nShip.\n",
    );
    write(&t.ws.join(".octo/skills/bad/SKILL.md"), "---\nname: other\ndescription: x\n---\n");
    let notices = t.session.skills().reload().unwrap();
    assert!(notices.iter().any(|n| n.contains("bad/SKILL.md")), "{notices:?}");
    assert!(t.session.skills().catalog().get("deploy").is_some());
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
    let err = t.session.skills().invoke("fetch", "").await.unwrap().unwrap_err().to_string();
    assert!(err.contains("no curl in commands"), "{err}");
    // An argument that looks like a command substitution is printed, not run.
    let inv = t.session.skills().invoke("say", "$(touch pwned) it's").await.unwrap().unwrap();
    let prepared = t.session.skills().finish(inv).await.unwrap();
    assert!(prepared.message.text().contains("Said: $(touch pwned) it's"), "{}", prepared.message.text());
    assert!(!t.ws.join("pwned").exists());
}

/// Claude Code's `/commit` command as its repository ships the idea: `allowed-tools` naming
/// `git add`, `git status` and `git commit`, and `` !`git …` `` context lines that only look.
/// Unattended in default mode (nobody can approve), it gathers its context and commits.
const COMMIT: &str = "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)\ndescription: Create a git commit\n---\n## Context\n\n- Current git status: !`git status`\n- Current git diff (staged and unstaged changes): !`git diff HEAD`\n- Current branch: !`git branch --show-current`\n- Recent commits: !`git log --oneline -10`\n\n## Your task\n\nBased on the above changes, create a single git commit.\n";

#[tokio::test]
async fn claude_codes_commit_command_commits_unattended() {
    if std::process::Command::new("git").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no git");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    write(&home.join("commands/commit.md"), COMMIT);
    let git = |args: &[&str]| {
        let ok =
            std::process::Command::new("git").args(args).current_dir(&ws).output().unwrap().status.success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "T"]);
    write(&ws.join("a.txt"), "one\n");
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "first"]);
    write(&ws.join("a.txt"), "two\n");
    let llm = MockLlm::start().await;
    llm.script_anthropic(vec![
        call("t1", "terminal", json!({"command": "git add a.txt"})),
        call("t2", "terminal", json!({"command": "git commit -m 'Update a.txt'"})),
        answer("Committed."),
    ])
    .await;
    write(
        &home.join("config.toml"),
        &format!(
            "default = \"mock:claude-sonnet-4-5\"\nsandbox_git_writable = true\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n",
            llm.uri()
        ),
    );
    let config = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
    let options = SessionOptions {
        workspace: Some(ws.clone()),
        mode: Some(Mode::Default),
        unattended: true,
        ..SessionOptions::default()
    };
    let session = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    let inv = session.skills().invoke("commit", "").await.unwrap().unwrap();
    assert_eq!(inv.questions().count(), 0, "its context lines only look: {:?}", inv.steps);
    let prepared = session.skills().finish(inv).await.unwrap();
    let events = run_turn(&session, prepared).await;
    assert_eq!(outcome(&events, "t1").0, ToolOutcome::Ran, "{}", outcome(&events, "t1").1);
    assert_eq!(outcome(&events, "t2").0, ToolOutcome::Ran, "{}", outcome(&events, "t2").1);
    let log = std::process::Command::new("git").args(["log", "--oneline"]).current_dir(&ws).output().unwrap();
    assert!(String::from_utf8_lossy(&log.stdout).contains("Update a.txt"));
    let sent = llm.request_bodies().await[0]["messages"][0]["content"].to_string();
    assert!(sent.contains("-one") && sent.contains("+two"), "the diff reached the prompt: {sent}");
}
