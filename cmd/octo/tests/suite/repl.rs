//! The REPL in a pseudo-terminal: a streamed answer, slash commands, Ctrl-C and Ctrl-D.

#![cfg(unix)]
use super::common::home_for;

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use serde_json::json;

fn octo(home: &TempHome, args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    cmd.args(args)
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(home.workspace());
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_with_slash_commands_then_ctrl_d() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("Hello from the REPL.").chunk_size(4).sse()),
        // One reply goes to the background title request, one to the next prompt.
        Scripted::sse(Reply::new().text("Not a command.").sse()),
        Scripted::sse(Reply::new().text("Not a command.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("notes.txt", "remember the milk").unwrap();
    let cmd = octo(&home, &[]);
    let history = home.home().join("history");
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("/help for commands").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("say hello, see @notes.txt").unwrap();
        p.exp_string("Hello from the REPL.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/help").unwrap();
        p.exp_string("/permissions").unwrap();
        p.send_line("/mode plan").unwrap();
        p.exp_string("permission mode: plan").unwrap();
        p.send_line("/cost").unwrap();
        p.exp_string("1 turns").unwrap();
        // An unknown slash word is a message for the model, not an error.
        p.send_line("/compactx the widget").unwrap();
        p.exp_string("Not a command.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_control('c').unwrap();
        p.exp_string("press Ctrl-C again").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    let body = &llm.request_bodies().await[0];
    let sent = body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(sent.contains("<file path=\"notes.txt\">\nremember the milk"), "{sent}");
    let sent_as_text = llm.request_bodies().await.iter().any(|b| {
        b["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"] == "/compactx the widget"
    });
    assert!(sent_as_text, "the unknown command went to the model as a message");
    assert!(std::fs::read_to_string(history).unwrap().contains("say hello"));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_a_running_command_and_a_second_on_an_empty_line_exits() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(
        Reply::new().tool_use("toolu_1", "terminal", json!({"command": "sleep 30"})).sse(),
    )])
    .await;
    let home = home_for(&llm);
    let cmd = octo(&home, &["--permission-mode", "auto"]);
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("wait a while").unwrap();
        p.exp_string("terminal sleep 30").unwrap();
        p.send_control('c').unwrap();
        p.exp_string("cancel").unwrap();
        p.exp_string("octo> ").unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(15));
        p.send_control('c').unwrap();
        p.exp_string("press Ctrl-C again").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_control('c').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn approvals_are_asked_inline() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("toolu_1", "write_file", json!({"path": "a.txt", "content": "A"})).sse(),
        ),
        Scripted::sse(Reply::new().text("Wrote it.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo(&home, &[]);
    let ws = home.workspace();
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("write a.txt").unwrap();
        p.exp_string("write_file wants to run: ").unwrap();
        p.exp_string("allow?").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("Wrote it.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/exit").unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "A");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_very_narrow_terminal_still_works() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(
        Reply::new().text("# Heading\nA long answer line that is much wider than the terminal.\n").sse(),
    )])
    .await;
    let home = home_for(&llm);
    let bin = assert_cmd::cargo::cargo_bin("octo");
    let mut cmd = octo(&home, &[]);
    cmd.env("OCTO_BIN", bin);
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c").arg("stty cols 12 rows 4; exec \"$OCTO_BIN\"");
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            sh.env(k, v);
        }
    }
    sh.current_dir(home.workspace());
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(sh, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("please write a long answer for me").unwrap();
        p.exp_string("much wider than").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn history_and_resume_in_the_repl() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("First answer.").sse()),
        Scripted::sse(Reply::new().text("Title").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo(&home, &[]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("remember the number 7").unwrap();
        p.exp_string("First answer.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/history").unwrap();
        p.exp_string("1 turns").unwrap();
        p.send_line("/new").unwrap();
        p.exp_string("fresh conversation").unwrap();
        p.send_line("/resume 1").unwrap();
        p.exp_string("resumed session").unwrap();
        p.exp_string("(2 messages)").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    // `octo -r` starts with the numbered list.
    let cmd = octo(&home, &["-r"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("1. ").unwrap();
        p.exp_string("resume which?").unwrap();
        p.send_line("1").unwrap();
        p.exp_string("(2 messages)").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_from_the_model_and_tools_are_shown_inert() {
    let hostile = "Done.\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{1b}]0;pwned\u{7} ok";
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "read_file", json!({"path": "evil.txt"}))
                .tool_use(
                    "t2",
                    "write_file",
                    json!({"path": "evil.txt", "content": "\u{1b}[8mhidden\u{1b}]8;;http://x\u{7}\n"}),
                )
                .sse(),
        ),
        Scripted::sse(Reply::new().text(hostile).chunk_size(3).sse()),
        Scripted::sse(Reply::new().text("title").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("evil.txt", "\u{1b}[31mred\u{7}").unwrap();
    let cmd = octo(&home, &["--no-save", "--permission-mode", "accept-edits"]);
    let screen = tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("read it").unwrap();
        let seen = p.exp_string("octo> ").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
        seen
    })
    .await
    .unwrap();
    assert!(screen.contains("Done.^[]52;c;ZXZpbA==^G^[[2J^[]0;pwned^G ok"), "{screen:?}");
    assert!(
        screen.contains("-^[[31mred^G") && screen.contains("+^[[8mhidden^[]8;;http://x^G"),
        "the diff: {screen:?}"
    );
    for raw in ["\u{1b}]52", "\u{1b}[2J", "\u{1b}]0;", "\u{7}", "\u{1b}[8m", "\u{1b}]8;", "\u{1b}[31m"] {
        assert!(!screen.contains(raw), "a raw {raw:?} reached the terminal: {screen:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuing_offers_to_send_an_unanswered_prompt_again() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("never seen").sse()).delay(std::time::Duration::from_secs(60)),
        Scripted::sse(Reply::new().text("Answered at last.").sse()),
        Scripted::sse(Reply::new().text("A Title").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut first = octo(&home, &["write the migration plan"]);
    first
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = first.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while llm.requests().await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "octo never sent its request");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let cmd = octo(&home, &["-c"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("never answered").unwrap();
        p.exp_string("> write the migration plan").unwrap();
        p.exp_string("send it again? [Y/n]").unwrap();
        p.send_line("").unwrap();
        p.exp_string("Answered at last.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_control('d').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    let sent = &llm.request_bodies().await[1];
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(last.to_string().contains("write the migration plan"), "{last}");
}
