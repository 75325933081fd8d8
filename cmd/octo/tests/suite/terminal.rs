//! The REPL's terminal manners in a pseudo-terminal: typing ahead while an answer streams,
//! Ctrl-L, wrapping to the terminal's width, the recap of a resumed session, the status line and
//! `/init`'s question.

#![cfg(unix)]
use super::common::{home_for, leave, without_status_line};

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
        leave(&mut p);
    })
    .await
    .unwrap();
    let bodies = llm.request_bodies().await;
    let sent = bodies.iter().any(|b| {
        b["messages"].as_array().unwrap().iter().any(|m| m["content"][0]["text"] == "so that typed ahead")
    });
    assert!(sent, "the typed-ahead line was sent as the next prompt");
}

/// What the terminal shows of `raw` (as rexpect reads it, a char per byte): UTF-8 decoded,
/// escape sequences removed, a carriage return starting its line over, one entry per line.
fn shown_lines(raw: &str) -> Vec<String> {
    let bytes: Vec<u8> = raw.chars().map(|c| c as u32 as u8).collect();
    let text = String::from_utf8_lossy(&bytes);
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next_if_eq(&'[').is_some() {
                while chars.next().is_some_and(|c| !('\x40'..='\x7e').contains(&c)) {}
            } else {
                chars.next();
            }
        } else if c == '\r' {
            // Back to the line's start: what follows overwrites it (after an erase).
            if chars.peek() != Some(&'\n') {
                plain.truncate(plain.rfind('\n').map_or(0, |i| i + 1));
            }
        } else {
            plain.push(c);
        }
    }
    plain.lines().map(str::to_owned).collect()
}

fn words(lines: &[String]) -> Vec<String> {
    lines.iter().flat_map(|l| l.split_whitespace().map(str::to_owned)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn help_lists_and_answers_fit_60_80_and_120_columns() {
    let paragraph = "Wrapping matters because a terminal breaks a long line wherever its edge falls, \
                     in the middle of identifiers like configuration_loader or words such as \
                     unbelievably, and that makes an answer hard to read.";
    let item =
        "- a list item whose text is long enough that it has to continue on a second line under itself";
    for cols in [60u16, 80, 120] {
        let llm = MockLlm::start().await;
        llm.script_anthropic([
            Scripted::sse(Reply::new().text(format!("{paragraph}\n\n{item}\n")).chunk_size(7).sse()),
            Scripted::sse(Reply::new().text("A title").sse()),
        ])
        .await;
        let home = home_for(&llm);
        without_status_line(&home);
        let cmd = octo_at(&home, cols, "");
        let (help, answer, history) = tokio::task::spawn_blocking(move || {
            let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
            p.exp_string("octo> ").unwrap();
            p.send_line("/help").unwrap();
            let help = p.exp_string("clears the screen").unwrap();
            p.exp_string("octo> ").unwrap();
            p.send_line("explain wrapping").unwrap();
            let answer = p.exp_string("itself").unwrap() + "itself";
            p.exp_string("octo> ").unwrap();
            p.send_line("/history").unwrap();
            let history = p.exp_string("to continue one)").unwrap();
            leave(&mut p);
            (help, answer, history)
        })
        .await
        .unwrap();
        let width = usize::from(cols);
        for (what, raw) in [("help", &help), ("answer", &answer), ("history", &history)] {
            for l in shown_lines(raw) {
                assert!(l.chars().count() <= width, "{what} at {cols}: a line past the edge: {l:?}");
            }
        }
        let help = shown_lines(&help);
        assert_eq!(help.iter().filter(|l| l.contains("/status ")).count(), 1, "{help:?}");
        for l in help.iter().filter(|l| !l.trim().is_empty() && !l.contains("/help")) {
            assert!(l.starts_with("  "), "at {cols}: help wrapped to column 0: {l:?}");
        }
        // Every word of the answer arrives whole, in order.
        let answer = shown_lines(&answer);
        let got = words(&answer);
        for expected in [paragraph, item] {
            let want: Vec<String> = expected.split_whitespace().map(str::to_owned).collect();
            let want = &want[1..]; // the list marker is drawn as a bullet
            assert!(
                got.windows(want.len()).any(|w| w == want),
                "at {cols}: {expected:?} not whole in {answer:?}"
            );
        }
        let continued = answer.iter().position(|l| l.contains("a list item")).and_then(|i| answer.get(i + 1));
        if let Some(next) = continued.filter(|n| !n.trim().is_empty()) {
            assert!(
                next.starts_with("  ") && !next.starts_with("   "),
                "at {cols}: hanging indent: {next:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_status_line_sits_under_the_input_and_is_cut_to_the_width() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("The answer.").usage(40_000, 100, 0, 0).sse())
            .delay(Duration::from_millis(800)),
        Scripted::sse(Reply::new().text("A title").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let cmd = octo_at(&home, 80, "--no-save");
    let screen = tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        // rexpect reads bytes as Latin-1: the `·` between the parts is matched around.
        p.exp_string("mock:claude-sonnet-4-5 ").unwrap();
        p.exp_string("0% context ").unwrap();
        p.exp_string("$0.00 ").unwrap();
        p.send_line("hello").unwrap();
        // Typed while the answer streams: held for the next prompt, under which the status line
        // has the turn's figures.
        std::thread::sleep(Duration::from_millis(200));
        p.send("next").unwrap();
        p.flush().unwrap();
        p.exp_string("The answer.").unwrap();
        let mut screen = p.exp_string("20% context ").unwrap();
        screen += &p.exp_string("$0.12 ").unwrap();
        // What was typed during the answer is in the new input line.
        p.exp_string("next").unwrap();
        p.send_control('u').unwrap();
        leave(&mut p);
        screen
    })
    .await
    .unwrap();
    for l in &shown_lines(&screen) {
        assert!(l.chars().count() <= 80, "a line past the edge: {l:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_codes_status_line_command_gets_its_json_and_a_hanging_one_never_blocks() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    std::fs::create_dir_all(home.home().join(".claude")).unwrap();
    let script = home.home().join("statusline.sh");
    std::fs::write(
        &script,
        "input=$(cat); printf '%s' \"$input\" > \"$HOME/status-input.json\"; printf '\\033[34m[%s]\\033[0m ready\\nsecond line\\n' \"$(printf '%s' \"$input\" | grep -o '\"display_name\":\"[^\"]*\"' | cut -d'\"' -f4)\"\n",
    )
    .unwrap();
    std::fs::write(
        home.home().join(".claude/settings.json"),
        format!(r#"{{"statusLine": {{"type": "command", "command": "sh {}"}}}}"#, script.display()),
    )
    .unwrap();
    let mut cmd = octo_at(&home, 100, "--no-save");
    cmd.env("HOME", home.home());
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("[mock:claude-sonnet-4-5] ready").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.home().join("status-input.json")).unwrap())
            .unwrap();
    assert_eq!(input["model"]["display_name"], "mock:claude-sonnet-4-5");
    assert_eq!(input["model"]["id"], "claude-sonnet-4-5");
    assert_eq!(input["workspace"]["current_dir"], home.workspace().display().to_string());
    assert_eq!(input["cost"]["total_cost_usd"], 0.0);
    assert_eq!(input["context_window"]["context_window_size"], 200_000);
    // A command that hangs: the prompt takes input at once and the line says what happened.
    std::fs::write(&script, "sleep 30\n").unwrap();
    let mut cmd = octo_at(&home, 100, "--no-save");
    cmd.env("HOME", home.home());
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send("typed").unwrap();
        p.flush().unwrap();
        p.exp_string("d").unwrap();
        // The line is redrawn (and the status line with it) at the next key.
        std::thread::sleep(Duration::from_millis(1_700));
        p.send(" more").unwrap();
        p.flush().unwrap();
        p.exp_string("took over 1500 ms").unwrap();
        p.send_control('u').unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn init_in_the_repl_writes_agents_md_only_on_a_yes() {
    let llm = MockLlm::start().await;
    let file = "# AGENTS.md\n\n- Test: `make test`\n";
    let answer = || Scripted::sse(Reply::new().text(format!("Surveyed.\n```markdown\n{file}```")).sse());
    // Any title request gets the same answer; it changes nothing here.
    llm.script_anthropic([answer(), answer(), answer(), answer()]).await;
    let home = home_for(&llm);
    std::fs::write(home.workspace().join("Makefile"), "test:\n\ttrue\n").unwrap();
    let cmd = octo_at(&home, 100, "--no-save");
    let agents = home.workspace().join("AGENTS.md");
    let seen = agents.clone();
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.send_line("/init").unwrap();
        p.exp_string("+- Test: `make test`").unwrap();
        p.exp_string("write AGENTS.md? [y/N]").unwrap();
        p.send_line("n").unwrap();
        p.exp_string("nothing written").unwrap();
        assert!(!seen.exists(), "a no writes nothing");
        p.send_line("/init").unwrap();
        p.exp_string("write AGENTS.md? [y/N]").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("wrote ").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&agents).unwrap(), file);
}
