//! Skills and custom commands from the binary: `/name args` as a one-shot prompt and in the REPL
//! (a pseudo-terminal), `/skills`, completion, and the unknown-command error.

use super::common::{assert_async, home_for, leave, octo};

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use predicates::prelude::*;

/// A skill in the user's `~/.claude/skills` and a command in the project's `.claude/commands`,
/// as Claude Code users have them.
fn claude_files(home: &TempHome) {
    let skill = home.home().join(".claude/skills/review");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: review\ndescription: Reviews a file for bugs\nargument-hint: [file]\nallowed-tools: Read, Grep\n---\nReview $ARGUMENTS for bugs; run scripts/check.sh if unsure.\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/check.sh"), "echo ok\n").unwrap();
    home.write(
        ".claude/commands/gitstat.md",
        "---\ndescription: Summarize\n---\nStatus: !`touch seen && echo hi-there`\nSummarize for $ARGUMENTS.\n",
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_runs_as_a_one_shot_prompt() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("Reviewed.").sse())]).await;
    let home = home_for(&llm);
    claude_files(&home);
    let mut c = octo(&home);
    c.args(["--no-save", "/review src/lib.rs"]);
    assert_async(c).await.success().stdout(predicate::str::contains("Reviewed."));
    let body = &llm.request_bodies().await[0];
    let sent = body["messages"][0]["content"].to_string();
    assert!(
        sent.contains("<skill name=\\\"review\\\">") && sent.contains("Review src/lib.rs for bugs"),
        "{sent}"
    );
    let system = body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("- review: Reviews a file for bugs"), "{system}");
}

#[tokio::test(flavor = "multi_thread")]
async fn headless_commands_stop_at_a_question_and_unknown_ones_are_errors() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    claude_files(&home);
    let mut c = octo(&home);
    c.args(["--no-save", "/gitstat me"]);
    assert_async(c)
        .await
        .code(1)
        .stderr(predicate::str::contains("would run `touch seen && echo hi-there`"))
        .stderr(predicate::str::contains("nobody can answer in a headless run"));
    let mut c = octo(&home);
    c.args(["--no-save", "/reviw x"]);
    assert_async(c)
        .await
        .code(2)
        .stderr(predicate::str::contains("unknown command /reviw; did you mean /review?"));
    assert!(llm.request_bodies().await.is_empty(), "nothing reached the model");
    // With the mode that runs commands, the command's output is in the prompt.
    llm.script_anthropic([Scripted::sse(Reply::new().text("Summarized.").sse())]).await;
    let mut c = octo(&home);
    c.args(["--no-save", "--permission-mode", "auto", "/gitstat me"]);
    assert_async(c).await.success().stdout(predicate::str::contains("Summarized."));
    let sent = llm.request_bodies().await[0]["messages"][0]["content"].to_string();
    assert!(sent.contains("Status: hi-there") && sent.contains("Summarize for me."), "{sent}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn skills_and_commands_in_the_repl() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("Reviewed.").sse()),
        Scripted::sse(Reply::new().text("Summarized.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    claude_files(&home);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    cmd.args(["--no-save"])
        .env("HOME", home.home())
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(home.workspace());
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/skills").unwrap();
        // Sorted by name (the dash between name and description is not ASCII; rexpect reads Latin-1).
        p.exp_string("/gitstat ").unwrap();
        p.exp_string(" Summarize (command, project .claude/commands").unwrap();
        p.exp_string("/review [file] ").unwrap();
        p.exp_string(" Reviews a file for bugs (skill, ~/.claude/skills)").unwrap();
        p.send_line("/reviw now").unwrap();
        p.exp_string("did you mean /review?").unwrap();
        // Tab completes the skill's name.
        p.send("/revi\t").unwrap();
        p.send_line("src/lib.rs").unwrap();
        p.exp_string("Reviewed.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/gitstat me").unwrap();
        p.exp_string("wants to run `touch seen && echo hi-there`").unwrap();
        p.exp_string("allow? [y/N]").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("Summarized.").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/usr/bin/env is a path, not a command").unwrap();
        p.exp_string("octo> ").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    let bodies = llm.request_bodies().await;
    let sent = |i: usize| bodies[i]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(sent(0).contains("Review src/lib.rs for bugs"), "{}", sent(0));
    assert!(sent(1).contains("Status: hi-there") && sent(1).contains("Summarize for me."), "{}", sent(1));
    assert!(sent(2).contains("/usr/bin/env is a path"), "{}", sent(2));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn project_hooks_are_asked_about_once_and_listed_with_agents() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    home.write(
        ".claude/settings.json",
        r#"{"hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .unwrap();
    let spawn = |home: &TempHome| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
        cmd.args(["--no-save"])
            .env("HOME", home.home())
            .env("OCTO_HOME", home.home())
            .env("OCTO_NO_KEYRING", "1")
            .env("MOCK_KEY", "sk-mock")
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .current_dir(home.workspace());
        cmd
    };
    let cmd = spawn(&home);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        p.exp_string("this project configures hooks").unwrap();
        p.exp_string("PostToolUse Edit|Write: true").unwrap();
        p.exp_string("run them").unwrap();
        p.send_line("y").unwrap();
        p.exp_string("the project's hooks are on").unwrap();
        p.exp_string("octo> ").unwrap();
        p.send_line("/hooks").unwrap();
        p.exp_string("PostToolUse [Edit|Write]: true").unwrap();
        p.send_line("/agents").unwrap();
        p.exp_string("explore (built-in)").unwrap();
        p.exp_string("no sub-agents have run yet").unwrap();
        leave(&mut p);
    })
    .await
    .unwrap();
    // Trusted once: the next start does not ask.
    let cmd = spawn(&home);
    tokio::task::spawn_blocking(move || {
        let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
        let before = p.exp_string("octo> ").unwrap();
        assert!(!before.contains("configures hooks"), "{before:?}");
        leave(&mut p);
    })
    .await
    .unwrap();
}

/// A Claude Code plugin folder with a command and an MCP server (octo's test server, named with
/// `${CLAUDE_PLUGIN_ROOT}` through a link inside the plugin).
fn plugin_folder(dir: &std::path::Path) {
    std::fs::create_dir_all(dir.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(dir.join("commands")).unwrap();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(dir.join(".claude-plugin/plugin.json"), r#"{"name": "kit", "version": "0.1.0"}"#).unwrap();
    std::fs::write(
        dir.join("commands/hello.md"),
        "---\ndescription: Greets someone\n---\nGreet $ARGUMENTS.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(octo_testkit::mcp::server_bin(), dir.join("bin/server")).unwrap();
    std::fs::write(
        dir.join(".mcp.json"),
        r#"{"mcpServers": {"t": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/server", "startupTimeout": 20}}}"#,
    )
    .unwrap();
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_installed_listed_used_and_disabled() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("t1", "mcp__plugin_kit_t__add", serde_json::json!({"a": 2, "b": 40})).sse(),
        ),
        Scripted::sse(Reply::new().text("Hi, Ada: 42.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let src = home.home().join("src/kit");
    plugin_folder(&src);
    let mut c = octo(&home);
    c.args(["plugin", "install", src.to_str().unwrap()]);
    assert_async(c).await.success().stderr(predicate::str::contains("installed the plugin kit"));
    let mut c = octo(&home);
    c.args(["plugin", "list"]);
    assert_async(c).await.success().stdout(
        predicate::str::contains("on   kit").and(predicate::str::contains("1 command, 1 MCP server")),
    );
    let mut c = octo(&home);
    c.args(["--no-save", "--permission-mode", "auto", "/hello Ada"]);
    assert_async(c).await.success().stdout(predicate::str::contains("Hi, Ada: 42."));
    let bodies = llm.request_bodies().await;
    assert!(
        bodies[0]["messages"][0]["content"].to_string().contains("Greet Ada."),
        "{}",
        bodies[0]["messages"]
    );
    assert!(bodies[1]["messages"].to_string().contains("42"), "the plugin's server answered");
    let mut c = octo(&home);
    c.args(["plugin", "disable", "kit"]);
    assert_async(c).await.success();
    let mut c = octo(&home);
    c.args(["plugin", "list"]);
    assert_async(c).await.success().stdout(predicate::str::contains("off  kit"));
    let mut c = octo(&home);
    c.args(["--no-save", "/hello Ada"]);
    assert_async(c).await.code(2);
    let mut c = octo(&home);
    c.args(["plugin", "install", home.workspace().to_str().unwrap()]);
    assert_async(c).await.code(1).stderr(predicate::str::contains("no .claude-plugin/plugin.json"));
}

#[tokio::test(flavor = "multi_thread")]
async fn octo_trust_lists_what_a_project_brings_and_yes_lets_headless_runs_use_it() {
    let llm = MockLlm::start().await;
    let call = || {
        Scripted::sse(
            Reply::new().tool_use("t1", "terminal", serde_json::json!({"command": "echo trusted-run"})).sse(),
        )
    };
    llm.script_anthropic([
        call(),
        Scripted::sse(Reply::new().text("Done.").sse()),
        call(),
        Scripted::sse(Reply::new().text("Done.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write(".claude/settings.json", r#"{"permissions": {"allow": ["Bash(echo:*)"]}}"#).unwrap();
    home.write(
        ".mcp.json",
        r#"{"mcpServers": {"docs": {"command": "/bin/true", "args": ["server.sh\nocto: nothing waits"], "env": {"BASH_ENV": "./x"}}}}"#,
    )
    .unwrap();
    let json = ["--no-save", "-p", "--output-format", "json", "go"];
    let denials = |out: &[u8]| -> usize {
        let v: serde_json::Value = serde_json::from_slice(out).unwrap();
        v["permission_denials"].as_array().map_or(0, Vec::len)
    };
    let mut c = octo(&home);
    c.args(json);
    let before = assert_async(c).await.success();
    assert_eq!(denials(&before.get_output().stdout), 1, "untrusted: the project's allow rule is not applied");
    let mut c = octo(&home);
    c.arg("trust");
    let listed = assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("Bash(echo:*)"))
        .stderr(predicate::str::contains("octo trust --yes"));
    // What an approval covers is shown whole, on one line: a file cannot add lines of its own.
    let out = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(out.contains("env BASH_ENV=./x") && out.contains("server.sh\\nocto: nothing waits"), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("octo:")), "{out}");
    let mut c = octo(&home);
    c.args(["trust", "--yes"]);
    assert_async(c).await.success().stdout(predicate::str::contains("trusted"));
    let mut c = octo(&home);
    c.arg("trust");
    assert_async(c).await.success().stderr(predicate::str::contains("nothing in"));
    let mut c = octo(&home);
    c.args(json);
    let after = assert_async(c).await.success();
    assert_eq!(denials(&after.get_output().stdout), 0, "trusted: the call ran");
    // A changed entry is a new question.
    home.write(".claude/settings.json", r#"{"permissions": {"allow": ["Bash(echo:*)", "Bash(curl:*)"]}}"#)
        .unwrap();
    let mut c = octo(&home);
    c.arg("trust");
    assert_async(c).await.success().stdout(predicate::str::contains("Bash(curl:*)"));
}
