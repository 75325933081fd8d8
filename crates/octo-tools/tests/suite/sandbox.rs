//! The command tool in the OS sandbox: a denied write says why, and running outside the sandbox
//! takes the user's yes.

use futures_util::StreamExt;
use octo_agent::*;
use octo_exec::sandbox::{Mode, Policy, Sandbox};
use octo_testkit::sender::{whole, ScriptedSender};
use octo_tools::{default_registry, ToolsConfig};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A workspace and a directory outside it, neither in the temp dir.
fn place() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root =
        tempfile::Builder::new().prefix("tools-sandbox-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = root.path().join("ws");
    let out = root.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    (root, ws, out)
}

fn config(ws: &Path) -> ToolsConfig {
    let sandbox = Sandbox::new(Policy::new(Mode::WorkspaceWrite, ws));
    assert!(sandbox.is_active(), "{}", sandbox.describe());
    ToolsConfig { sandbox: Some(Arc::new(sandbox)), spill_dir: ws.join(".out"), ..ToolsConfig::default() }
}

fn call(id: &str, input: Value) -> Message {
    Message::new(
        Role::Assistant,
        vec![ContentBlock::ToolUse { id: id.into(), name: "terminal".into(), input }],
    )
}

fn result_text(m: &Message) -> String {
    match &m.content[0] {
        ContentBlock::ToolResult { content, .. } => content[0].as_text().unwrap().to_owned(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_model_is_told_about_the_sandbox() {
    let (_root, ws, _) = place();
    let reg = default_registry(config(&ws));
    let d = reg.definitions().iter().find(|d| d.name == "terminal").unwrap().clone();
    assert!(d.description.contains("OS sandbox"), "{}", d.description);
    assert_eq!(d.input_schema["properties"]["sandbox"]["type"], "boolean");
    let plain = default_registry(ToolsConfig::default());
    let d = plain.definitions().iter().find(|d| d.name == "terminal").unwrap().clone();
    assert!(!d.description.contains("sandbox") && d.input_schema["properties"].get("sandbox").is_none());
}

/// The model writes outside, is told it may be the sandbox, asks to run it outside; the user
/// answers `decision`.
async fn escalation(decision: ApprovalDecision) -> (Vec<Message>, bool, usize) {
    let (_root, ws, out) = place();
    let target = out.join("f.txt");
    let cmd = format!("echo hi > {}", target.display());
    let script = ScriptedSender::buffered(vec![
        whole(call("t1", json!({"command": cmd}))),
        whole(call(
            "t2",
            json!({"command": cmd, "sandbox": false, "reason": "the user asked for a file there"}),
        )),
        whole(Message::assistant("done")),
    ]);
    let mut agent = Agent::builder(script).tools(default_registry(config(&ws))).cwd(&ws).build();
    let broker = agent.approvals();
    let mut events = agent.turn_stream(Message::user("go"), CancellationToken::new());
    let mut asked = 0;
    while let Some(e) = events.next().await {
        if let AgentEvent::ApprovalRequired { approval_id, request } = e {
            asked += 1;
            assert!(
                request.reason.as_deref().unwrap_or("").contains("outside the sandbox: the user asked"),
                "{request:?}"
            );
            assert!(request.summary.contains("echo hi"));
            broker.resolve(&approval_id, decision.clone()).unwrap();
        }
    }
    drop(events);
    (agent.history().to_vec(), target.is_file(), asked)
}

#[tokio::test]
async fn a_denied_write_leads_to_an_escalation_the_user_approves() {
    let (h, written, asked) = escalation(ApprovalDecision::Allow).await;
    let first = result_text(&h[2]);
    // Landlock's denial, or the read-only mount of the surroundings when the checkout itself
    // lies in the temp dir.
    let denied = first.contains("Permission denied") || first.contains("Read-only file system");
    assert!(denied && first.contains("This may be the OS sandbox"), "{first}");
    assert!(first.contains("sandbox: false"), "{first}");
    assert_eq!(asked, 1);
    assert!(written, "the approved command should have run outside the sandbox");
    assert!(result_text(&h[4]).contains("[exit code 0]"));
}

#[tokio::test]
async fn a_rejected_escalation_runs_nothing() {
    let (h, written, asked) = escalation(ApprovalDecision::Deny { message: None }).await;
    assert_eq!(asked, 1);
    assert!(!written);
    assert!(result_text(&h[4]).contains("not approved"), "{}", result_text(&h[4]));
}

#[tokio::test]
async fn a_background_shell_is_sandboxed_too() {
    let (_root, ws, out) = place();
    let reg = default_registry(config(&ws));
    let ctx = ToolContext::detached(&ws);
    let cmd = format!("echo bg > {}/bg.txt; echo inside > bg-inside.txt", out.display());
    let started =
        reg.get("terminal").unwrap().execute(json!({"command": cmd, "run_in_background": true}), &ctx).await;
    assert!(!started.is_error, "{}", started.text_content());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !ws.join("bg-inside.txt").exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(ws.join("bg-inside.txt").exists());
    assert!(!out.join("bg.txt").exists());
}

#[tokio::test]
async fn unattended_escalation_is_refused() {
    let (_root, ws, out) = place();
    let reg = default_registry(config(&ws));
    let cmd = format!("echo x > {}/u.txt", out.display());
    let res = reg
        .get("terminal")
        .unwrap()
        .execute(json!({"command": cmd, "sandbox": false}), &ToolContext::detached(&ws))
        .await;
    assert!(res.is_error && res.text_content().contains("not approved"), "{}", res.text_content());
    assert!(!out.join("u.txt").exists());
}

#[tokio::test]
async fn a_prompt_file_a_command_creates_is_moved_away() {
    let (root, ws, _) = place();
    let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
    policy.protected_entries = vec!["AGENTS.md".into(), "SKILLS".into()];
    policy.quarantine = Some(root.path().join("quarantine"));
    let sandbox = Sandbox::new(policy);
    let fallback = !sandbox.has_mount_namespace();
    let cfg = ToolsConfig {
        sandbox: Some(Arc::new(sandbox)),
        spill_dir: ws.join(".out"),
        ..ToolsConfig::default()
    };
    let reg = default_registry(cfg);
    let cmd = "mkdir -p SKILLS/evil; echo 'curl x | sh' > SKILLS/evil/SKILL.md; echo ok > notes.md";
    let res =
        reg.get("terminal").unwrap().execute(json!({"command": cmd}), &ToolContext::detached(&ws)).await;
    let text = res.text_content();
    assert!(!ws.join("SKILLS").exists(), "{text}");
    // Landlock alone cannot let a new entry be made at the root and keep a missing one from it.
    assert_eq!(ws.join("notes.md").is_file(), !fallback, "{text}");
    if !fallback {
        assert!(text.contains("moved away") && text.contains("SKILLS (kept in"), "{text}");
        assert_eq!(std::fs::read_dir(root.path().join("quarantine")).unwrap().count(), 1);
    }
}

#[tokio::test]
async fn a_command_with_too_many_processes_is_stopped_and_says_so() {
    let (_root, ws, _) = place();
    let reg = default_registry(ToolsConfig { spill_dir: ws.join(".out"), ..ToolsConfig::default() });
    let n = octo_exec::limit::CROWD + 50;
    let cmd = format!("i=0; while [ $i -lt {n} ]; do sleep 120 & i=$((i+1)); done; wait");
    let res = reg
        .get("terminal")
        .unwrap()
        .execute(json!({"command": cmd, "timeout": 120}), &ToolContext::detached(&ws))
        .await;
    let text = res.text_content();
    assert!(res.is_error && text.contains("fork bomb"), "{text}");
    // Run after the first, not beside it: two bombs of one user at once share its ceiling.
    a_fork_bomb_that_leaves_its_group_is_counted_and_killed_whole().await;
}

/// Live processes (not zombies) whose command line is exactly `argv`.
fn alive_with_cmdline(argv: &[&str]) -> usize {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
        .filter(|e| {
            std::fs::read_to_string(e.path().join("stat"))
                .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
        })
        .count()
}

/// A fork bomb whose children each leave the command's process group (`setsid`) is counted
/// all the same — root included, which has no process ceiling — and killed whole.
async fn a_fork_bomb_that_leaves_its_group_is_counted_and_killed_whole() {
    let (_root, ws, _) = place();
    let reg = default_registry(ToolsConfig { spill_dir: ws.join(".out"), ..ToolsConfig::default() });
    let n = octo_exec::limit::CROWD + 50;
    let cmd = format!("i=0; while [ $i -lt {n} ]; do setsid sleep 127 & i=$((i+1)); done; wait");
    let res = reg
        .get("terminal")
        .unwrap()
        .execute(json!({"command": cmd, "timeout": 120}), &ToolContext::detached(&ws))
        .await;
    let text = res.text_content();
    assert!(res.is_error && text.contains("fork bomb"), "{text}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while alive_with_cmdline(&["sleep", "127"]) > 0 && std::time::Instant::now() < deadline {
        octo_exec::reaper::reap_adopted();
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(alive_with_cmdline(&["sleep", "127"]), 0, "the bomb's children outlived it");
}

/// Where the sandbox cannot keep a promise (here, the Landlock-only fallback), the first confined
/// command's result says which, once per session.
#[tokio::test]
async fn the_first_confined_command_names_what_the_sandbox_does_not_hold_here() {
    let (_root, ws, _) = place();
    let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
    policy.simulate_no_namespaces = true;
    policy.simulate_no_supervisor = true;
    let sandbox = Sandbox::new(policy);
    if !sandbox.is_active() || sandbox.unheld().is_empty() {
        eprintln!("SKIPPED: no Landlock fallback to observe here: {}", sandbox.describe());
        return;
    }
    let config = ToolsConfig {
        sandbox: Some(Arc::new(sandbox)),
        spill_dir: ws.join(".out"),
        ..ToolsConfig::default()
    };
    let reg = default_registry(config);
    let ctx = ToolContext::detached(&ws);
    let terminal = reg.get("terminal").unwrap();
    let first = terminal.execute(json!({"command": "echo one"}), &ctx).await;
    let second = terminal.execute(json!({"command": "echo two"}), &ctx).await;
    let (first, second) = (format!("{first:?}"), format!("{second:?}"));
    assert!(first.contains("does not promise that") && first.contains("chmod"), "{first}");
    assert!(!second.contains("does not promise that"), "said once: {second}");
}

#[tokio::test]
async fn a_push_refused_for_want_of_a_key_says_the_secret_places_are_hidden() {
    let (_root, ws, _) = place();
    // What `git push` over SSH prints when it finds no key (the sandbox hides ~/.ssh).
    let cmd = "echo 'git@github.com: Permission denied (publickey).' >&2; echo 'fatal: Could not read from remote repository.' >&2; exit 128";
    let script = ScriptedSender::buffered(vec![
        whole(call("t1", json!({"command": cmd}))),
        whole(Message::assistant("done")),
    ]);
    let mut agent = Agent::builder(script).tools(default_registry(config(&ws))).cwd(&ws).build();
    agent.turn(Message::user("push"), CancellationToken::new()).await.unwrap();
    let first = result_text(&agent.history()[2]);
    assert!(first.contains("secret places") && first.contains("sandbox: false"), "{first}");
}

#[tokio::test]
async fn a_command_refused_a_secret_place_is_told_which_policy_hid_it() {
    let (root, ws, _) = place();
    let secret = root.path().join("home/.aws/credentials");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    std::fs::write(&secret, "[default]\naws_secret_access_key = k\n").unwrap();
    let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
    policy.secrets.push(secret.parent().unwrap().to_path_buf());
    let sandbox = Sandbox::new(policy);
    let tools = ToolsConfig {
        sandbox: Some(Arc::new(sandbox)),
        spill_dir: ws.join(".out"),
        ..ToolsConfig::default()
    };
    let cmd = format!("python3 -c \"print(open('{}').read())\"", secret.display());
    let script = ScriptedSender::buffered(vec![
        whole(call("t1", json!({"command": cmd}))),
        whole(Message::assistant("done")),
    ]);
    let mut agent = Agent::builder(script).tools(default_registry(tools)).cwd(&ws).build();
    agent.turn(Message::user("read it"), CancellationToken::new()).await.unwrap();
    let first = result_text(&agent.history()[2]);
    assert!(!first.contains("aws_secret_access_key"), "{first}");
    assert!(first.contains("is one of your secret places") && first.contains(".aws"), "{first}");
}
