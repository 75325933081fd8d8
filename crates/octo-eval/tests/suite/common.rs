//! Helpers: the binary in a temp home whose default endpoint is a scripted mock, octo's own task
//! set, and scripted answers that write a task's files.

#![allow(dead_code)]

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// octo's own task set, in the repository.
pub fn own_tasks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/tasks")
}

/// A home whose default model is `llm`.
pub fn home_for(llm: &MockLlm) -> TempHome {
    let home = TempHome::new().unwrap();
    point(&home, llm);
    home
}

/// Makes `llm` the default model of `home` (a mock's script cannot be replaced: a new run that
/// needs new answers gets a new mock).
pub fn point(home: &TempHome, llm: &MockLlm) {
    std::fs::write(home.home().join("config.toml"), llm.config_toml()).unwrap();
}

/// `octo-eval` in `home`'s workspace with a clean environment.
pub fn eval(home: &TempHome) -> assert_cmd::Command {
    let mut std = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo-eval"));
    home.isolate(&mut std);
    let mut c = assert_cmd::Command::from_std(std);
    // The Rust tasks' toolchain stays where it is installed (the home is a temp one).
    let real_home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    for (var, below) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
        c.env(var, std::env::var_os(var).map_or_else(|| real_home.join(below), PathBuf::from));
    }
    c
}

/// Runs `cmd` off the async threads (the mock answers in the test's runtime).
pub async fn run(mut cmd: assert_cmd::Command) -> assert_cmd::assert::Assert {
    tokio::task::spawn_blocking(move || cmd.assert()).await.unwrap()
}

/// A scripted answer writing every file below `dir` (relative paths kept), then one saying so.
pub fn writes(dir: &Path) -> Vec<Scripted> {
    let mut reply = Reply::new();
    let mut n = 0;
    for (rel, text) in files(dir) {
        n += 1;
        reply = reply.tool_use(format!("w{n}"), "write_file", json!({"path": rel, "content": text}));
    }
    vec![Scripted::sse(reply.usage(1_000, 200, 0, 0).sse()), Scripted::sse(Reply::new().text("Done.").sse())]
}

/// A scripted answer that changes nothing.
pub fn shrugs() -> Scripted {
    Scripted::sse(Reply::new().text("I could not work this out.").sse())
}

/// Every file below `dir`: (relative path, text).
pub fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The records of a results file (the header left out).
pub fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}
