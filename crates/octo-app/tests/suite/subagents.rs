//! Sub-agents in whole sessions against a mock endpoint: results, parallel children, types from
//! Claude Code-format files, limits, failures, the background, approvals, plan mode, cancel.

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions, ToolOutcome, TurnEndReason};
use octo_testkit::anthropic::Reply;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::{json, Value};
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

async fn setup(files: &[(&str, &str)], replies: Vec<Scripted>, extra: &str, mode: Mode) -> Setup {
    setup_with(files, replies, extra, SessionOptions { mode: Some(mode), ..SessionOptions::default() }).await
}

async fn setup_with(
    files: &[(&str, &str)],
    replies: Vec<Scripted>,
    extra: &str,
    options: SessionOptions,
) -> Setup {
    let mut scenario = Scenario::new().config(extra).replies(replies);
    for (p, t) in files {
        scenario = scenario.file(p, t);
    }
    let built = scenario.build().await;
    let session = super::common::started(&built, options);
    let ws = built.workspace();
    let Built { home, llm, .. } = built;
    Setup { _tmp: home, ws, llm, session }
}

fn answer(t: &str) -> Scripted {
    Scripted::sse(Reply::new().text(t).usage(100, 10, 0, 0).sse())
}

fn call(id: &str, tool: &str, input: Value) -> Scripted {
    Scripted::sse(Reply::new().tool_use(id, tool, input).sse())
}

fn task(id: &str, agent: &str, prompt: &str) -> (String, &'static str, Value) {
    (id.to_owned(), "task", json!({"subagent_type": agent, "description": prompt, "prompt": prompt}))
}

fn calls(list: &[(String, &'static str, Value)]) -> Scripted {
    let mut r = Reply::new();
    for (id, tool, input) in list {
        r = r.tool_use(id, *tool, input.clone());
    }
    Scripted::sse(r.sse())
}

/// Runs a turn, approving every question; returns its events.
async fn turn(s: &Session, text: &str) -> Vec<AgentEvent> {
    let mut rx = s.subscribe();
    s.prompt(text).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await.unwrap().unwrap();
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

fn result(events: &[AgentEvent], id: &str) -> (ToolOutcome, String) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallEnd { id: c, outcome, output, .. } if c == id => {
                Some((*outcome, output.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map_or_else(Vec::new, |t| t.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect())
}

#[tokio::test]
async fn a_child_answers_and_its_usage_counts_for_the_parent() {
    let t = setup(
        &[],
        vec![
            calls(&[task("t1", "explore", "where is main?")]),
            answer("main is in src/main.rs:1"),
            answer("It is in src/main.rs."),
        ],
        "",
        Mode::Default,
    )
    .await;
    let events = turn(&t.session, "find main").await;
    let (o, text) = result(&events, "t1");
    assert_eq!(o, ToolOutcome::Ran, "{text}");
    assert!(
        text.starts_with("main is in src/main.rs:1") && text.contains("[sub-agent explore-1: 0 tool call(s)"),
        "{text}"
    );
    let updates: Vec<&Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolUpdate { kind, data, .. } if kind == "subagent" => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(updates.first().unwrap()["event"], "start");
    assert_eq!(updates.last().unwrap()["event"], "end");
    assert!(
        t.session.status().usage.input_tokens >= 200,
        "child usage added: {:?}",
        t.session.status().usage
    );
    let bodies = t.llm.request_bodies().await;
    let child = &bodies[1];
    assert!(child["system"][0]["text"].as_str().unwrap().contains("read-only exploration sub-agent"));
    let names = tool_names(child);
    assert!(
        names.iter().all(|n| n != "write_file" && n != "terminal" && n != "task"),
        "explore is read-only: {names:?}"
    );
    assert!(names.iter().any(|n| n == "grep"));
    let parent_tools = tool_names(&bodies[0]);
    assert!(parent_tools.iter().any(|n| n == "task"));
    let description = bodies[0]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "task").unwrap()
        ["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        description.find("- explore:").unwrap() < description.find("- general:").unwrap(),
        "sorted: {description}"
    );
}

#[tokio::test]
async fn three_children_run_at_the_same_time() {
    let slow = |t: &str| answer(t).delay(Duration::from_millis(600));
    let t = setup(
        &[],
        vec![
            calls(&[task("a", "explore", "one"), task("b", "explore", "two"), task("c", "explore", "three")]),
            slow("first"),
            slow("second"),
            slow("third"),
            answer("All three done."),
        ],
        "",
        Mode::Default,
    )
    .await;
    let events = turn(&t.session, "do three things").await;
    for id in ["a", "b", "c"] {
        assert_eq!(result(&events, id).0, ToolOutcome::Ran);
    }
    // Overlapped: every child started before any of them ended (one at a time would end the
    // first before the second starts).
    let at = |hit: &dyn Fn(&AgentEvent) -> bool| {
        events.iter().enumerate().filter(|(_, e)| hit(e)).map(|(i, _)| i).collect::<Vec<_>>()
    };
    let starts = at(
        &|e| matches!(e, AgentEvent::ToolUpdate { kind, data, .. } if kind == "subagent" && data["event"] == "start"),
    );
    let ends =
        at(&|e| matches!(e, AgentEvent::ToolCallEnd { id, .. } if ["a", "b", "c"].contains(&id.as_str())));
    assert_eq!((starts.len(), ends.len()), (3, 3), "{events:?}");
    assert!(
        starts.iter().max() < ends.iter().min(),
        "the children ran one after another: starts {starts:?}, ends {ends:?}"
    );
}

const REVIEWER: &str = "---\nname: reviewer\ndescription: Reviews code, reading only\ntools: Read, Grep\nmodel: inherit\nmax-turns: 2\n---\nYou review code.\n";

#[tokio::test]
async fn a_claude_code_agent_file_is_restricted_to_its_tools_and_turn_cap() {
    let t = setup(
        &[
            (".claude/agents/reviewer.md", REVIEWER),
            (".claude/agents/broken.md", "---\nname: x\n[not a field\n---\n"),
            ("a.txt", "hi\n"),
        ],
        vec![
            calls(&[task("t1", "reviewer", "review a.txt")]),
            call("c1", "write_file", json!({"path": "b.txt", "content": "no"})),
            call("c2", "read_file", json!({"path": "a.txt"})),
            answer("Gave up."),
        ],
        "",
        Mode::Auto,
    )
    .await;
    assert!(
        t.session
            .conversation()
            .notes()
            .iter()
            .any(|n| n.contains("broken.md") && n.contains("not valid YAML")),
        "{:?}",
        t.session.conversation().notes()
    );
    let events = turn(&t.session, "review").await;
    let (o, text) = result(&events, "t1");
    assert_ne!(o, ToolOutcome::Ran);
    assert!(text.contains("turn cap (2 model requests)"), "{text}");
    assert!(!t.ws.join("b.txt").exists(), "the reviewer has no write tool, even in auto mode");
    let bodies = t.llm.request_bodies().await;
    let mut names = tool_names(&bodies[1]);
    names.sort();
    assert_eq!(names, ["grep", "read_file"]);
    assert!(bodies[1]["system"][0]["text"].as_str().unwrap().starts_with("You review code."));
}

#[tokio::test]
async fn unknown_types_failing_children_and_limits_are_clear_errors() {
    let t = setup(
        &[],
        vec![
            calls(&[task("t1", "wizard", "x")]),
            calls(&[task("t2", "general", "fail please")]),
            Scripted::json(
                400,
                &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad model"}}),
            ),
            calls(&[task("t3", "explore", "one"), task("t4", "explore", "two")]),
            answer("one done").delay(Duration::from_millis(300)),
            answer("Finished."),
        ],
        "[subagents]\nmax_running = 1\n",
        Mode::Default,
    )
    .await;
    let events = turn(&t.session, "go").await;
    let (o, text) = result(&events, "t1");
    assert_ne!(o, ToolOutcome::Ran);
    assert!(text.contains("no agent type `wizard`") && text.contains("explore, general"), "{text}");
    let (o, text) = result(&events, "t2");
    assert_ne!(o, ToolOutcome::Ran);
    assert!(text.contains("the sub-agent failed") && text.contains("bad model"), "{text}");
    let (a, b) = (result(&events, "t3"), result(&events, "t4"));
    let refused: Vec<_> = [a, b].into_iter().filter(|(o, _)| *o != ToolOutcome::Ran).collect();
    assert_eq!(refused.len(), 1, "one of two parallel children is over the limit");
    assert!(refused[0].1.contains("the most allowed at once"), "{}", refused[0].1);
    // Depth 1: the general child had no task tool.
    let bodies = t.llm.request_bodies().await;
    assert!(!tool_names(&bodies[2]).iter().any(|n| n == "task"), "{:?}", tool_names(&bodies[2]));
}

#[tokio::test]
async fn a_background_child_finishes_after_the_turn_and_the_model_is_told() {
    let bg = json!({"subagent_type": "explore", "description": "slow search", "prompt": "search slowly", "background": true});
    let t = setup(
        &[],
        vec![
            call("t1", "task", bg),
            answer("Started it."),
            call("t2", "task_output", json!({"id": "explore-1"})),
            answer("The search found it."),
        ],
        "",
        Mode::Default,
    )
    .await;
    // The child's requests are told apart by its system prompt, so the race between it and the
    // parent's next request does not matter.
    t.llm
        .script_anthropic_matching(
            "exploration sub-agent",
            [answer("found it late").delay(Duration::from_millis(400))],
        )
        .await;
    let events = turn(&t.session, "search in the background").await;
    assert!(result(&events, "t1").1.contains("Started the sub-agent explore-1"));
    assert!(matches!(events.last(), Some(AgentEvent::TurnEnd { reason: TurnEndReason::Completed, .. })));
    let before = t.session.status().usage.input_tokens;
    let spawner = t.session.tools().subagents().unwrap();
    for _ in 0..100 {
        if matches!(spawner.children()[0].state, octo_app::subagents::ChildState::Done(_)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(matches!(spawner.children()[0].state, octo_app::subagents::ChildState::Done(_)));
    // The child ran after the turn: its tokens still count in the session.
    let after = t.session.status().usage.input_tokens;
    assert!(after >= before + 100, "the background child's usage: {before} then {after}");
    let events = turn(&t.session, "how did it go?").await;
    assert_eq!(result(&events, "t2").1, "found it late");
    let bodies = t.llm.request_bodies().await;
    let last = bodies[3]["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(
        bodies[3]["system"][0]["text"].as_str().unwrap().starts_with("You are octo"),
        "the parent's request"
    );
    assert!(last.contains("The background sub-agent explore-1 finished"), "{last}");
}

#[tokio::test]
async fn a_childs_approvals_reach_the_parents_front_end_and_plan_mode_holds() {
    let t = setup(
        &[],
        vec![
            calls(&[task("t1", "general", "write a file")]),
            call("c1", "write_file", json!({"path": "out.txt", "content": "from the child\n"})),
            answer("Wrote out.txt."),
            answer("Done."),
            calls(&[task("t2", "general", "write again")]),
            call("c2", "write_file", json!({"path": "plan.txt", "content": "no\n"})),
            answer("Could not."),
            answer("Planned."),
        ],
        "",
        Mode::Default,
    )
    .await;
    let events = turn(&t.session, "delegate").await;
    let asked = events.iter().find_map(|e| match e {
        AgentEvent::ApprovalRequired { request, .. } => Some(request.summary.clone()),
        _ => None,
    });
    assert!(
        asked.as_deref().is_some_and(|s| s.starts_with("[sub-agent general-1]") && s.contains("out.txt")),
        "{asked:?}"
    );
    assert_eq!(std::fs::read_to_string(t.ws.join("out.txt")).unwrap(), "from the child\n");
    t.session.permissions().set_mode(Mode::Plan);
    turn(&t.session, "plan it").await;
    assert!(!t.ws.join("plan.txt").exists(), "plan mode holds for children");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_five_running_children_and_their_commands() {
    let marker = |i: usize| format!("sleep 21.4{i}7 && touch done-{i}");
    let mut replies =
        vec![calls(&(0..5).map(|i| task(&format!("t{i}"), "general", "run it")).collect::<Vec<_>>())];
    for i in 0..5 {
        replies.push(call(&format!("c{i}"), "terminal", json!({"command": marker(i)})));
    }
    replies.push(answer("after the cancel"));
    let t = setup(&[], replies, "[subagents]\nmax_running = 5\n", Mode::Auto).await;
    let mut rx = t.session.subscribe();
    t.session.prompt("run five").unwrap();
    let mut started = 0;
    while started < 5 {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        if matches!(&e, AgentEvent::ToolUpdate { kind, data, .. } if kind == "subagent" && data["event"] == "tool")
        {
            started += 1;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    t.session.abort();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        if let AgentEvent::TurnEnd { reason, .. } = e {
            assert_eq!(reason, TurnEndReason::Cancelled);
            break;
        }
    }
    let children = t.session.tools().subagents().unwrap().children();
    assert_eq!(children.len(), 5);
    assert!(children.iter().all(|c| c.state != octo_app::subagents::ChildState::Running), "{children:?}");
    // The parent's history is still a valid conversation: the next turn works.
    let events = turn(&t.session, "still there?").await;
    assert!(matches!(events.last(), Some(AgentEvent::TurnEnd { reason: TurnEndReason::Completed, .. })));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!((0..5).all(|i| !t.ws.join(format!("done-{i}")).exists()), "no command outlived the cancel");
    let alive: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| (0..5).any(|i| c.contains(&format!("21.4{i}7"))))
        .collect();
    assert!(alive.is_empty(), "orphaned: {alive:?}");
}

/// An agent file's `model: haiku` (Claude Code's alias) runs the child on that family's model
/// of the session's Anthropic endpoint.
#[tokio::test]
async fn a_claude_model_alias_picks_that_family_on_the_sessions_endpoint() {
    let quick = "---\nname: quick\ndescription: Answers fast\nmodel: haiku\n---\nBe brief.\n";
    let t = setup(
        &[(".claude/agents/quick.md", quick)],
        vec![calls(&[task("t1", "quick", "say hi")]), answer("hi"), answer("done")],
        "",
        Mode::Auto,
    )
    .await;
    let events = turn(&t.session, "go").await;
    assert_eq!(result(&events, "t1").0, ToolOutcome::Ran);
    let bodies = t.llm.request_bodies().await;
    assert_eq!(bodies[0]["model"], "claude-sonnet-4-5", "the parent");
    assert_eq!(bodies[1]["model"], "claude-haiku-4-5", "the child, on its family's model");
}

/// A child on a model of its own is priced at that model's rate, not the session's: the turn's
/// and the session's cost are the parent's tokens at Sonnet's price plus the child's at Haiku's
/// — whether the agent names Claude's `haiku` or the configured lite model.
#[tokio::test]
async fn a_child_on_another_model_is_priced_at_its_own_rate() {
    for (model, extra) in [("haiku", ""), ("lite", "lite_model = \"mock:claude-haiku-4-5\"")] {
        priced_at_its_own_rate(model, extra).await;
    }
}

async fn priced_at_its_own_rate(model: &str, extra: &str) {
    let quick = format!("---\nname: quick\ndescription: Answers fast\nmodel: {model}\n---\nBe brief.\n");
    let t = setup(
        &[(".claude/agents/quick.md", &quick)],
        vec![calls(&[task("t1", "quick", "say hi")]), answer("hi"), answer("done")],
        extra,
        Mode::Auto,
    )
    .await;
    let mut rx = t.session.subscribe();
    t.session.prompt("go").unwrap();
    let mut fold = octo_app::TurnFold::new();
    while let Ok(e) = rx.recv().await {
        fold.push(&e);
        if fold.is_done() {
            break;
        }
    }
    let catalog = octo_provider::Catalog::builtin();
    let (sonnet, haiku) =
        (catalog.info("claude-sonnet-4-5").price.unwrap(), catalog.info("claude-haiku-4-5").price.unwrap());
    assert_ne!(sonnet, haiku);
    let status = t.session.status();
    let child = octo_app::Usage { input_tokens: 100, output_tokens: 10, ..Default::default() };
    let mut parent = status.usage;
    parent.input_tokens -= child.input_tokens;
    parent.output_tokens -= child.output_tokens;
    let expected = sonnet.cost(&parent) + haiku.cost(&child);
    let got = status.cost_usd.unwrap();
    assert!((got - expected).abs() < 1e-9, "session: {got} vs {expected}");
    let turn = t.session.conversation().summarize(&fold).cost_usd.unwrap();
    assert!((turn - expected).abs() < 1e-9, "turn: {turn} vs {expected}");
    assert!((got - sonnet.cost(&status.usage)).abs() > 1e-9, "not all at the session's rate");
}

/// A background child asks to write after its parent's turn ended. With a front end that
/// answers between turns (octo serve's), the request reaches it labelled with the child and
/// waits for the answer; otherwise it is denied, as nobody can answer.
#[tokio::test]
async fn a_background_childs_approval_reaches_a_front_end_that_answers_between_turns() {
    for between_turns in [true, false] {
        let bg = json!({"subagent_type": "general", "description": "write later", "prompt": "write out.txt", "background": true});
        let options = SessionOptions {
            mode: Some(Mode::Default),
            approvals_between_turns: between_turns,
            ..SessionOptions::default()
        };
        let t = setup_with(&[], vec![call("t1", "task", bg), answer("Started it.")], "", options).await;
        t.llm
            .script_anthropic_matching(
                "You are a sub-agent of octo",
                [
                    call("c1", "write_file", json!({"path": "out.txt", "content": "late\n"}))
                        .delay(Duration::from_millis(300)),
                    answer("Wrote it."),
                ],
            )
            .await;
        let mut rx = t.session.subscribe();
        turn(&t.session, "write in the background").await;
        let spawner = t.session.tools().subagents().unwrap();
        let mut asked = None;
        for _ in 0..100 {
            while let Ok(e) = rx.try_recv() {
                if let AgentEvent::ApprovalRequired { approval_id, request } = e {
                    asked = Some((approval_id, request.summary));
                }
            }
            if asked.is_some()
                || !matches!(spawner.children()[0].state, octo_app::subagents::ChildState::Running)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if between_turns {
            let (id, summary) = asked.expect("the front end was asked");
            assert!(summary.starts_with("[background sub-agent general-1]"), "{summary}");
            assert!(!t.ws.join("out.txt").exists(), "waits for the answer");
            t.session.approvals().approve(&id).unwrap();
        } else {
            assert!(asked.is_none(), "nobody is asked");
        }
        for _ in 0..100 {
            if !matches!(spawner.children()[0].state, octo_app::subagents::ChildState::Running) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(t.ws.join("out.txt").exists(), between_turns, "written only when approved");
    }
}

/// Every file below `dir` whose name starts with `prefix`.
fn found(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if e.file_name().to_string_lossy().starts_with(prefix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A resumed session numbers its children from 1 again: the second child's history is saved
/// under a name of its own, and the first one's is kept as it was.
#[tokio::test]
async fn children_of_a_resumed_session_keep_the_earlier_childrens_histories() {
    let t = setup_with(
        &[],
        vec![
            calls(&[task("t1", "explore", "first look")]),
            answer("the first child's finding"),
            answer("First done."),
            calls(&[task("t2", "explore", "second look")]),
            answer("the second child's finding"),
            answer("Second done."),
        ],
        "",
        SessionOptions { save: true, ..SessionOptions::default() },
    )
    .await;
    turn(&t.session, "look once").await;
    let id = t.session.conversation().id().unwrap();
    let home = t.ws.parent().unwrap().join("home");
    assert_eq!(found(&home, "explore-1").len(), 1);
    drop(t.session);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let config = Config::load(&home, &t.ws, &env, &Overrides::default()).unwrap();
    let options =
        SessionOptions { workspace: Some(t.ws.clone()), resume: Some(id), ..SessionOptions::default() };
    let resumed = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    turn(&resumed, "look again").await;
    let files = found(&home, "explore-1");
    assert_eq!(files.len(), 2, "{files:?}");
    let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(texts.iter().any(|t| t.contains("the first child's finding")), "the first history is kept");
    assert!(texts.iter().any(|t| t.contains("the second child's finding")));
}

/// A background child on a model of its own is priced at that model's rate too, though its
/// usage arrives after its parent's turn has ended.
#[tokio::test]
async fn a_background_child_on_another_model_is_priced_at_its_own_rate() {
    let quick = "---\nname: quick\ndescription: Answers fast\nmodel: haiku\n---\nBe brief.\n";
    let bg =
        json!({"subagent_type": "quick", "description": "later", "prompt": "say hi", "background": true});
    let t = setup(
        &[(".claude/agents/quick.md", quick)],
        vec![call("t1", "task", bg), answer("started")],
        "",
        Mode::Auto,
    )
    .await;
    t.llm
        .script_anthropic_matching(
            // The agent file's body is the child's system prompt.
            "Be brief.",
            [Scripted::sse(Reply::new().text("hi").usage(100, 10, 0, 0).sse())
                .delay(Duration::from_millis(200))],
        )
        .await;
    turn(&t.session, "go").await;
    let child = octo_app::Usage { input_tokens: 100, output_tokens: 10, ..Default::default() };
    let catalog = octo_provider::Catalog::builtin();
    let (sonnet, haiku) =
        (catalog.info("claude-sonnet-4-5").price.unwrap(), catalog.info("claude-haiku-4-5").price.unwrap());
    let mut status = t.session.status();
    for _ in 0..100 {
        if status.usage.output_tokens >= 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        status = t.session.status();
    }
    let mut parent = status.usage;
    parent.input_tokens -= child.input_tokens;
    parent.output_tokens -= child.output_tokens;
    let expected = sonnet.cost(&parent) + haiku.cost(&child);
    let got = status.cost_usd.unwrap();
    assert!((got - expected).abs() < 1e-9, "session: {got} vs {expected} ({:?})", status.usage);
}
