//! The REPL in a pseudo-terminal: a streamed answer, slash commands, Ctrl-C and Ctrl-D.

#![cfg(unix)]
use super::common::{broken_then, home_for, leave, without_status_line};

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
        p.send_line("say hello, see @notes.txt and @missing.py").unwrap();
        p.exp_string("@missing.py is not a file in").unwrap();
        p.exp_string("Hello from the REPL.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/help").unwrap();
        p.exp_string("/permissions").unwrap();
        p.send_line("/mode plan").unwrap();
        p.exp_string("permission mode: plan").unwrap();
        p.send_line("/cost").unwrap();
        p.exp_string("1 turn \u{c2}\u{b7}").unwrap();
        // An unknown slash word is an error naming near matches; a path goes to the model.
        p.send_line("/compactx the widget").unwrap();
        p.exp_string("unknown command /compactx; did you mean /compact?").unwrap();
        p.send_line("/usr/bin/env is broken").unwrap();
        p.exp_string("Not a command.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_control('c').unwrap();
        p.exp_string("press Ctrl-C again").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    let body = &llm.request_bodies().await[0];
    let sent = body["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(sent.contains("<file path=\"notes.txt\">\nremember the milk"), "{sent}");
    let sent_as_text = llm.request_bodies().await.iter().any(|b| {
        b["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"] == "/usr/bin/env is broken"
    });
    assert!(sent_as_text, "a path went to the model as a message");
    assert!(
        !format!("{:?}", llm.request_bodies().await).contains("/compactx"),
        "the unknown command did not"
    );
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
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("wait a while").unwrap();
        p.exp_string("terminal sleep 30").unwrap();
        p.send_control('c').unwrap();
        p.exp_string("cancel").unwrap();
        p.exp_string("octo> ").unwrap();
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
        p.exp_string("write_file wants to write: ").unwrap();
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

/// An edit's approval shows the diff before the question, says "edit", and takes one key (no
/// Enter); a command's shows where it runs.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_approval_shows_the_diff_first_and_takes_one_key() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "toolu_1",
                    "edit_file",
                    json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}),
                )
                .sse(),
        ),
        Scripted::sse(
            Reply::new()
                .tool_use("toolu_2", "terminal", json!({"command": "echo checked\necho second-line"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Fixed.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("calc.py", "def add(a, b):\n    return a - b\n").unwrap();
    let cmd = octo(&home, &["--no-save"]);
    let ws = home.workspace();
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("fix add").unwrap();
        p.exp_string("edit_file wants to edit: ").unwrap();
        let before = p.exp_string("allow?").unwrap();
        assert!(before.contains("-    return a - b") && before.contains("+    return a + b"), "{before:?}");
        assert_eq!(
            std::fs::read_to_string(ws.join("calc.py")).unwrap(),
            "def add(a, b):\n    return a - b\n"
        );
        // One key, no Enter.
        p.send("y").unwrap();
        p.flush().unwrap();
        p.exp_string("terminal wants to run: echo checked").unwrap();
        // A command longer than its summary line is shown whole before the question.
        let before = p.exp_string("allow?").unwrap();
        assert!(before.contains(&format!("in {}", ws.display())), "{before:?}");
        assert!(before.contains("echo second-line"), "{before:?}");
        p.send("y").unwrap();
        p.flush().unwrap();
        p.exp_string("Fixed.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/exit").unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
}

/// A one-shot on a terminal asks for its approvals as the REPL does (with the diff first), and
/// the edit happens; it streams its answer and exits with 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_one_shot_on_a_terminal_asks_for_its_approvals() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "toolu_1",
                    "edit_file",
                    json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
                )
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Fixed `add`.").chunk_size(3).sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("calc.py", "def add(a, b):\n    return a - b\n").unwrap();
    let cmd = octo(&home, &["--no-save", "fix add"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        let before = p.exp_string("allow?").unwrap();
        assert!(
            before.contains("edit_file wants to edit") && before.contains("+    return a + b"),
            "{before:?}"
        );
        p.send("y").unwrap();
        p.flush().unwrap();
        p.exp_string("Fixed").unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b\n"
    );
}

/// A command's last lines show under it (all of them with /expand); a failure shows its exit
/// code and tail; a sandbox refusal is labelled as one.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn tool_output_tails_failures_and_sandbox_refusals_are_shown() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "toolu_1",
                    "terminal",
                    json!({"command": "printf 'one\\ntwo\\nthree\\nfour\\nfive\\nsix\\n'"}),
                )
                .sse(),
        ),
        Scripted::sse(
            Reply::new().tool_use("toolu_2", "terminal", json!({"command": "echo boom; exit 7"})).sse(),
        ),
        Scripted::sse(
            Reply::new().tool_use("toolu_3", "terminal", json!({"command": "echo x > ../escape.txt"})).sse(),
        ),
        Scripted::sse(Reply::new().text("Done.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo(&home, &["--no-save", "--permission-mode", "auto"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("go").unwrap();
        let shown = p.exp_string("Done.").unwrap();
        assert!(shown.contains("2 more lines") && shown.contains("    six"), "{shown:?}");
        assert!(!shown.contains("    two"), "only the tail: {shown:?}");
        assert!(shown.contains("terminal failed: exit code 7") && shown.contains("    boom"), "{shown:?}");
        assert!(shown.contains("the OS sandbox likely stopped it"), "{shown:?}");
        p.exp_string("octo> ").unwrap();
        p.send_line("/expand").unwrap();
        p.exp_string("exit code").unwrap();
        p.exp_string("octo> ").unwrap();
        // Ctrl-O on an empty line does the same.
        p.send_control('o').unwrap();
        p.exp_string("exit code").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/exit").unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
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
        leave(&mut p);
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
        p.exp_string("1 turn   mock").unwrap();
        p.send_line("/new").unwrap();
        p.exp_string("fresh conversation").unwrap();
        p.send_line("/resume 1").unwrap();
        p.exp_string("resumed session").unwrap();
        p.exp_string("(2 messages)").unwrap();
        // The last exchange, before the prompt.
        p.exp_string("you:  remember the number 7").unwrap();
        p.exp_string("octo: First answer.").unwrap();
        p.exp_string("octo> ").unwrap();
        leave(&mut p);
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
        p.exp_string("you:  remember the number 7").unwrap();
        p.exp_string("octo: First answer.").unwrap();
        p.exp_string("octo> ").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    // `octo -c` too.
    let cmd = octo(&home, &["-c"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("continuing session").unwrap();
        p.exp_string("you:  remember the number 7").unwrap();
        p.exp_string("octo: First answer.").unwrap();
        p.exp_string("octo> ").unwrap();
        leave(&mut p);
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
    without_status_line(&home);
    home.write("evil.txt", "\u{1b}[31mred\u{7}").unwrap();
    let cmd = octo(&home, &["--no-save", "--permission-mode", "accept-edits"]);
    let screen = tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("read it").unwrap();
        let seen = p.exp_string("octo> ").unwrap();
        leave(&mut p);
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
        leave(&mut p);
    })
    .await
    .unwrap();
    let sent = &llm.request_bodies().await[1];
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(last.to_string().contains("write the migration plan"), "{last}");
}

/// The approval answer shows once; `e` edits the command before it runs (the model is told);
/// Ctrl-C at the question refuses the call and cancels the turn.
#[tokio::test(flavor = "multi_thread")]
async fn approvals_echo_once_take_edits_and_ctrl_c() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("toolu_1", "terminal", json!({"command": "echo one"})).sse()),
        Scripted::sse(Reply::new().text("Ran it.").sse()),
        Scripted::sse(Reply::new().tool_use("toolu_2", "terminal", json!({"command": "echo three"})).sse()),
        Scripted::sse(Reply::new().text("unused").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo(&home, &["--no-save"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("run it").unwrap();
        p.exp_string("[e]dit (Esc: no)").unwrap();
        // One key: no Enter.
        p.send("e").unwrap();
        p.flush().unwrap();
        p.exp_string("run instead: ").unwrap();
        // Ctrl-U clears the pre-filled command.
        p.send_control('u').unwrap();
        p.send_line("echo two").unwrap();
        let shown = p.exp_string("Ran it.").unwrap();
        assert!(shown.contains("terminal echo two"), "{shown:?}");
        assert_eq!(shown.matches("allow?").count(), 0, "asked once: {shown:?}");
        p.exp_string("octo> ").unwrap();
        p.send_line("again").unwrap();
        p.exp_string("[e]dit (Esc: no)").unwrap();
        p.send_control('c').unwrap();
        let shown = p.exp_string("octo> ").unwrap();
        assert!(shown.contains("cancelled"), "{shown:?}");
        assert!(!shown.contains("terminal echo three"), "the refused call never ran: {shown:?}");
        leave(&mut p);
    })
    .await
    .unwrap();
    let bodies = llm.request_bodies().await;
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("the user edited this call") && result.contains("two"), "{result}");
    assert_eq!(bodies.len(), 3, "the cancelled turn asked nothing more");
}

/// `/todos`, the checklist as it changes, `/permissions allow`, `/mode build`, `/status`, and
/// arguments a command does not take.
#[tokio::test(flavor = "multi_thread")]
async fn commands_check_their_arguments_and_show_todos() {
    let llm = MockLlm::start().await;
    let todos = json!({"todos": [
        {"content": "write the test", "status": "completed"},
        {"content": "fix the parser", "status": "in_progress"},
        {"content": "update the docs", "status": "pending"}
    ]});
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("toolu_1", "todo_write", todos).sse()),
        Scripted::sse(Reply::new().text("Planned.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo(&home, &["--no-save"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("plan it").unwrap();
        let shown = p.exp_string("Planned.").unwrap();
        assert!(shown.contains("todo_write 3 items, 1 done"), "{shown:?}");
        let order: Vec<usize> = ["write the test", "fix the parser", "update the docs"]
            .iter()
            .map(|t| shown.find(t).unwrap_or_else(|| panic!("{t} in {shown:?}")))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "the checklist in order: {shown:?}");
        p.exp_string("octo> ").unwrap();
        p.send_line("/todos").unwrap();
        p.exp_string("write the test").unwrap();
        p.exp_string("update the docs").unwrap();
        p.send_line("/permissions auto-on").unwrap();
        p.exp_string("is not a permissions command").unwrap();
        p.exp_string("Usage: /permissions").unwrap();
        p.send_line("/permissions allow terminal(cargo test*)").unwrap();
        p.exp_string("added for this session").unwrap();
        p.send_line("/permissions").unwrap();
        p.exp_string("allow terminal(cargo test*)").unwrap();
        p.send_line("/permissions remove terminal(cargo test*)").unwrap();
        p.exp_string("removed 1 rule").unwrap();
        p.send_line("/plan now").unwrap();
        p.exp_string("/plan takes no argument").unwrap();
        p.send_line("/mode build").unwrap();
        p.exp_string("permission mode: default").unwrap();
        p.send_line("/mode sometimes").unwrap();
        p.exp_string("unknown permission mode").unwrap();
        p.send_line("/status").unwrap();
        p.exp_string("model: mock:claude-sonnet-4-5").unwrap();
        #[cfg(target_os = "linux")]
        p.exp_string("sandbox: workspace-write, no network (Landlock").unwrap();
        p.exp_string("context: ").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    assert_eq!(llm.request_bodies().await.len(), 2, "no command reached the model");
}

/// The REPL runs `/status` and `/mode plan` through the shared command vocabulary (the same
/// replies a chat or an editor gets), and refuses what it does not offer.
#[tokio::test(flavor = "multi_thread")]
async fn status_and_mode_plan_run_through_the_shared_commands() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let cmd = octo(&home, &["--no-save"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/mode plan").unwrap();
        p.exp_string("permission mode: plan").unwrap();
        // A mode other than the default stays in sight.
        p.exp_string("[plan] octo> ").unwrap();
        p.send_line("/status").unwrap();
        p.exp_string("model: mock:claude-sonnet-4-5").unwrap();
        p.exp_string("permission mode: plan").unwrap();
        p.exp_string("session: not saved yet").unwrap();
        p.exp_string("usage: 0 turns").unwrap();
        p.send_line("/stop").unwrap();
        p.exp_string("/stop is not available in the REPL").unwrap();
        p.send_line("/mode default").unwrap();
        p.exp_string("permission mode: default").unwrap();
        p.exp_string("\r\u{1b}[Kocto> ").unwrap();
        p.send_line("/exit").unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    assert!(llm.request_bodies().await.is_empty(), "no command reached the model");
}

/// `/rewind` undoes the last turn's file changes — a shell command's too — and forgets the
/// turn; alone it lets the user pick the turn; a file someone changed after the turn is named
/// and only overwritten when the user says so.
#[tokio::test(flavor = "multi_thread")]
async fn rewind_restores_files_and_respects_later_changes() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("toolu_1", "write_file", json!({"path": "new.txt", "content": "fresh"}))
                .tool_use(
                    "toolu_2",
                    "edit_file",
                    json!({"path": "b.txt", "old_string": "old", "new_string": "new"}),
                )
                .tool_use("toolu_3", "terminal", json!({"command": "touch made-by-shell"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Changed them.").sse()),
        Scripted::sse(
            Reply::new()
                .tool_use("toolu_4", "write_file", json!({"path": "c.txt", "content": "by octo"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Wrote c.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("b.txt", "old\n").unwrap();
    let ws = home.workspace().to_path_buf();
    let cmd = octo(&home, &["--no-save", "--permission-mode", "auto"]);
    let w = ws.clone();
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("change things").unwrap();
        p.exp_string("Changed them.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/rewind 2").unwrap();
        p.exp_string("rewind the last 1 turn (files and conversation)").unwrap();
        p.exp_string("delete (the turn created it)").unwrap();
        p.exp_string("made-by-shell").unwrap();
        p.exp_string("rewind? [y/N]").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("went back 1 turn").unwrap();
        assert!(!w.join("new.txt").exists());
        assert!(!w.join("made-by-shell").exists(), "the shell command's file is undone too");
        assert_eq!(std::fs::read_to_string(w.join("b.txt")).unwrap(), "old\n");
        p.send_line("write c").unwrap();
        p.exp_string("Wrote c.").unwrap();
        p.exp_string("octo> ").unwrap();
        std::fs::write(w.join("c.txt"), "edited by hand").unwrap();
        p.send_line("/rewind").unwrap();
        p.exp_string("1. write c").unwrap();
        p.exp_string("changed c.txt").unwrap();
        p.exp_string("turn [1]: ").unwrap();
        p.send_line("").unwrap();
        p.exp_string("[b] ").unwrap();
        p.send_line("").unwrap();
        p.exp_string("changed since the turn").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("overwrite it with the old content? [y/N]").unwrap();
        p.send_line("n").unwrap();
        p.exp_string("changed after the turn; left as it is").unwrap();
        p.send_line("/rewind x").unwrap();
        p.exp_string("Usage: /rewind [N]").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("c.txt")).unwrap(), "edited by hand");
    let last = &llm.request_bodies().await[2];
    assert_eq!(last["messages"].as_array().unwrap().len(), 1, "the rewound turn was forgotten: {last}");
}

/// `octo setup` on a terminal: provider, URL, key (hidden), a model from the server's list, a
/// test request, then the config and the key written; stopped halfway, nothing is.
#[tokio::test(flavor = "multi_thread")]
async fn the_setup_wizard_asks_tests_and_writes_or_writes_nothing() {
    use octo_testkit::wiremock::matchers::{method, path};
    use octo_testkit::wiremock::{Mock, ResponseTemplate};
    let llm = MockLlm::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": [{"id": "m1"}, {"id": "m2"}]})))
        .mount(llm.server())
        .await;
    let reply = json!({"id": "c", "object": "chat.completion", "model": "m2",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ready"}, "finish_reason": "stop"}]});
    llm.script_openai([Scripted::json(200, &reply)]).await;
    let home = TempHome::new().unwrap();
    let keys = home.home().join("k.json");
    let mut cmd = octo(&home, &["setup"]);
    cmd.env_remove("OCTO_NO_KEYRING").env("OCTO_KEYRING_FILE", &keys);
    let url = format!("{}/v1", llm.uri());
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        // The model that runs inside octo comes first, with its size and what it can do.
        #[cfg(feature = "local")]
        p.exp_regex(r"1\. local +qwen2\.5-coder-1\.5b, run inside octo: no key, no server; 1\.0 GB download, tool calls, 32k context \(recommended\)").unwrap();
        p.exp_string("provider (number or name): ").unwrap();
        p.send_line("custom").unwrap();
        p.exp_string("server URL").unwrap();
        p.send_line(&url).unwrap();
        p.exp_string("API key").unwrap();
        p.send_line("sk-typed").unwrap();
        p.exp_string("2. m2").unwrap();
        p.exp_string("model").unwrap();
        p.send_line("2").unwrap();
        p.exp_string("it answered: ready").unwrap();
        p.exp_string("set up custom:m2").unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    assert!(config.contains("default = \"custom:m2\""), "{config}");
    assert!(std::fs::read_to_string(&keys).unwrap().contains("sk-typed"));
    assert_eq!(llm.requests().await[0].header("authorization"), Some("Bearer sk-typed"));
    let cmd = octo(&home, &["setup"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("provider (number or name): ").unwrap();
        p.send_line("deepseek").unwrap();
        p.exp_string("API key").unwrap();
        p.send_control('c').unwrap();
        p.exp_eof().unwrap();
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(home.home().join("config.toml")).unwrap(),
        config,
        "nothing half-written"
    );
}

/// `@image.png` attaches an image block; a text file named `.png` and a 50 MB file are refused
/// with a reason; a turn longer than `notify_after` rings the bell.
#[tokio::test(flavor = "multi_thread")]
async fn images_are_attached_checked_and_long_turns_ring() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("A red square.").sse())]).await;
    let home = home_for(&llm);
    let config = home.home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.insert_str(0, "notify = \"bell\"\nnotify_after = 0\n");
    std::fs::write(&config, text).unwrap();
    // A 2×2 PNG.
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x02\x08\x02\x00\x00\x00\xfd\xd4\x9as\x00\x00\x00\x16IDATx\x9cc\xf8\xcf\xc0\xc0\xf0\x9f\x81\x81\x81\x81\xe1?\x03\x00\x1a\xeb\x03\xfd\xa7\x9f\x11\x1b\x00\x00\x00\x00IEND\xaeB`\x82";
    home.write("red.png", png).unwrap();
    home.write("fake.png", "just text").unwrap();
    let big = std::fs::File::create(home.workspace().join("big.png")).unwrap();
    big.set_len(50 * 1024 * 1024).unwrap();
    let cmd = octo(&home, &["--no-save"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("what is in @red.png and @fake.png and @big.png").unwrap();
        p.exp_string("could not attach fake.png: it is not a PNG, JPEG, GIF or WebP image").unwrap();
        p.exp_string("could not attach big.png: it is 50 MB").unwrap();
        p.exp_string("A red square.").unwrap();
        p.exp_string("\x07").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    let body = &llm.request_bodies().await[0];
    let content = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "the text and one image: {body}");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["source"]["media_type"], "image/png");
}

/// A project's MCP server is asked about at start and remembered; its tool's permission prompt
/// names it; its prompt runs as a slash command.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_mcp_server_is_approved_called_and_its_prompts_run() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("t1", "mcp__proj__add", json!({"a": 2, "b": 3})).sse()),
        Scripted::sse(Reply::new().text("The sum is 5.").sse()),
        Scripted::sse(Reply::new().text("Reviewed.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let bin = octo_testkit::mcp::server_bin();
    home.write(
        ".mcp.json",
        format!("{{\"mcpServers\": {{\"proj\": {{\"command\": \"{}\"}}}}}}", bin.display()),
    )
    .unwrap();
    let cmd = octo(&home, &["--no-save"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("configures the MCP server `proj`").unwrap();
        p.exp_string("[y/N]").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("add two and three").unwrap();
        p.exp_string("mcp__proj__add wants to use").unwrap();
        p.exp_string("allow?").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("The sum is 5.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/mcp").unwrap();
        p.exp_string("proj").unwrap();
        p.exp_string("mcp__proj__echo").unwrap();
        p.send_line("/mcp__proj__review").unwrap();
        p.exp_string("needs file").unwrap();
        p.send_line("/mcp__proj__review lib.rs").unwrap();
        p.exp_string("Reviewed.").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    let bodies = llm.request_bodies().await;
    assert!(bodies[1]["messages"].to_string().contains('5'));
    assert!(bodies[2]["messages"].to_string().contains("Please review lib.rs carefully."));
    // Remembered: the next start does not ask.
    let cmd = octo(&home, &["--no-save"]);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        let before = p.exp_string("octo> ").unwrap();
        assert!(!before.contains("configures the MCP server"), "{before:?}");
        leave(&mut p);
    })
    .await
    .unwrap();
}

/// A background sub-agent asks to write after its parent's turn has ended: the question waits
/// above the prompt, labelled with the child, and `/allow` answers it.
#[tokio::test(flavor = "multi_thread")]
async fn a_background_childs_request_waits_at_the_prompt_for_allow() {
    let llm = MockLlm::start().await;
    let bg = json!({"subagent_type": "general", "description": "write later", "prompt": "write late.txt", "background": true});
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("t1", "task", bg).sse()),
        Scripted::sse(Reply::new().text("Started it.").sse()),
    ])
    .await;
    llm.script_anthropic_matching(
        "You are a sub-agent of octo",
        [
            Scripted::sse(
                Reply::new()
                    .tool_use("c1", "write_file", json!({"path": "late.txt", "content": "late\n"}))
                    .sse(),
            )
            .delay(std::time::Duration::from_millis(500)),
            Scripted::sse(Reply::new().text("Wrote it.").sse()),
        ],
    )
    .await;
    let home = home_for(&llm);
    without_status_line(&home);
    let cmd = octo(&home, &["--no-save"]);
    let ws = home.workspace();
    let late = ws.join("late.txt");
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/allow").unwrap();
        p.exp_string("nothing is waiting for an answer").unwrap();
        p.send_line("write in the background").unwrap();
        p.exp_string("Started it.").unwrap();
        p.exp_string("waiting for you: [background sub-agent general-1]").unwrap();
        p.exp_string("/allow, /allow always or /deny").unwrap();
        assert!(!late.exists(), "not before the answer");
        p.send_line("/allow").unwrap();
        p.exp_string("allowed: [background sub-agent general-1]").unwrap();
        for _ in 0..100 {
            if late.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert_eq!(std::fs::read_to_string(&late).unwrap(), "late\n");
        leave(&mut p);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_restarted_mid_stream_is_on_the_screen_once() {
    let llm = MockLlm::start().await;
    let [broken, good] = broken_then("Hello world.");
    llm.script_anthropic([broken, good, Scripted::sse(Reply::new().text("A title").sse())]).await;
    let home = home_for(&llm);
    let mut cmd = octo(&home, &[]);
    cmd.env("OCTO_BIN", assert_cmd::cargo::cargo_bin("octo")).env("OCTO_MAX_ATTEMPTS", "3");
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c").arg("stty cols 80 rows 24; exec \"$OCTO_BIN\"");
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            sh.env(k, v);
        }
    }
    sh.current_dir(home.workspace());
    let screen = tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(sh, Some(20_000)).unwrap();
        let mut seen = p.exp_string("octo> ").unwrap() + "octo> ";
        p.send_line("say hello").unwrap();
        seen += &(p.exp_string("Hello world.").unwrap() + "Hello world.");
        seen += &(p.exp_string("octo> ").unwrap() + "octo> ");
        leave(&mut p);
        let size = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut term = vt100::Parser::new(size(24), size(80), 0);
        term.process(seen.as_bytes());
        (seen, term.screen().contents())
    })
    .await
    .unwrap();
    let (bytes, screen) = screen;
    // The broken part was on the screen, then taken off it before the retry's notice.
    let broken = bytes.find("Hello").unwrap();
    let erased =
        bytes.find("\r\x1b[J  the reply broke off").unwrap_or_else(|| panic!("not erased: {bytes:?}"));
    assert!(broken < erased && bytes.rfind("Hello world.").unwrap() > erased, "{bytes:?}");
    assert_eq!(screen.matches("Hello").count(), 1, "the broken reply is gone from the screen:\n{screen}");
    assert!(screen.contains("the reply broke off; starting it again"), "{screen}");
}
