//! Sessions with the OS sandbox: accept-edits runs sandboxed commands, running outside the
//! sandbox is asked about in every mode, hooks are confined too, and a machine without a
//! sandbox says so (or refuses commands when the sandbox is required).

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions};
use octo_testkit::anthropic::Reply;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

struct Setup {
    _root: TempHome,
    ws: PathBuf,
    out: PathBuf,
    session: Session,
    _llm: MockLlm,
}

/// A session whose workspace and "outside" directory are not in the temp dir (which sandboxed
/// commands may write). `extra` is added to the user's config; `simulate` sets
/// `OCTO_SANDBOX_SIMULATE`.
async fn setup(calls: Vec<Value>, mode: Mode, extra: &str, simulate: bool) -> Setup {
    setup_with(&[], calls, mode, extra, simulate.then_some("no-landlock")).await
}

/// [`setup`] with `files` written in the workspace before the session starts.
async fn setup_with(
    files: &[(&str, &str)],
    calls: Vec<Value>,
    mode: Mode,
    extra: &str,
    simulate: Option<&'static str>,
) -> Setup {
    setup_as(files, calls, mode, extra, simulate, false).await
}

/// [`setup_with`] for a run nobody can answer questions in (`octo -p`).
async fn setup_unattended(files: &[(&str, &str)], calls: Vec<Value>, extra: &str) -> Setup {
    setup_as(files, calls, Mode::Auto, extra, None, true).await
}

async fn setup_as(
    files: &[(&str, &str)],
    calls: Vec<Value>,
    mode: Mode,
    extra: &str,
    simulate: Option<&'static str>,
    unattended: bool,
) -> Setup {
    let mut scenario = Scenario::new().under(env!("CARGO_TARGET_TMPDIR")).config(extra);
    for (i, input) in calls.into_iter().enumerate() {
        scenario = scenario
            .reply(Scripted::sse(Reply::new().tool_use(format!("toolu_{i}"), "terminal", input).sse()));
    }
    scenario = scenario.reply(Scripted::sse(Reply::new().text("Done.").sse()));
    for (name, text) in files {
        scenario = scenario.file(name, text);
    }
    let Built { home: root, llm, .. } = scenario.build().await;
    let (home, ws, out) = (root.home(), root.workspace(), root.root().join("outside"));
    std::fs::create_dir_all(&out).unwrap();
    let env = move |k: &str| match k {
        "MOCK_KEY" => Some("sk-mock".to_owned()),
        "OCTO_SANDBOX_SIMULATE" => simulate.map(str::to_owned),
        _ => None,
    };
    let config = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
    let session = Session::start(
        config,
        SessionOptions {
            workspace: Some(ws.clone()),
            mode: Some(mode),
            unattended,
            ..SessionOptions::default()
        },
        &MemoryStore::default(),
        &env,
    )
    .unwrap();
    Setup { _root: root, ws, out, session, _llm: llm }
}

/// Whether accept-edits must ask before commands on this host: only where no mount namespace
/// can be had and no seccomp supervisor stands in for it (then the session says so). Without a
/// namespace no new entry can be made at the workspace's root either.
fn accept_edits_asks(ws: &std::path::Path) -> bool {
    use octo_tools::shell::sandbox::{Mode as Confine, Policy, Sandbox};
    let mut policy = Policy::new(Confine::WorkspaceWrite, ws);
    policy.protected_entries = vec!["AGENTS.md".into()];
    Sandbox::new(policy).accept_edits_gap().is_some()
}

/// Whether this host gives the sandbox a mount namespace.
fn namespaced(ws: &std::path::Path) -> bool {
    use octo_tools::shell::sandbox::{Mode as Confine, Policy, Sandbox};
    let mut policy = Policy::new(Confine::WorkspaceWrite, ws);
    policy.protected_entries = vec!["AGENTS.md".into()];
    Sandbox::new(policy).has_mount_namespace()
}

/// Runs one turn, answering every approval with `yes`; the approvals' reasons and the tool
/// results.
async fn drive(s: &Session, yes: bool) -> (Vec<String>, Vec<String>) {
    let mut rx = s.subscribe();
    s.prompt("go").unwrap();
    let (mut asked, mut results) = (Vec::new(), Vec::new());
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap();
        match &e {
            AgentEvent::ApprovalRequired { approval_id, request } => {
                asked.push(request.reason.clone().unwrap_or_default());
                if yes {
                    s.approvals().approve(approval_id).unwrap();
                } else {
                    s.approvals().reject(approval_id, None).unwrap();
                }
            }
            AgentEvent::ToolCallEnd { output, .. } => results.push(output.clone()),
            AgentEvent::TurnEnd { .. } => return (asked, results),
            _ => {}
        }
    }
}

#[tokio::test]
async fn accept_edits_runs_sandboxed_commands_without_asking() {
    // In a folder: without a namespace nothing new can be made at the workspace's root.
    let call = json!({"command": "echo hi > src/made.txt"});
    let t = setup_with(&[("src/main.rs", "")], vec![call], Mode::AcceptEdits, "", None).await;
    assert!(
        t.session.status().sandbox.starts_with("workspace-write, no network"),
        "{}",
        t.session.status().sandbox
    );
    if accept_edits_asks(&t.ws) {
        let (asked, _) = drive(&t.session, false).await;
        assert!(asked.len() == 1 && asked[0].contains("does not hold everything"), "{asked:?}");
        return;
    }
    let (asked, results) = drive(&t.session, false).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(t.ws.join("src/made.txt").is_file(), "{results:?}");
}

#[tokio::test]
async fn without_namespaces_the_supervisor_lets_accept_edits_run_commands_unasked() {
    use std::os::unix::fs::PermissionsExt;
    let calls = vec![json!({"command": "echo hi > src/made.txt && chmod 000 ../outside"})];
    let t = setup_with(&[("src/main.rs", "")], calls, Mode::AcceptEdits, "", Some("no-namespaces")).await;
    if !t.session.status().sandbox.contains("checked by a seccomp supervisor") {
        eprintln!("SKIPPED: no supervisor here: {}", t.session.status().sandbox);
        return;
    }
    let before = std::fs::metadata(&t.out).unwrap().permissions().mode();
    let (asked, results) = drive(&t.session, false).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(t.ws.join("src/made.txt").is_file(), "{results:?}");
    assert!(results[0].contains("Operation not permitted"), "{results:?}");
    assert_eq!(std::fs::metadata(&t.out).unwrap().permissions().mode(), before, "{results:?}");
}

#[tokio::test]
async fn running_outside_the_sandbox_is_asked_even_in_auto_mode() {
    let probe = tempfile::Builder::new().tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = probe.path().join("escaped.txt");
    let call = json!({"command": format!("echo x > {}", target.display()), "sandbox": false, "reason": "write the report"});
    for yes in [false, true] {
        let t = setup(vec![call.clone()], Mode::Auto, "", false).await;
        let (asked, results) = drive(&t.session, yes).await;
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].contains("outside the sandbox: write the report"), "{asked:?}");
        assert!(asked[0].contains("your secret places"), "{asked:?}");
        assert_eq!(target.is_file(), yes, "{results:?}");
    }
}

#[tokio::test]
async fn a_push_over_ssh_asks_naming_the_key_place_and_runs_unconfined_only_on_yes() {
    let probe = tempfile::Builder::new().tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = probe.path().join("pushed.txt");
    let command = format!("git push -q origin main 2>/dev/null; echo pushed > {}", target.display());
    let call = json!({"command": command, "sandbox": false, "reason": "push the fix"});
    for yes in [false, true] {
        let t = setup(vec![call.clone()], Mode::Auto, "", false).await;
        let (asked, _) = drive(&t.session, yes).await;
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].contains("push the fix; there it can read ~/.ssh"), "{asked:?}");
        assert_eq!(target.is_file(), yes);
    }
}

#[tokio::test]
async fn a_command_cannot_point_the_quarantine_outside() {
    // The workspace is `<root>/workspace`, octo's home `<root>/home`: the command replaces every
    // place a quarantine could be in the session's output with a link to `<root>/outside`, then
    // makes a prompt folder octo moves away after it.
    let plant = "h=ho; for d in ../${h}me/output/*/; do ln -s \"$PWD/../outside\" \"$d/quarantine\" 2>/dev/null; done; \
                 c=cla; mkdir -p .${c}ude/skills/x && echo planted > .${c}ude/skills/x/SKILL.md";
    // A long output first: it is kept in the session's output folder, which then exists.
    let t = setup(vec![json!({"command": "seq 1 100000"}), json!({"command": plant})], Mode::Auto, "", false)
        .await;
    let (asked, _) = drive(&t.session, false).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(std::fs::read_dir(&t.out).unwrap().count(), 0, "nothing moved outside");
    assert!(!t.ws.join(".claude").exists(), "the created prompt folder was moved away");
}

#[tokio::test]
async fn a_denied_write_in_auto_mode_is_explained() {
    let t = setup(vec![json!({"command": "echo x > ../outside/f.txt"})], Mode::Auto, "", false).await;
    let (asked, results) = drive(&t.session, false).await;
    assert!(asked.is_empty());
    assert!(!t.out.join("f.txt").exists());
    assert!(results[0].contains("This may be the OS sandbox"), "{results:?}");
}

#[tokio::test]
async fn hooks_run_confined_unless_sandbox_hooks_is_false() {
    let hook =
        "[[hooks.PostToolUse]]\ncommand = \"echo hook > ../outside/hook.txt; echo ok > hook-inside.txt\"\n";
    let t = setup(vec![json!({"command": "true"})], Mode::Auto, hook, false).await;
    drive(&t.session, false).await;
    // Without a namespace a new entry at the workspace's root cannot be made either.
    assert_eq!(t.ws.join("hook-inside.txt").is_file(), namespaced(&t.ws));
    assert!(!t.out.join("hook.txt").exists());
    // The user's own choice: unconfined, as in Claude Code.
    let free = format!("sandbox_hooks = false\n{hook}");
    let t = setup(vec![json!({"command": "true"})], Mode::Auto, &free, false).await;
    drive(&t.session, false).await;
    assert!(t.ws.join("hook-inside.txt").is_file());
    assert!(t.out.join("hook.txt").is_file());
}

#[tokio::test]
async fn a_sandboxed_hook_reaches_the_network_only_when_its_table_says_so() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    let probe = |name: &str| {
        format!(
            "python3 -c \\\"import socket; socket.create_connection(('127.0.0.1', {port}), 5); open('out/{name}', 'w')\\\""
        )
    };
    let hooks = format!(
        "[[hooks.PostToolUse]]\ncommand = \"{}\"\nnetwork = true\n[[hooks.PostToolUse]]\ncommand = \"{}\"\n",
        probe("online"),
        probe("offline")
    );
    let t =
        setup_with(&[("out/.keep", "")], vec![json!({"command": "true"})], Mode::Auto, &hooks, None).await;
    drive(&t.session, false).await;
    assert!(t.ws.join("out/online").is_file(), "the hook with `network = true` connected");
    assert!(!t.ws.join("out/offline").exists(), "the other did not");
}

#[tokio::test]
async fn a_sandboxed_hook_gets_the_commands_environment_without_secrets() {
    std::env::set_var("OCTO_TEST_HOOK_API_TOKEN", "s3cr3t-value");
    let hook = "[[hooks.PostToolUse]]\ncommand = \"env > out/env.txt\"\n";
    let t = setup_with(&[("out/.keep", "")], vec![json!({"command": "true"})], Mode::Auto, hook, None).await;
    drive(&t.session, false).await;
    let seen = std::fs::read_to_string(t.ws.join("out/env.txt")).unwrap();
    assert!(seen.contains("PATH=") && !seen.contains("s3cr3t-value"), "{seen}");
    // Unconfined (the user's choice), a hook sees octo's whole environment, as in Claude Code.
    let free = format!("sandbox_hooks = false\n{hook}");
    let t = setup_with(&[("out/.keep", "")], vec![json!({"command": "true"})], Mode::Auto, &free, None).await;
    drive(&t.session, false).await;
    assert!(std::fs::read_to_string(t.ws.join("out/env.txt")).unwrap().contains("s3cr3t-value"));
}

#[tokio::test]
async fn the_sessions_commands_are_held_still_while_a_hook_runs() {
    // A command left running ticks every 10 ms; the hook counts the ticks, waits, counts again.
    let makefile = "fmt:\n\twc -l < out/ticks > out/a; sleep 0.5; wc -l < out/ticks > out/b\n";
    let hook = "[[hooks.PostToolUse]]\ncommand = \"make -s fmt\"\n";
    let ticker =
        json!({"command": "while :; do echo x >> out/ticks; sleep 0.01; done", "run_in_background": true});
    let files = [("Makefile", makefile), ("out/ticks", "x\n")];
    let t = setup_with(&files, vec![ticker], Mode::Auto, hook, None).await;
    let (asked, _) = drive(&t.session, false).await;
    assert!(asked.is_empty(), "{asked:?}");
    let count = |f: &str| std::fs::read_to_string(t.ws.join("out").join(f)).unwrap().trim().to_owned();
    assert_eq!(count("a"), count("b"), "the command ran on while the hook ran");
}

/// A user's `make fmt` hook after each command, in a workspace with a Makefile.
const MAKE_HOOK: &str = "[[hooks.PostToolUse]]\ncommand = \"make -s fmt\"\n";
const MAKEFILE: &str = "fmt:\n\techo fmt >> out/fmt.log\n";

#[tokio::test]
async fn a_hook_that_runs_a_makefile_the_model_changed_asks_first_in_every_mode() {
    let files = [("Makefile", MAKEFILE), ("out/.keep", "")];
    // Unchanged: the hook runs without a question.
    let t = setup_with(&files, vec![json!({"command": "true"})], Mode::Auto, MAKE_HOOK, None).await;
    let (asked, _) = drive(&t.session, false).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(t.ws.join("out/fmt.log").is_file());
    // The model rewrites the Makefile: the hook asks, naming it; no runs nothing.
    let plant = json!({"command": "printf 'fmt:\\n\\techo planted > out/planted.txt\\n' > Makefile"});
    for (mode, yes) in [(Mode::Auto, false), (Mode::Auto, true)] {
        let t = setup_with(&files, vec![plant.clone()], mode, MAKE_HOOK, None).await;
        let (asked, _) = drive(&t.session, yes).await;
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].contains("runs Makefile, changed in this session"), "{asked:?}");
        assert!(std::fs::read_to_string(t.ws.join("Makefile")).unwrap().contains("planted"));
        assert_eq!(t.ws.join("out/planted.txt").is_file(), yes, "{mode:?} {yes}");
    }
}

#[tokio::test]
async fn a_hook_that_runs_a_script_the_model_changed_is_not_run_when_nobody_can_be_asked() {
    let hook = "[[hooks.PostToolUse]]\ncommand = \"sh scripts/fmt.sh\"\n";
    let files = [("scripts/fmt.sh", "echo fmt >> out/fmt.log\n"), ("out/.keep", "")];
    let plant = json!({"command": "echo 'echo planted > out/planted.txt' > scripts/fmt.sh"});
    let t = setup_unattended(&files, vec![plant], hook).await;
    let mut rx = t.session.subscribe();
    t.session.prompt("go").unwrap();
    let mut notices = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.unwrap().unwrap() {
            AgentEvent::Notice { message } => notices.push(message),
            AgentEvent::ApprovalRequired { .. } => panic!("nobody can answer in an unattended run"),
            AgentEvent::TurnEnd { .. } => break,
            _ => {}
        }
    }
    assert!(!t.ws.join("out/planted.txt").exists());
    assert!(
        notices.iter().any(|n| n.contains(
            "scripts/fmt.sh, changed in this session or since the last commit, and nobody can be asked"
        )),
        "{notices:?}"
    );
}

#[tokio::test]
async fn without_landlock_the_session_says_so_once_and_runs_commands() {
    let t = setup(vec![json!({"command": "echo x > ../outside/free.txt"})], Mode::Auto, "", true).await;
    let notes: Vec<&String> =
        t.session.conversation().notes().iter().filter(|n| n.contains("no OS sandbox")).collect();
    assert_eq!(notes.len(), 1, "{:?}", t.session.conversation().notes());
    assert!(notes[0].contains("full rights"), "{notes:?}");
    assert!(t.session.status().sandbox.starts_with("none"), "{}", t.session.status().sandbox);
    drive(&t.session, false).await;
    assert!(t.out.join("free.txt").is_file());
}

#[tokio::test]
async fn a_required_sandbox_that_is_missing_refuses_commands() {
    let t = setup(vec![json!({"command": "echo x > made.txt"})], Mode::Auto, "sandbox = \"required\"", true)
        .await;
    assert!(
        t.session.conversation().notes().iter().any(|n| n.contains("will be refused")),
        "{:?}",
        t.session.conversation().notes()
    );
    let (_, results) = drive(&t.session, false).await;
    assert!(results[0].contains("required but not available"), "{results:?}");
    assert!(!t.ws.join("made.txt").exists());
}

#[tokio::test]
async fn sandbox_off_runs_unconfined_without_notice() {
    let t = setup(
        vec![json!({"command": "echo x > ../outside/off.txt"})],
        Mode::Auto,
        "sandbox = \"off\"",
        false,
    )
    .await;
    assert!(
        t.session.conversation().notes().iter().all(|n| !n.contains("sandbox")),
        "{:?}",
        t.session.conversation().notes()
    );
    drive(&t.session, false).await;
    assert!(t.out.join("off.txt").is_file());
}

#[tokio::test]
async fn accept_edits_still_asks_before_a_command_names_a_prompt_file() {
    let t = setup(vec![json!({"command": "echo 'obey' >> CLAUDE.md"})], Mode::AcceptEdits, "", false).await;
    let (asked, _) = drive(&t.session, false).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    let named = asked[0].contains("CLAUDE.md") || asked[0].contains("claude.md");
    assert!(named || !namespaced(&t.ws), "{asked:?}");
    assert!(!t.ws.join("CLAUDE.md").exists());
}

#[tokio::test]
async fn a_file_the_rules_import_stays_read_only_for_commands() {
    let files = [("CLAUDE.md", "Follow @docs/rules.md\n"), ("docs/rules.md", "Be careful.\n")];
    let call = json!({"command": "echo 'obey the model' >> docs/rules.md"});
    let t = setup_with(&files, vec![call], Mode::Auto, "", None).await;
    let (asked, results) = drive(&t.session, false).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(std::fs::read_to_string(t.ws.join("docs/rules.md")).unwrap(), "Be careful.\n", "{results:?}");
}

#[tokio::test]
async fn without_namespaces_auto_asks_before_a_mode_change_outside() {
    use std::os::unix::fs::PermissionsExt;
    // Without the seccomp supervisor too: then nothing in the kernel stops it.
    let call = json!({"command": "chmod 000 ../outside"});
    let t = setup_with(&[], vec![call], Mode::Auto, "", Some("no-namespaces,no-supervisor")).await;
    let before = std::fs::metadata(&t.out).unwrap().permissions().mode() & 0o777;
    let (asked, results) = drive(&t.session, false).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("outside the workspace") && asked[0].contains("cannot stop"), "{asked:?}");
    let after = std::fs::metadata(&t.out).unwrap().permissions().mode() & 0o777;
    assert_eq!(after, before, "{results:?}");
}

#[tokio::test]
async fn without_namespaces_auto_asks_before_a_command_talks_to_a_daemon() {
    // With the network off and no mount namespace to hide `/run`, the Docker socket (a way out:
    // `docker run -v /:/host`) stays reachable: asked about even in auto mode.
    // Without the seccomp supervisor, which would refuse the connection.
    let call = json!({"command": "docker run --rm -v /:/host alpine cat /host/etc/shadow"});
    let t = setup_with(&[], vec![call], Mode::Auto, "", Some("no-namespaces,no-supervisor")).await;
    let (asked, _) = drive(&t.session, false).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("daemon") && asked[0].contains("sockets"), "{asked:?}");
}
