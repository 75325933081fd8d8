//! Helpers shared by the binary's tests.

#![allow(dead_code)]

use octo_testkit::{MockLlm, TempHome};

/// `octo` in `home`'s workspace with a clean environment: its home, no keyring, one attempt per
/// request, the mock's key, no colour.
pub fn octo_std(home: &TempHome) -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    home.isolate(&mut c);
    c
}

/// [`octo_std`] as an `assert_cmd` command.
pub fn octo(home: &TempHome) -> assert_cmd::Command {
    assert_cmd::Command::from_std(octo_std(home))
}

/// A home whose config points the default endpoint `mock` at `llm` (Anthropic protocol, key in
/// `MOCK_KEY`).
pub fn home_for(llm: &MockLlm) -> TempHome {
    let home = TempHome::new().unwrap_or_else(|e| panic!("temp home: {e}"));
    std::fs::write(home.home().join("config.toml"), llm.config_toml())
        .unwrap_or_else(|e| panic!("config: {e}"));
    home
}

/// Runs `cmd` to its end off the async threads (a mock server in the test's runtime answers it).
pub async fn assert_async(mut cmd: assert_cmd::Command) -> assert_cmd::assert::Assert {
    tokio::task::spawn_blocking(move || cmd.assert()).await.unwrap_or_else(|e| panic!("join: {e}"))
}

/// Leaves the REPL with Ctrl-D and waits for the end. A Ctrl-D that reaches the terminal while
/// the line editor is not reading (the line discipline is cooked between prompts) arrives as a
/// NUL byte the editor ignores, as it would for a person typing ahead; so the key is pressed
/// again, as that person would, until octo is gone.
pub fn leave(p: &mut rexpect::session::PtySession) {
    for _ in 0..4 {
        p.send_control('d').unwrap_or_else(|e| panic!("send Ctrl-D: {e}"));
        for _ in 0..30 {
            match p.process().status() {
                Some(rexpect::process::WaitStatus::StillAlive) | None => {}
                Some(_) => return drain(p),
            }
            // Keep the output flowing, so a full pty never blocks octo.
            while p.try_read().is_some() {}
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    drain(p);
}

fn drain(p: &mut rexpect::session::PtySession) {
    p.exp_eof().unwrap_or_else(|e| panic!("octo did not end: {e}"));
}

/// Turns the REPL's status line off in `home` (for tests that read the screen line by line: the
/// line editor redraws the input line with the status line under it at every key).
pub fn without_status_line(home: &TempHome) {
    let path = home.home().join("config.toml");
    let config = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("config: {e}"));
    std::fs::write(&path, format!("{config}\n[status_line]\nenabled = false\n"))
        .unwrap_or_else(|e| panic!("config: {e}"));
}

/// A reply that broke off mid-stream (an overloaded error after part of its text).
pub fn broken_then(answer: &str) -> [octo_testkit::Scripted; 2] {
    let broken = octo_testkit::anthropic::Reply::new().text("Hello wor").sse_truncated()
        + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n";
    [
        octo_testkit::Scripted::sse(broken),
        octo_testkit::Scripted::sse(octo_testkit::anthropic::Reply::new().text(answer).sse()),
    ]
}
