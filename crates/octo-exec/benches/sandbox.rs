//! `make bench`: what the OS sandbox adds to one command. Runs `true` through the shell many
//! times without a sandbox and with each policy, and reports the medians; also the one-time
//! probe the first sandboxed command pays.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used)]

use octo_exec::sandbox::{Mode, Policy, Sandbox};
use std::time::{Duration, Instant};

fn median(runs: usize, mut one: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            one();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn run(sandbox: Option<&Sandbox>, dir: &std::path::Path) {
    let mut cmd = match sandbox {
        Some(s) => s.shell_command("true").unwrap(),
        None => octo_exec::shell_command("true"),
    };
    assert!(cmd.current_dir(dir).status().unwrap().success());
}

fn main() {
    let runs = 300;
    let plain_dir = tempfile::tempdir().unwrap();
    let git_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(git_dir.path().join(".git")).unwrap();
    let plain = median(runs, || run(None, plain_dir.path()));
    println!("sandbox: `true` without a sandbox: {:.2} ms (median of {runs})", plain.as_secs_f64() * 1e3);
    let cases = [
        ("workspace-write", Policy::new(Mode::WorkspaceWrite, plain_dir.path())),
        ("workspace-write with .git (mount namespace)", Policy::new(Mode::WorkspaceWrite, git_dir.path())),
        (
            "workspace-write with network",
            Policy { network: true, ..Policy::new(Mode::WorkspaceWrite, plain_dir.path()) },
        ),
        ("read-only", Policy::new(Mode::ReadOnly, plain_dir.path())),
        (
            "workspace-write without namespaces (seccomp supervisor)",
            Policy { simulate_no_namespaces: true, ..Policy::new(Mode::WorkspaceWrite, plain_dir.path()) },
        ),
    ];
    for (name, policy) in cases {
        let dir = policy.workspace.clone();
        let t = Instant::now();
        let sandbox = Sandbox::new(policy);
        let made = t.elapsed();
        if !sandbox.is_active() {
            println!("sandbox: {name}: unavailable here ({})", sandbox.describe());
            continue;
        }
        let t = Instant::now();
        run(Some(&sandbox), &dir);
        let first = t.elapsed();
        let m = median(runs, || run(Some(&sandbox), &dir));
        println!(
            "sandbox: {name}: {:.2} ms (+{:.2} ms); set-up {:.2} ms, first command {:.2} ms [{}]",
            m.as_secs_f64() * 1e3,
            (m.as_secs_f64() - plain.as_secs_f64()) * 1e3,
            made.as_secs_f64() * 1e3,
            first.as_secs_f64() * 1e3,
            sandbox.describe()
        );
    }
    supervised_calls(plain_dir.path());
}

/// What the supervisor adds to each call it checks: 5,000 `chmod`s inside the workspace from one
/// Python process, unconfined and in the fallback.
fn supervised_calls(dir: &std::path::Path) {
    const CALLS: u32 = 5000;
    let script = format!(
        "import os, time\nopen('f', 'w').close()\nt = time.perf_counter()\nfor i in range({CALLS}): os.chmod('f', 0o644)\nprint(time.perf_counter() - t)\n"
    );
    std::fs::write(dir.join("chmods.py"), script).unwrap();
    let time = |mut cmd: std::process::Command| -> Option<f64> {
        let out = cmd.current_dir(dir).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    let Some(open) = time(octo_exec::shell_command("python3 chmods.py")) else {
        println!("sandbox: a supervised call: no python3 here");
        return;
    };
    let fallback =
        Sandbox::new(Policy { simulate_no_namespaces: true, ..Policy::new(Mode::WorkspaceWrite, dir) });
    if !fallback.describe().contains("checked by a seccomp supervisor") {
        println!("sandbox: a supervised call: no supervisor here ({})", fallback.describe());
        return;
    }
    let Some(guarded) = time(fallback.shell_command("python3 chmods.py").unwrap()) else {
        println!("sandbox: a supervised call: the run in the fallback failed");
        return;
    };
    println!(
        "sandbox: a chmod checked by the seccomp supervisor: {:.1} us (unconfined {:.1} us; {CALLS} calls)",
        guarded / f64::from(CALLS) * 1e6,
        open / f64::from(CALLS) * 1e6
    );
}
