//! Nothing a command starts outlives octo, whichever signal ends it: a `setsid` daemon and the
//! foreground command's own child, after `SIGTERM` (what `timeout`, systemd and `docker stop`
//! send), `SIGHUP` and `SIGKILL`.

use super::common::{home_for, octo_std};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;
use std::time::{Duration, Instant};

/// Whether `pid` is a live process (not a zombie waiting to be reaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| !r.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

fn pid_in(path: &std::path::Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Starts a one-shot whose command leaves a daemon and waits on a child of its own, sends
/// `signal` to octo once both are up, and says which of the two are still alive afterwards.
async fn survivors_after(signal: &str) -> Vec<&'static str> {
    let llm = MockLlm::start().await;
    let daemon = "setsid sh -c 'echo $$ > daemon.pid; exec sleep 1003' > /dev/null 2>&1 &";
    let child = "sh -c 'echo $$ > child.pid; exec sleep 1004'";
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "terminal", json!({"command": format!("{daemon} {child}"), "timeout": 600}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("done").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let ws = home.workspace().to_path_buf();
    let mut c = octo_std(&home);
    c.args(["--permission-mode", "auto", "start things"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut octo = c.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while pid_in(&ws.join("daemon.pid")).is_none() || pid_in(&ws.join("child.pid")).is_none() {
        assert!(Instant::now() < deadline, "the command never started");
        assert!(octo.try_wait().unwrap().is_none(), "octo ended before the command was up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = std::process::Command::new("kill").args([signal, &octo.id().to_string()]).status().unwrap();
    assert!(status.success());
    tokio::task::spawn_blocking(move || octo.wait()).await.unwrap().unwrap();
    let mut alive = Vec::new();
    for (name, file) in [("the daemon", "daemon.pid"), ("the foreground child", "child.pid")] {
        let pid = pid_in(&ws.join(file)).unwrap();
        // Killing is asynchronous (a watcher does it after a SIGKILL): wait for it, boundedly.
        let deadline = Instant::now() + Duration::from_secs(20);
        while running(pid) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if running(pid) {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            alive.push(name);
        }
    }
    alive
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_outlives_octo_killed_with_sigkill() {
    assert_eq!(survivors_after("-KILL").await, Vec::<&str>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_outlives_octo_ended_with_sigterm() {
    assert_eq!(survivors_after("-TERM").await, Vec::<&str>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_outlives_octo_ended_with_sighup() {
    assert_eq!(survivors_after("-HUP").await, Vec::<&str>::new());
}
