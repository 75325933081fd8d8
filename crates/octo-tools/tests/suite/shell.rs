//! `terminal`, `terminal_output` and `kill_shell` on real processes.

#![cfg(unix)]

use octo_agent::{CancellationToken, ToolContext, ToolOutput, ToolRegistry};
use octo_tools::{default_registry, ToolsConfig};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

fn tools(spill: &Path) -> ToolRegistry {
    default_registry(ToolsConfig {
        spill_dir: spill.to_path_buf(),
        shell_output_cap: 2_000,
        ..ToolsConfig::default()
    })
}

async fn run(reg: &ToolRegistry, ws: &Path, input: Value) -> ToolOutput {
    reg.get("terminal").unwrap().execute(input, &ToolContext::detached(ws)).await
}

fn alive(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

#[tokio::test]
async fn runs_in_the_workspace_with_merged_ordered_output() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = tools(tmp.path());
    let out = run(&reg, tmp.path(), json!({"command": "pwd; echo one; echo two >&2; echo three"})).await;
    assert!(!out.is_error);
    let text = out.text_content();
    let real = tmp.path().canonicalize().unwrap();
    assert!(text.starts_with(&format!("{}\none\ntwo\nthree\n", real.display())), "{text}");
    assert!(text.ends_with("[exit code 0]"));
}

#[tokio::test]
async fn a_failing_command_reports_its_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(&tools(tmp.path()), tmp.path(), json!({"command": "echo oops >&2; exit 3"})).await;
    assert!(out.is_error);
    assert_eq!(out.text_content(), "oops\n[exit code 3]");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group_including_grandchildren() {
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("pid");
    let cmd = format!("sh -c 'sleep 60 & echo $! > {}; wait' ; echo never", pidfile.display());
    let out = run(&tools(tmp.path()), tmp.path(), json!({"command": cmd, "timeout": 1})).await;
    assert!(out.is_error && out.text_content().contains("timed out after 1s"), "{}", out.text_content());
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "the grandchild (pid {pid}) survived the timeout");
}

#[tokio::test]
async fn cancellation_kills_the_command_and_returns_output_so_far() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = tools(tmp.path());
    let cancel = CancellationToken::new();
    let ctx = ToolContext::detached(tmp.path()).with_cancel(cancel.clone());
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c2.cancel();
    });
    let out = reg.get("terminal").unwrap().execute(json!({"command": "echo before; sleep 60"}), &ctx).await;
    let text = out.text_content();
    assert!(out.is_error && text.starts_with("before\n") && text.contains("cancelled by the user"), "{text}");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_spills_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(&tools(tmp.path()), tmp.path(), json!({"command": "seq 1 20000"})).await;
    let text = out.text_content();
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..50]);
    assert!(text.contains("20000\n[exit code 0]"));
    assert!(text.len() < 3_000, "{}", text.len());
    let spill = text.split("is in ").nth(1).unwrap().split(" — ").next().unwrap();
    let full = std::fs::read_to_string(spill).unwrap();
    assert_eq!(full.lines().count(), 20000);
}

#[tokio::test]
async fn hard_denied_commands_never_run() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran");
    let cmd = format!("touch {} && rm -rf /", marker.display());
    let out = run(&tools(tmp.path()), tmp.path(), json!({"command": cmd})).await;
    assert!(out.is_error && out.text_content().contains("refused"), "{}", out.text_content());
    assert!(!marker.exists(), "nothing of a refused command runs");
}

#[tokio::test]
async fn invalid_input_is_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(&tools(tmp.path()), tmp.path(), json!({"cmd": "ls"})).await;
    assert!(out.is_error && out.text_content().contains("missing field `command`"), "{}", out.text_content());
    let out = run(&tools(tmp.path()), tmp.path(), json!({"command": "ls", "timeout": "soon"})).await;
    assert!(out.is_error && out.text_content().contains("invalid type"), "{}", out.text_content());
}

#[tokio::test]
async fn background_commands_can_be_read_and_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = tools(tmp.path());
    let ctx = ToolContext::detached(tmp.path());
    let pidfile = tmp.path().join("bgpid");
    let cmd = format!("echo started; sleep 60 & echo $! > {}; wait", pidfile.display());
    let out =
        reg.get("terminal").unwrap().execute(json!({"command": cmd, "run_in_background": true}), &ctx).await;
    let text = out.text_content();
    let id =
        text.split_whitespace().find(|w| w.starts_with("shell-")).unwrap().trim_end_matches('.').to_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = String::new();
    while !seen.contains("started") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        seen = reg.get("terminal_output").unwrap().execute(json!({"id": id}), &ctx).await.text_content();
    }
    assert!(seen.contains("started") && seen.contains("running"), "{seen}");
    let again = reg.get("terminal_output").unwrap().execute(json!({"id": id}), &ctx).await.text_content();
    assert!(again.contains("(no new output)"), "{again}");
    let killed = reg.get("kill_shell").unwrap().execute(json!({"id": id}), &ctx).await;
    assert!(!killed.is_error, "{}", killed.text_content());
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid));
    let gone = reg.get("terminal_output").unwrap().execute(json!({"id": id}), &ctx).await;
    assert!(gone.is_error && gone.text_content().contains("no background shell"));
}

#[tokio::test]
async fn background_commands_die_with_the_registry() {
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("bgpid");
    {
        let reg = tools(tmp.path());
        let cmd = format!("sleep 60 & echo $! > {}; wait", pidfile.display());
        let ctx = ToolContext::detached(tmp.path());
        reg.get("terminal").unwrap().execute(json!({"command": cmd, "run_in_background": true}), &ctx).await;
        // The shell makes the file before `echo` fills it: wait for a whole line.
        let deadline = Instant::now() + Duration::from_secs(5);
        let written = || std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'));
        while !written() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "background processes die when octo's tools are dropped");
}
