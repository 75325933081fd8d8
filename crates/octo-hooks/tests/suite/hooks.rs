//! Every event and decision path, and hooks that misbehave.

use octo_agent::{AfterTool, ToolOutput, ToolVerdict};
use octo_hooks::config::{from_claude_settings, Event};
use octo_hooks::{Context, Hooks, PromptDecision, Runner, SessionInfo};
use serde_json::json;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct T {
    dir: tempfile::TempDir,
    notices: Arc<Mutex<Vec<String>>>,
}

impl T {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap(), notices: Arc::default() }
    }

    /// A script in the workspace.
    fn script(&self, name: &str, body: &str) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("./{name}")
    }

    /// Hooks from a Claude Code settings text.
    fn hooks(&self, settings: &str) -> Hooks {
        self.hooks_with(settings, false, None)
    }

    /// Hooks whose runner says it is `sandboxed`, with a `guard`.
    fn hooks_with(&self, settings: &str, sandboxed: bool, guard: Option<octo_hooks::Guard>) -> Hooks {
        let (set, notices) = from_claude_settings(settings, "settings.json", false);
        assert!(notices.is_empty(), "{notices:?}");
        let notices = Arc::clone(&self.notices);
        Hooks::new(
            set,
            Runner::new(
                Arc::new(|c: &str, _| {
                    let mut cmd = std::process::Command::new("sh");
                    cmd.arg("-c").arg(c);
                    cmd
                }),
                self.dir.path().to_path_buf(),
                sandboxed,
            ),
            Context {
                session: Arc::new(|| SessionInfo { id: Some("s-1".into()), ..SessionInfo::default() }),
                aliases: Arc::new(|t: &str| if t == "terminal" { vec!["Bash".into()] } else { Vec::new() }),
                notice: Arc::new(move |n| notices.lock().unwrap().push(n)),
                shape: octo_hooks::Shape::native(),
                guard,
            },
        )
    }

    fn path(&self, p: &str) -> std::path::PathBuf {
        self.dir.path().join(p)
    }
}

fn on(event: &str, matcher: &str, command: &str) -> String {
    json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 3}]}]}}).to_string()
}

#[tokio::test]
async fn pre_tool_use_blocks_allows_asks_and_rewrites() {
    let t = T::new();
    // Exit 2 blocks with stderr; the JSON on stdin names octo's tool.
    let block = t.script("block.sh", "cat > input.json\necho 'no rm here' >&2\nexit 2");
    let h = t.hooks(&on("PreToolUse", "Bash", &block));
    let d = h.pre_tool("terminal", &json!({"command": "rm -rf x"})).await;
    assert_eq!(d.verdict, ToolVerdict::Deny { reason: "no rm here".into() });
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path("input.json")).unwrap()).unwrap();
    assert_eq!(input["tool_name"], "terminal");
    assert_eq!(input["tool_input"]["command"], "rm -rf x");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["session_id"], "s-1");
    // The matcher selects by name: read_file is not Bash.
    assert_eq!(h.pre_tool("read_file", &json!({})).await.verdict, ToolVerdict::Continue);

    for (answer, want) in [
        (
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}"#,
            ToolVerdict::Allow,
        ),
        (
            r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check this"}}"#,
            ToolVerdict::Ask { reason: Some("check this".into()) },
        ),
        (r#"{"decision": "block", "reason": "policy"}"#, ToolVerdict::Deny { reason: "policy".into() }),
        (r#"{"continue": false, "stopReason": "stop now"}"#, ToolVerdict::Deny { reason: "stop now".into() }),
        ("not json at all {", ToolVerdict::Continue),
    ] {
        let s = t.script("decide.sh", &format!("cat >/dev/null\ncat <<'EOF'\n{answer}\nEOF"));
        let d = t.hooks(&on("PreToolUse", "*", &s)).pre_tool("write_file", &json!({"path": "a"})).await;
        assert_eq!(d.verdict, want, "{answer}");
    }
    let s = t.script(
        "rewrite.sh",
        r#"cat >/dev/null; echo '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"path": "safe.txt"}}}'"#,
    );
    let d = t
        .hooks(&on("PreToolUse", "Write|Edit|write_file", &s))
        .pre_tool("write_file", &json!({"path": "a"}))
        .await;
    assert_eq!(d.input, Some(json!({"path": "safe.txt"})));
    // Exit 2 with nothing on stderr still says who blocked.
    let s = t.script("quiet.sh", "exit 2");
    let d = t.hooks(&on("PreToolUse", "*", &s)).pre_tool("grep", &json!({})).await;
    assert!(
        matches!(d.verdict, ToolVerdict::Deny { reason } if reason.contains("blocked by the PreToolUse hook `./quiet.sh`"))
    );
}

#[tokio::test]
async fn parallel_hooks_deny_wins() {
    let t = T::new();
    // Each waits until the other has started, then leaves a mark: one after the other, the
    // first would wait until its timeout killed it, unmarked.
    let dir = t.dir.path().display().to_string();
    let slow_allow = t.script(
        "a.sh",
        &format!(r#"touch '{dir}/a.on'; while [ ! -e '{dir}/d.on' ]; do sleep 0.02; done; touch '{dir}/a.met'; echo '{{"hookSpecificOutput": {{"permissionDecision": "allow"}}}}'"#),
    );
    let slow_deny = t.script(
        "d.sh",
        &format!("touch '{dir}/d.on'; while [ ! -e '{dir}/a.on' ]; do sleep 0.02; done; touch '{dir}/d.met'; echo denied >&2; exit 2"),
    );
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command": slow_allow}]},
        {"matcher": "*", "hooks": [{"type": "command", "command": slow_deny}]}
    ]}})
    .to_string();
    let d = t.hooks(&settings).pre_tool("grep", &json!({})).await;
    assert!(t.dir.path().join("a.met").exists() && t.dir.path().join("d.met").exists(), "ran in parallel");
    assert_eq!(d.verdict, ToolVerdict::Deny { reason: "denied".into() });
}

#[tokio::test]
async fn other_events_follow_the_protocol() {
    let t = T::new();
    let ctx = t.script("ctx.sh", "cat >/dev/null; echo 'run make fmt after edits'");
    let after = t.hooks(&on("PostToolUse", "*", &ctx));
    // Plain stdout on PostToolUse is for the transcript, not the model: only blocks and
    // additionalContext reach it.
    assert_eq!(after.post_tool("edit_file", &json!({}), &ToolOutput::text("ok")).await, AfterTool::Keep);
    let s = t.script(
        "post.sh",
        r#"cat >/dev/null; echo '{"decision": "block", "reason": "lint failed: x.rs:3"}'"#,
    );
    let a = t
        .hooks(&on("PostToolUse", "*", &s))
        .post_tool("edit_file", &json!({}), &ToolOutput::text("ok"))
        .await;
    assert!(matches!(a, AfterTool::AddContext(c) if c.contains("lint failed: x.rs:3")));

    let refuse = t.script("refuse.sh", "echo 'no secrets in prompts' >&2; exit 2");
    assert_eq!(
        t.hooks(&on("UserPromptSubmit", "", &refuse)).user_prompt("my key is x").await,
        PromptDecision::Block("no secrets in prompts".into())
    );
    assert_eq!(
        t.hooks(&on("UserPromptSubmit", "", &ctx)).user_prompt("hi").await,
        PromptDecision::Proceed(Some("run make fmt after edits".into()))
    );
    let go_on = t.script(
        "stop.sh",
        r#"cat > stop.json; echo '{"decision": "block", "reason": "the tests are not run yet"}'"#,
    );
    let h = t.hooks(&on("Stop", "", &go_on));
    assert_eq!(h.stop(Event::Stop, "done", false).await.as_deref(), Some("the tests are not run yet"));
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path("stop.json")).unwrap()).unwrap();
    assert_eq!(input["stop_hook_active"], false);
    assert_eq!(
        t.hooks(&on("SubagentStop", "", &go_on)).stop(Event::SubagentStop, "x", true).await.as_deref(),
        Some("the tests are not run yet")
    );
    assert_eq!(
        t.hooks(&on("PreCompact", "manual", &ctx)).pre_compact("manual").await.as_deref(),
        Some("run make fmt after edits")
    );
    assert_eq!(t.hooks(&on("PreCompact", "manual", &ctx)).pre_compact("auto").await, None);
    assert_eq!(
        t.hooks(&on("SessionStart", "", &ctx)).session_start("startup").await.as_deref(),
        Some("run make fmt after edits")
    );
    let note = t.script("note.sh", "cat > note.json");
    t.hooks(&on("Notification", "", &note)).notification("octo needs your permission to use terminal").await;
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path("note.json")).unwrap()).unwrap();
    assert_eq!(input["message"], "octo needs your permission to use terminal");
    let end = t.script("end.sh", "cat > end.json");
    t.hooks(&on("SessionEnd", "", &end)).session_end("exit").await;
    assert!(t.path("end.json").exists());
}

#[tokio::test]
async fn misbehaving_hooks_are_errors_that_block_nothing_and_leave_nothing_behind() {
    let t = T::new();
    // Does not exist.
    let d = t.hooks(&on("PreToolUse", "*", "./no-such-hook.sh")).pre_tool("grep", &json!({})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue);
    assert!(
        t.notices.lock().unwrap().iter().any(|n| n.contains("no-such-hook.sh") && n.contains("exit 127")),
        "{:?}",
        t.notices.lock().unwrap()
    );
    // Hangs, with a child of its own: the timeout (3 s) kills the whole group.
    let hang = t.script("hang.sh", "sleep 31.717 &\nsleep 31.717");
    let d = t.hooks(&on("PreToolUse", "*", &hang)).pre_tool("grep", &json!({})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue);
    assert!(t.notices.lock().unwrap().iter().any(|n| n.contains("took longer than 3 s")));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive("31.717"), "the hook's processes were killed");
    // Prints 100 MB: stopped at the cap.
    let flood = t.script("flood.sh", "head -c 104857600 /dev/zero | tr '\\0' x");
    let d = t.hooks(&on("PreToolUse", "*", &flood)).pre_tool("grep", &json!({})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue);
    assert!(t.notices.lock().unwrap().iter().any(|n| n.contains("printed more than 1024 KB")));
    // Another exit code: an error for the user, nothing blocked.
    let one = t.script("one.sh", "echo oops >&2; exit 1");
    let d = t.hooks(&on("PreToolUse", "*", &one)).pre_tool("grep", &json!({})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue);
    assert!(t.notices.lock().unwrap().iter().any(|n| n.contains("failed (exit 1): oops")));
    let _ = Path::new(".");
}

fn alive(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains(marker))
}

#[tokio::test]
async fn a_sandboxed_hook_refused_by_the_sandbox_reports_its_error_instead_of_blocking() {
    let t = T::new();
    // What `make` does when its recipe cannot write: the error, then exit 2.
    let make = t.script(
        "make.sh",
        "echo 'sh: 1: cannot create /home/u/.cache/x: Permission denied' >&2\necho 'make: *** [fmt] Error 2' >&2\nexit 2",
    );
    let settings = on("PreToolUse", "*", &make);
    let confined = t.hooks_with(&settings, true, None);
    let d = confined.pre_tool("terminal", &json!({"command": "ls"})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue);
    let notices = t.notices.lock().unwrap().clone();
    assert!(
        notices.iter().any(|n| n.contains("failed in the sandbox") && n.contains("Permission denied")),
        "{notices:?}"
    );
    // The same exit outside the sandbox blocks, as Claude Code's protocol says.
    let free = t.hooks_with(&settings, false, None);
    let d = free.pre_tool("terminal", &json!({"command": "ls"})).await;
    assert!(matches!(d.verdict, ToolVerdict::Deny { .. }), "{:?}", d.verdict);
    // A sandboxed hook that blocks on purpose still blocks, even after a refused write.
    let block = t.script(
        "block2.sh",
        "echo 'sh: 1: cannot create /x/log: Read-only file system' >&2\necho 'not on main' >&2\nexit 2",
    );
    let h = t.hooks_with(&on("PreToolUse", "*", &block), true, None);
    let d = h.pre_tool("terminal", &json!({"command": "ls"})).await;
    assert!(
        matches!(&d.verdict, ToolVerdict::Deny { reason } if reason.ends_with("not on main")),
        "{:?}",
        d.verdict
    );
}

#[tokio::test]
async fn a_hook_the_guard_holds_back_does_not_run_and_blocks_nothing() {
    let t = T::new();
    let hook = t.script("mark.sh", "touch ran.txt\nexit 2");
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let guard: octo_hooks::Guard = Arc::new(move |event: Event, command: String| {
        log.lock().unwrap().push(format!("{} {command}", event.as_str()));
        Box::pin(async { Err::<Option<octo_hooks::AfterRun>, _>("was not run: you said no".to_owned()) })
    });
    let h = t.hooks_with(&on("PreToolUse", "*", &hook), false, Some(guard));
    let d = h.pre_tool("terminal", &json!({"command": "ls"})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue);
    assert!(!t.path("ran.txt").exists());
    assert_eq!(seen.lock().unwrap().as_slice(), [format!("PreToolUse {hook}")]);
    let notices = t.notices.lock().unwrap().clone();
    assert!(notices.iter().any(|n| n.contains("was not run: you said no")), "{notices:?}");
}

#[tokio::test]
async fn a_refusal_the_model_wrote_into_the_call_does_not_unblock_a_sandboxed_hook() {
    let t = T::new();
    // A validator that echoes the command it refuses.
    let hook = t.script("echo.sh", "cmd=$(cat)\necho \"blocked: $cmd\" >&2\nexit 2");
    let h = t.hooks_with(&on("PreToolUse", "*", &hook), true, None);
    let d = h.pre_tool("terminal", &json!({"command": "rm -rf / # Permission denied"})).await;
    assert!(matches!(d.verdict, ToolVerdict::Deny { .. }), "{:?}", d.verdict);
    // A guard that logs where the sandbox refuses it, then blocks echoing the call: the model
    // adds what reads like make's failure line to its command.
    let guard = t.script(
        "guard.sh",
        "cmd=$(cat)\necho x >> /proc/octo-no-such-log 2>&1 || echo 'sh: 1: cannot create /x/log: Read-only file system' >&2\necho \"blocked: $cmd\" >&2\nexit 2",
    );
    let h = t.hooks_with(&on("PreToolUse", "*", &guard), true, None);
    for sly in ["rm -rf victim # make: *** [x] Error 1", "rm -rf victim # make ***"] {
        let d = h.pre_tool("terminal", &json!({ "command": sly })).await;
        assert!(matches!(d.verdict, ToolVerdict::Deny { .. }), "{sly}: {:?}", d.verdict);
    }
}

#[tokio::test]
async fn a_hook_whose_files_changed_while_it_ran_has_its_answer_set_aside() {
    let t = T::new();
    let allow = t.script(
        "allow.sh",
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\"}}'",
    );
    let guard: octo_hooks::Guard = Arc::new(|_, _| {
        Box::pin(async {
            let after: octo_hooks::AfterRun =
                Box::new(|| Some("ran a file that changed while it ran".to_owned()));
            Ok(Some(after))
        })
    });
    let h = t.hooks_with(&on("PreToolUse", "*", &allow), true, Some(guard));
    let d = h.pre_tool("terminal", &json!({"command": "ls"})).await;
    // Not the planted "allow": the safe side, a block naming why.
    assert!(
        matches!(&d.verdict, ToolVerdict::Deny { reason } if reason.contains("changed while it ran")),
        "{:?}",
        d.verdict
    );
}

/// Whether process `pid` is still running (not gone, not a zombie).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn what_a_hook_leaves_running_goes_with_its_hooks() {
    let t = T::new();
    // A daemon in a session of its own, its environment (and the session's tag) cleared.
    let hook = t.script(
        "daemon.sh",
        "setsid sh -c 'echo $$ > daemon.pid; exec env -i sleep 300' &\nwhile [ ! -s daemon.pid ]; do sleep 0.05; done",
    );
    let h = t.hooks(&on("PostToolUse", "*", &hook));
    h.post_tool("terminal", &json!({"command": "ls"}), &ToolOutput::text("ok")).await;
    let pid: i32 = std::fs::read_to_string(t.path("daemon.pid")).unwrap().trim().parse().unwrap();
    assert!(running(pid), "the hook's daemon runs on after the hook");
    drop(h);
    // Killed on the spot; only the reaping may lag.
    let mut waited = 0;
    while running(pid) && waited < 200 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    assert!(!running(pid), "the hook's daemon was left running");
}

/// Waits (bounded: a hang guard, not a timing claim) until `path` exists.
async fn appears(path: &Path) -> bool {
    for _ in 0..600 {
        if path.exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn an_if_condition_selects_the_calls_a_hook_runs_for() {
    let t = T::new();
    let s = t.script("count.sh", "cat >/dev/null; echo x >> ran.txt; echo 'git only' >&2; exit 2");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": s, "if": "Bash(git *)", "timeout": 3}]}]}})
    .to_string();
    let h = t.hooks(&settings);
    let d = h.pre_tool("terminal", &json!({"command": "ls -la"})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue, "not a git command: the hook does not run");
    assert!(!t.path("ran.txt").exists());
    let d = h.pre_tool("terminal", &json!({"command": "git push --force"})).await;
    assert_eq!(d.verdict, ToolVerdict::Deny { reason: "git only".into() });
    assert_eq!(std::fs::read_to_string(t.path("ran.txt")).unwrap(), "x\n");
}

#[tokio::test]
async fn async_hooks_are_not_waited_for_and_decide_nothing() {
    let t = T::new();
    // `"async": true` in the settings: the call goes on while the hook still waits for `go`.
    let s = t.script("bg.sh", "cat >/dev/null; while [ ! -f go ]; do sleep 0.05; done; touch done; exit 2");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": s, "async": true, "timeout": 30}]}]}})
    .to_string();
    let h = t.hooks(&settings);
    let d = h.pre_tool("grep", &json!({})).await;
    assert_eq!(d.verdict, ToolVerdict::Continue, "an async hook cannot block");
    assert!(!t.path("done").exists(), "the call did not wait for it");
    std::fs::write(t.path("go"), "").unwrap();
    assert!(appears(&t.path("done")).await, "it ran on in the background");

    // `{"async": true}` as the first line of its output (as plugins' SessionStart hooks do):
    // octo stops waiting, and the line is not taken as context.
    let t = T::new();
    let s = t.script(
        "later.sh",
        "cat >/dev/null; echo '{\"async\": true, \"asyncTimeout\": 30000}'; while [ ! -f go ]; do sleep 0.05; done; touch done; echo late",
    );
    let h = t.hooks(&on("SessionStart", "", &s).replace("\"timeout\":3", "\"timeout\":30"));
    assert_eq!(h.session_start("startup").await, None);
    assert!(!t.path("done").exists());
    std::fs::write(t.path("go"), "").unwrap();
    assert!(appears(&t.path("done")).await);
}

#[tokio::test]
async fn a_system_message_reaches_the_user() {
    let t = T::new();
    let s =
        t.script("warn.sh", r#"cat >/dev/null; echo '{"systemMessage": "Formatting skipped: no prettier"}'"#);
    let h = t.hooks(&on("PostToolUse", "*", &s));
    let _ = h.post_tool("grep", &json!({}), &ToolOutput::text("ok")).await;
    let notices = t.notices.lock().unwrap().clone();
    assert!(notices.iter().any(|n| n == "PostToolUse hook: Formatting skipped: no prettier"), "{notices:?}");
}

#[tokio::test]
async fn a_call_reaches_hooks_with_its_id_and_an_absolute_file_path() {
    let t = T::new();
    let s = t.script("see.sh", "cat > seen.json");
    let h = t.hooks(&on("PreToolUse", "*", &s));
    let _ = h.pre_tool_call("toolu_9", "write_file", &json!({"file_path": "src/a.txt"})).await;
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path("seen.json")).unwrap()).unwrap();
    assert_eq!(seen["tool_use_id"], "toolu_9");
    assert_eq!(seen["tool_input"]["file_path"], t.path("src/a.txt").display().to_string());
    assert_eq!(seen["session_id"], "s-1");
}
