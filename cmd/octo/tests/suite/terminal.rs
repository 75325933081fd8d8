//! The REPL's terminal manners in a pseudo-terminal: typing ahead while an answer streams,
//! Ctrl-L, wrapping to the terminal's width, and the recap of a resumed session.

#![cfg(unix)]
use super::common::home_for;

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use std::time::Duration;

/// The REPL (or `octo ARGS`) on a terminal `cols` wide.
fn octo_at(home: &TempHome, cols: u16, args: &str) -> std::process::Command {
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c").arg(format!("stty cols {cols} rows 40 echo icanon; exec \"$OCTO_BIN\" {args}"));
    sh.env("OCTO_BIN", assert_cmd::cargo::cargo_bin("octo"))
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(home.workspace());
    sh
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_during_an_answer_waits_in_the_input_line_and_is_sent_next() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("The first answer.").sse()).delay(Duration::from_millis(1500)),
        Scripted::sse(
            Reply::new().tool_use("t1", "terminal", serde_json::json!({"command": "sleep 2"})).sse(),
        ),
        Scripted::sse(Reply::new().text("The second answer.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo_at(&home, 100, "--no-save --permission-mode auto");
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("first question").unwrap();
        // The spinner names what the turn waits for.
        p.exp_string("waiting for the model").unwrap();
        p.send("so that typed ahead").unwrap();
        p.flush().unwrap();
        let before = p.exp_string("The first answer.").unwrap();
        assert!(!before.contains("typed ahead"), "echoed into the answer: {before:?}");
        p.exp_string("octo> ").unwrap();
        // The next prompt shows it in its input line; Enter sends it.
        p.exp_string("so that typed ahead").unwrap();
        p.send_line("").unwrap();
        p.exp_string("waiting for terminal to finish").unwrap();
        p.exp_string(" 1s").unwrap();
        p.exp_string("The second answer.").unwrap();
        p.exp_string("octo> ").unwrap();
        // Ctrl-L clears the screen at the prompt.
        p.send_control('l').unwrap();
        p.exp_string("\x1b[H").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    let bodies = llm.request_bodies().await;
    let sent = bodies.iter().any(|b| {
        b["messages"].as_array().unwrap().iter().any(|m| m["content"][0]["text"] == "so that typed ahead")
    });
    assert!(sent, "the typed-ahead line was sent as the next prompt");
}
