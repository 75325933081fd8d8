//! The `octo` binary as a process, against a mock model server.

use super::common::{assert_async, home_for, octo};

use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use predicates::prelude::*;
use serde_json::{json, Value};

#[test]
fn version_prints_name_and_version() {
    let home = TempHome::new().unwrap();
    octo(&home).arg("--version").assert().success().stdout(format!("octo {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_says_what_octo_is_and_what_is_missing() {
    let home = TempHome::new().unwrap();
    octo(&home)
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("AI coding agent for the terminal"))
        .stdout(predicate::str::contains("--output-format"))
        .stdout(predicate::str::contains("REPL"))
        .stdout(predicate::str::contains("OCTO_KEYRING_FILE"));
}

#[test]
fn usage_errors_exit_2() {
    let home = TempHome::new().unwrap();
    octo(&home)
        .arg("--frobnicate")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unexpected argument '--frobnicate'"));
    octo(&home)
        .args(["--prompt-file", "does-not-exist.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the prompt file does-not-exist.txt"));
    octo(&home).write_stdin("").assert().code(2).stderr(predicate::str::contains("no prompt given"));
    octo(&home).args(["hi", "-r"]).assert().code(2).stderr(predicate::str::contains("needs a terminal"));
}

#[test]
fn no_endpoint_configured_says_how_to_configure_one() {
    let home = TempHome::new().unwrap();
    octo(&home)
        .arg("hello")
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("no model endpoint is configured"))
        .stderr(predicate::str::contains("ANTHROPIC_API_KEY"))
        .stderr(predicate::str::contains("octo auth set"))
        .stderr(predicate::str::contains("octo setup "));
    // As a new user runs it: the OS keyring is asked (it answers, or there is none), never a
    // crash.
    octo(&home)
        .env_remove("OCTO_NO_KEYRING")
        .arg("hello")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no model endpoint is configured"))
        .stderr(predicate::str::contains("panicked").not());
}

#[tokio::test(flavor = "multi_thread")]
async fn one_shot_prints_the_answer() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("Hello from the mock.").sse())]).await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.arg("say").arg("hello");
    assert_async(c).await.success().stdout("Hello from the mock.\n");
    let body = &llm.request_bodies().await[0];
    assert_eq!(body["messages"][0]["content"][0]["text"], "say hello");
    assert!(body["tools"].as_array().unwrap().len() > 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_tools_sends_no_tools_and_piped_stdin_is_the_prompt() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("ok").sse())]).await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--no-tools", "-p", "review this"]).write_stdin("diff --git a/x b/x\n");
    assert_async(c).await.success().stdout("ok\n");
    let body = &llm.request_bodies().await[0];
    assert!(body.get("tools").is_none());
    assert_eq!(body["messages"][0]["content"][0]["text"], "review this\n\ndiff --git a/x b/x\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn print_is_a_flag_as_in_claude_code_scripts() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("one").sse()),
        Scripted::sse(Reply::new().text("two").sse()),
    ])
    .await;
    let home = home_for(&llm);
    // `claude -p --output-format json "q"`: the flag before the options, the prompt last.
    let mut c = octo(&home);
    c.args(["--no-tools", "-p", "--output-format", "json", "first question"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["result"], "one");
    // `echo q | claude -p`: the prompt is stdin.
    let mut c = octo(&home);
    c.args(["--no-tools", "--print"]).write_stdin("second question\n");
    assert_async(c).await.success().stdout("two\n");
    let bodies = llm.request_bodies().await;
    assert_eq!(bodies[0]["messages"][0]["content"][0]["text"], "first question");
    assert_eq!(bodies[1]["messages"][0]["content"][0]["text"], "second question\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_headless_flags_work_as_in_claude_code() {
    let llm = MockLlm::start().await;
    let write = |id: &str, path: &str| {
        Scripted::sse(Reply::new().tool_use(id, "write_file", json!({"path": path, "content": "x"})).sse())
    };
    llm.script_anthropic([
        write("t1", "skipped.txt"),
        Scripted::sse(Reply::new().text("wrote it").sse()),
        write("t2", "asked.txt"),
        Scripted::sse(Reply::new().text("could not").sse()),
    ])
    .await;
    let home = home_for(&llm);
    // --dangerously-skip-permissions is auto mode; --session-id names the saved session.
    let mut c = octo(&home);
    c.args(["--dangerously-skip-permissions", "--session-id", "3f2a9c1e-0b7d-4e55-9a61-2c8f0d4b7e19"]);
    c.args(["-p", "--output-format", "json", "write it"]);
    let v: Value = serde_json::from_slice(&assert_async(c).await.success().get_output().stdout).unwrap();
    assert_eq!(v["session_id"], "3f2a9c1e-0b7d-4e55-9a61-2c8f0d4b7e19");
    assert!(home.workspace().join("skipped.txt").exists());
    // The same id again is refused before anything runs.
    let mut c = octo(&home);
    c.args(["--session-id", "3f2a9c1e-0b7d-4e55-9a61-2c8f0d4b7e19", "-p", "again"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("already in use"));
    // dontAsk: what no rule allows is refused, never asked.
    let mut c = octo(&home);
    c.args(["--permission-mode", "dontAsk", "--no-save", "-p", "--output-format", "json", "write more"]);
    let out = assert_async(c).await.get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["permission_denials"][0]["tool_name"], "Write", "{v}");
    assert!(!home.workspace().join("asked.txt").exists());
    // A --mcp-config that cannot be read is an error naming it.
    let mut c = octo(&home);
    c.args(["--mcp-config", "{\"mcpServers\": {\"x\": {\"type\": 5}}}", "-p", "hi"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("--mcp-config"));
    let mut c = octo(&home);
    c.args(["--mcp-config", "/no/such/file.json", "-p", "hi"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("/no/such/file.json"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_loop_edits_a_file() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "toolu_1",
                    "edit_file",
                    json!({"path": "lib.rs", "old_string": "fn a() {}", "new_string": "fn a() -> u8 { 1 }"}),
                )
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Changed a() to return 1.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("lib.rs", "fn a() {}\n").unwrap();
    let mut c = octo(&home);
    c.args(["--permission-mode", "accept-edits", "make a return 1"]);
    assert_async(c)
        .await
        .success()
        .stdout("Changed a() to return 1.\n")
        .stderr(predicate::str::contains("● edit_file lib.rs"));
    assert_eq!(std::fs::read_to_string(home.workspace().join("lib.rs")).unwrap(), "fn a() -> u8 { 1 }\n");
}

/// Without a terminal, a one-shot whose edit and command were refused says so after the answer,
/// with what would allow each, and exits with 3: the model's "fixed it" is not the last word.
#[tokio::test(flavor = "multi_thread")]
async fn a_headless_one_shot_says_what_it_could_not_do() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "toolu_1",
                    "edit_file",
                    json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
                )
                .tool_use("toolu_2", "terminal", json!({"command": "pytest -q"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Fixed add; both tests pass.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("calc.py", "def add(a, b):\n    return a - b\n").unwrap();
    let mut c = octo(&home);
    c.args(["--no-save", "fix the failing test"]);
    let out = assert_async(c).await.code(3).stdout("Fixed add; both tests pass.\n").get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 calls were not run"), "{stderr}");
    assert!(
        stderr.contains("edit_file calc.py [denied_unattended]")
            && stderr.contains("--permission-mode accept-edits"),
        "{stderr}"
    );
    assert!(
        stderr.contains("terminal pytest -q") && stderr.contains("allow = [\"terminal(pytest*)\"]"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("calc.py")).unwrap(),
        "def add(a, b):\n    return a - b\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn headless_runs_deny_what_would_need_approval() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("toolu_1", "write_file", json!({"path": "x.txt", "content": "x"})).sse(),
        ),
        Scripted::sse(Reply::new().text("I could not write it.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--output-format", "json", "write x.txt"]);
    // Cut short by a refusal: as in Claude Code, the JSON says so and the run is done.
    let out = assert_async(c).await.code(0).get_output().stdout.clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["answer"], "I could not write it.");
    assert_eq!(v["denied_tool_calls"], json!(["write_file"]));
    assert_eq!(v["is_error"], false);
    assert_eq!(v["turns"], 1);
    assert_eq!(v["model"], "mock:claude-sonnet-4-5");
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0);
    assert!(v["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(!home.workspace().join("x.txt").exists());
}

fn outcomes(v: &Value) -> Vec<String> {
    v["tool_calls"].as_array().unwrap().iter().map(|c| c["outcome"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn json_output_reports_every_outcome_kind() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "terminal", json!({"command": "rm -rf /"}))
                .tool_use("t2", "terminal", json!({"command": "curl https://example.com"}))
                .tool_use("t3", "write_file", json!({"path": "x.txt", "content": "x"}))
                .tool_use("t4", "no_such_tool", json!({}))
                .tool_use("t5", "read_file", json!({"path": "README.md"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("planned").sse()),
        Scripted::sse(
            Reply::new().tool_use("t6", "write_file", json!({"path": "y.txt", "content": "y"})).sse(),
        ),
        Scripted::sse(Reply::new().text("could not").sse()),
        Scripted::sse(
            Reply::new()
                .tool_use("t7", "write_file", json!({"path": "../outside.txt", "content": "z"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("could not either").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!("{config}[permissions]\ndeny = [\"terminal(curl*)\"]\n"),
    )
    .unwrap();
    home.write("README.md", "# readme\n").unwrap();
    let mut c = octo(&home);
    c.args(["--output-format", "json", "--permission-mode", "plan", "--no-save", "look around"]);
    let v = json_of(&assert_async(c).await.code(0).get_output().stdout);
    assert_eq!(
        outcomes(&v),
        ["hard_denied", "denied_by_rule", "blocked_by_plan_mode", "unknown_tool", "ran"],
        "{v}"
    );
    assert_eq!(v["tool_calls"][1]["name"], "terminal");
    assert_eq!(v["denied_tool_calls"], json!(["terminal", "terminal", "write_file"]));
    assert_eq!(v["tool_calls"][4]["summary"], "README.md", "a call that ran is named by its subject");

    let mut c = octo(&home);
    c.args(["--output-format", "json", "--no-save", "write y"]);
    let v = json_of(&assert_async(c).await.code(0).get_output().stdout);
    assert_eq!(outcomes(&v), ["denied_unattended"], "nobody could be asked: {v}");

    // Auto mode lets the call run; the tool's own question about leaving the workspace then
    // finds nobody to ask, and says so.
    let mut c = octo(&home);
    c.args(["--output-format", "json", "--permission-mode", "auto", "--no-save", "write outside"]);
    let v = json_of(&assert_async(c).await.code(0).get_output().stdout);
    assert_eq!(outcomes(&v), ["denied_unattended"], "{v}");
    assert!(!home.workspace().join("../outside.txt").exists());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_reports_an_interrupted_call() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(
        Reply::new().tool_use("t1", "terminal", json!({"command": "sleep 30 && echo done > late.txt"})).sse(),
    )])
    .await;
    let home = home_for(&llm);
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.home())
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .current_dir(home.workspace())
        .args(["--output-format", "json", "--permission-mode", "auto", "--no-save", "wait"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    // Interrupt once the command runs (the first request has been answered).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while llm.requests().await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "octo never sent its request");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let status =
        std::process::Command::new("sh").args(["-c", &format!("kill -INT {}", child.id())]).status().unwrap();
    assert!(status.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(130), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v = json_of(&out.stdout);
    assert_eq!(outcomes(&v), ["interrupted"], "{v}");
    assert_eq!(v["is_error"], true);
    assert!(!home.workspace().join("late.txt").exists(), "the command was killed");
}

#[tokio::test(flavor = "multi_thread")]
async fn events_prints_one_event_per_line() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("streamed").chunk_size(3).sse())]).await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--output-format", "events", "hi"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let types: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    insta::assert_debug_snapshot!("stream_json_event_types", types);
    assert_eq!(types.first().map(String::as_str), Some("turn_start"));
    assert_eq!(types.last().map(String::as_str), Some("turn_end"));
    assert_eq!(types.iter().filter(|t| *t == "text_delta").count(), 3);
    assert!(types.contains(&"committed".to_owned()) && types.contains(&"usage".to_owned()));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_endpoint_is_a_clear_error_with_nothing_on_stdout() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let home = TempHome::new().unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!("default = \"dead:m\"\n[endpoints.dead]\nprotocol = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n"),
    )
    .unwrap();
    let mut c = octo(&home);
    c.arg("hi");
    assert_async(c)
        .await
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("could not connect"))
        .stderr(predicate::str::contains("`dead`"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_stdout_does_not_panic() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("many words ".repeat(2000)).chunk_size(5).sse())])
        .await;
    let home = home_for(&llm);
    let bin = assert_cmd::cargo::cargo_bin("octo");
    let output = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(bin)
            .args(["--output-format", "stream-json", "hi"])
            .env("OCTO_HOME", home.home())
            .env("OCTO_NO_KEYRING", "1")
            .env("MOCK_KEY", "sk-mock")
            .current_dir(home.workspace())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader goes away at once
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(output.status.code(), Some(101));
}

#[tokio::test(flavor = "multi_thread")]
async fn config_show_and_path_and_completion() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["config", "show"]);
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("default = \"mock:claude-sonnet-4-5\"    # user config"));
    octo(&home).args(["config", "path"]).assert().success().stdout(predicate::str::contains("config.toml"));
    octo(&home).args(["completion", "bash"]).assert().success().stdout(predicate::str::contains("_octo"));
    std::fs::write(home.home().join("config.toml"), "max_turns = \"many\"\n").unwrap();
    octo(&home).args(["config", "show"]).assert().code(2).stderr(predicate::str::contains("config.toml:1:"));
}

#[test]
fn auth_rejects_unknown_endpoints() {
    let home = TempHome::new().unwrap();
    octo(&home)
        .args(["auth", "set", "nowhere"])
        .write_stdin("sk-x\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown endpoint `nowhere`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_stores_and_removes_a_key_read_from_stdin() {
    let llm = MockLlm::start().await;
    llm.list_models(&["m"]).await;
    let home = home_for(&llm);
    let keys = home.home().join("keys.json");
    let mut set = octo(&home);
    set.env("OCTO_KEYRING_FILE", &keys)
        .env_remove("MOCK_KEY")
        .args(["auth", "set", "mock"])
        .write_stdin("  sk-stored\n");
    assert_async(set).await.success().stderr(predicate::str::contains("stored the key for `mock`"));
    let stored: Value = serde_json::from_slice(&std::fs::read(&keys).unwrap()).unwrap();
    assert_eq!(stored["mock"], "sk-stored", "trimmed and kept");
    let mut doctor = octo(&home);
    doctor.env("OCTO_KEYRING_FILE", &keys).env_remove("MOCK_KEY").arg("doctor");
    assert_async(doctor).await.success().stdout(predicate::str::contains("key from the keyring"));
    let mut empty = octo(&home);
    empty.env("OCTO_KEYRING_FILE", &keys).args(["auth", "set", "mock"]).write_stdin("\n");
    assert_async(empty).await.code(2).stderr(predicate::str::contains("no key given"));
    let mut rm = octo(&home);
    rm.env("OCTO_KEYRING_FILE", &keys).args(["auth", "remove", "mock"]);
    assert_async(rm).await.success().stderr(predicate::str::contains("removed the key for `mock`"));
    let stored: Value = serde_json::from_slice(&std::fs::read(&keys).unwrap()).unwrap();
    assert!(stored.get("mock").is_none(), "{stored}");
    // With no store at all, nothing is claimed to be saved.
    let mut nowhere = octo(&home);
    nowhere.args(["auth", "set", "mock"]).write_stdin("sk-lost\n");
    assert_async(nowhere).await.code(2).stderr(predicate::str::contains("OCTO_NO_KEYRING is set"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_config_key_and_reachability() {
    let llm = MockLlm::start().await;
    let home = home_for(&llm);
    // A server that does not list models at its base URL is not a working endpoint.
    let mut c = octo(&home);
    c.arg("doctor");
    assert_async(c)
        .await
        .code(1)
        .stdout(predicate::str::contains("FAIL reachable:"))
        .stdout(predicate::str::contains("HTTP 404"));
    llm.list_models(&["claude-sonnet-4-5"]).await;
    let mut c = octo(&home);
    c.arg("doctor");
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("ok   configuration:"))
        .stdout(predicate::str::contains("key from MOCK_KEY"))
        .stdout(predicate::str::contains("ok   reachable:"))
        .stdout(predicate::str::contains("claude-sonnet-4-5 among them"));
    #[cfg(target_os = "linux")]
    {
        // The sandbox: which one and how; a kernel without Landlock is a warning, or a failure
        // when the sandbox is required.
        let mut c = octo(&home);
        c.arg("doctor");
        assert_async(c)
            .await
            .success()
            .stdout(predicate::str::contains("ok   sandbox: workspace-write, no network (Landlock ABI"));
        let mut c = octo(&home);
        c.env("OCTO_SANDBOX_SIMULATE", "no-landlock").arg("doctor");
        assert_async(c)
            .await
            .success()
            .stdout(predicate::str::contains("warn sandbox: none (the kernel has no Landlock"));
        // Without namespaces (the home lies in the temp dir here): the seccomp supervisor
        // holds what Landlock has no right for; without it too, what is not held is named, and
        // accept-edits asks.
        let mut c = octo(&home);
        c.env("OCTO_SANDBOX_SIMULATE", "no-namespaces").arg("doctor");
        assert_async(c)
            .await
            .success()
            .stdout(predicate::str::contains("ok   sandbox holds: modes, owners and times"))
            .stdout(predicate::str::contains("a seccomp supervisor makes mode"))
            .stdout(predicate::str::contains("ok   sandbox holds: named Unix sockets"))
            .stdout(predicate::str::contains("accept-edits asks").not());
        let mut c = octo(&home);
        c.env("OCTO_SANDBOX_SIMULATE", "no-namespaces,no-supervisor").arg("doctor");
        assert_async(c)
            .await
            .success()
            .stdout(predicate::str::contains("warn sandbox: accept-edits asks before running commands here"))
            .stdout(predicate::str::contains("chmod"))
            .stdout(predicate::str::contains("warn sandbox does not hold here: named Unix sockets"))
            .stdout(predicate::str::contains("warn sandbox does not hold here: modes, owners and times"));
        // With namespaces every promise is listed as held.
        let mut c = octo(&home);
        c.arg("doctor");
        assert_async(c)
            .await
            .success()
            .stdout(predicate::str::contains("ok   sandbox holds: modes, owners and times"))
            .stdout(predicate::str::contains("ok   sandbox holds: named Unix sockets"))
            .stdout(predicate::str::contains("ok   sandbox holds: a fork bomb is stopped"))
            .stdout(predicate::str::contains("sandbox does not hold").not());
        // With the sandbox off, what depends on it is said not to hold; no line is printed on faith.
        let mut c = octo(&home);
        c.args(["--sandbox", "off", "doctor"]);
        assert_async(c)
            .await
            .success()
            .stdout(predicate::str::contains(
                "warn sandbox does not hold here: files outside the writable roots",
            ))
            .stdout(predicate::str::contains("warn sandbox does not hold here: secret places"))
            .stdout(predicate::str::contains("sandbox holds: files outside").not());
        let mut c = octo(&home);
        c.env("OCTO_SANDBOX_SIMULATE", "no-landlock").env("OCTO_SANDBOX", "required").arg("doctor");
        assert_async(c)
            .await
            .code(1)
            .stdout(predicate::str::contains("FAIL sandbox: required but unavailable"));
        let mut c = octo(&home);
        c.args(["--sandbox", "sometimes", "doctor"]);
        // The flag before the subcommand applies to it: doctor names the bad value.
        assert_async(c).await.code(1).stdout(
            predicate::str::contains("FAIL configuration: --sandbox: sandbox must be")
                .and(predicate::str::contains("sometimes")),
        );
    }
    // Nothing listens on the discard port: the check fails and says which address.
    let dead = TempHome::new().unwrap();
    std::fs::write(
        dead.home().join("config.toml"),
        "default = \"mock:m\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"http://127.0.0.1:9\"\napi_key_env = \"MOCK_KEY\"\n",
    )
    .unwrap();
    let mut c = octo(&dead);
    c.arg("doctor");
    assert_async(c)
        .await
        .code(1)
        .stdout(predicate::str::contains("FAIL reachable: http://127.0.0.1:9 is unreachable"));
    // Hooks: a matcher that is not a regular expression and a settings file that is not JSON
    // are named; the other hooks count.
    let hooked = home_for(&llm);
    let cfg = std::fs::read_to_string(hooked.home().join("config.toml")).unwrap();
    std::fs::write(
        hooked.home().join("config.toml"),
        format!("{cfg}[[hooks.PreToolUse]]\nmatcher = \"[oops\"\ncommand = \"true\"\n[[hooks.Stop]]\ncommand = \"true\"\n"),
    )
    .unwrap();
    hooked.write(".claude/settings.json", "{ not json").unwrap();
    let mut c = octo(&hooked);
    c.arg("doctor");
    assert_async(c)
        .await
        .code(1)
        .stdout(predicate::str::contains("FAIL hooks:").and(predicate::str::contains("[oops")))
        .stdout(predicate::str::contains("settings.json is not valid JSON"));
    // A broken config file is named and fails the check.
    std::fs::write(dead.home().join("config.toml"), "default = [").unwrap();
    octo(&dead).arg("doctor").assert().code(1).stdout(predicate::str::contains("FAIL configuration"));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_a_one_shot_run_exits_130() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("too late").sse()).delay(std::time::Duration::from_secs(60))
    ])
    .await;
    let home = home_for(&llm);
    let mut c = super::common::octo_std(&home);
    c.env_remove("OCTO_MAX_ATTEMPTS")
        .arg("wait for it")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    // Interrupt once the request is in flight.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while llm.requests().await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "octo never sent its request");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let status =
        std::process::Command::new("sh").args(["-c", &format!("kill -INT {}", child.id())]).status().unwrap();
    assert!(status.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(out.status.code(), Some(130), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("too late"));
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_shots_are_saved_listed_continued_exported_and_removed() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("The port is 8080.").sse()),
        Scripted::sse(Reply::new().text("You asked about the port.").sse()),
        Scripted::sse(Reply::new().text("unsaved").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--output-format", "json", "which port does the server use?"]);
    let first = json_of(&assert_async(c).await.success().get_output().stdout.clone());
    let id = first["session_id"].as_str().unwrap().to_owned();

    let listed = octo(&home).arg("sessions").assert().success().get_output().stdout.clone();
    let listed = String::from_utf8(listed).unwrap();
    assert!(listed.contains(&id) && listed.contains("which port does the server use?"), "{listed}");

    let mut c = octo(&home);
    c.args(["-c", "--output-format", "json", "what did I ask?"]);
    let second = json_of(&assert_async(c).await.success().get_output().stdout.clone());
    assert_eq!(second["session_id"], id.as_str(), "continued the same session");
    let bodies = llm.request_bodies().await;
    assert_eq!(bodies[1]["messages"].as_array().unwrap().len(), 3, "the earlier exchange was sent again");

    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "json", "forget me"]);
    let third = json_of(&assert_async(c).await.success().get_output().stdout.clone());
    assert_eq!(third["session_id"], Value::Null);
    let count = std::fs::read_dir(home.home().join("sessions")).unwrap().count();
    assert_eq!(count, 1, "--no-save wrote nothing");

    let md =
        octo(&home).args(["sessions", "export", &id[..15]]).assert().success().get_output().stdout.clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("## User\n\nwhich port") && md.contains("You asked about the port."), "{md}");
    octo(&home)
        .args(["sessions", "rm", "which port"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no session id starts with"));
    octo(&home).args(["sessions", "rm", "last"]).assert().code(2);
    octo(&home).args(["sessions", "rm", &id]).assert().success();
    octo(&home)
        .args(["-c", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no saved session in this directory"));
}

#[tokio::test(flavor = "multi_thread")]
async fn continuing_explains_ambiguity_and_other_directories() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("a").sse()),
        Scripted::sse(Reply::new().text("b").sse()),
    ])
    .await;
    let home = home_for(&llm);
    for p in ["parser refactor", "parser tests"] {
        let mut c = octo(&home);
        c.arg(p);
        assert_async(c).await.success();
    }
    octo(&home)
        .args(["-c=parser", "go on"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("several sessions match `parser`"));
    let elsewhere = home.workspace().join("sub");
    std::fs::create_dir_all(&elsewhere).unwrap();
    octo(&home)
        .args(["--continue=refactor", "go on"])
        .current_dir(&elsewhere)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("belongs to").and(predicate::str::contains("cd ")));
    let all = octo(&home).args(["sessions", "--all"]).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8(all)
        .unwrap()
        .starts_with(&format!("{}\n", home.workspace().canonicalize().unwrap().display())));
}

#[tokio::test(flavor = "multi_thread")]
async fn escapes_in_an_answer_are_dropped_when_piped_and_kept_with_raw() {
    let hostile = "ok\u{1b}]52;c;ZXZpbA==\u{7} \u{1b}[31mred\u{1b}[0m\u{0}";
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text(hostile).sse()),
        Scripted::sse(Reply::new().text(hostile).sse()),
        Scripted::sse(Reply::new().text(hostile).sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--no-save", "hi"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    assert_eq!(String::from_utf8(out).unwrap(), "ok red\n");
    let mut c = octo(&home);
    c.args(["--no-save", "--raw", "hi"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    assert_eq!(String::from_utf8(out).unwrap(), format!("{hostile}\n"), "--raw passes the bytes as sent");
    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "json", "hi"]);
    let v = json_of(&assert_async(c).await.success().get_output().stdout);
    assert_eq!(v["answer"], hostile, "machine output stays exact");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_typed_before_kill_9_is_offered_by_continue() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("never seen").sse()).delay(std::time::Duration::from_secs(60)),
        Scripted::sse(Reply::new().text("Picked up.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.home())
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .current_dir(home.workspace())
        .arg("refactor the parser, keep the public API")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while llm.requests().await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "octo never sent its request");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL: no cleanup runs
    child.wait().unwrap();
    let mut c = octo(&home);
    c.args(["-c", "what now?"]);
    let out = assert_async(c).await.success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("never answered") && stderr.contains("refactor the parser, keep the public API"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&out.get_output().stdout), "Picked up.\n");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn everything_octo_writes_in_its_home_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "write_file", json!({"path": "notes.txt", "content": "new\n"}))
                .tool_use("t2", "terminal", json!({"command": "seq 1 20000"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Done.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("notes.txt", "old secret\n").unwrap();
    // An older octo left its home readable by everyone.
    std::fs::set_permissions(home.home(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = octo(&home);
    c.args(["--permission-mode", "auto", "change the notes"]);
    let out = assert_async(c).await.success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("made it private"), "the tightening is said: {stderr}");
    let mut seen = (0, 0);
    let mut stack = vec![home.home()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "{}", p.display());
            seen.0 += 1;
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            assert_eq!(mode & 0o077, 0, "{} is {mode:o}", p.display());
            seen.1 += 1;
        }
    }
    for dir in ["sessions", "trash", "output"] {
        assert!(home.home().join(dir).is_dir(), "{dir} was written: the check covered it");
    }
    assert!(seen.1 >= 4, "config, session, trash copy and spilled output: {seen:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_configured_stall_timeout_ends_a_silent_stream_quickly() {
    let mut head = octo_testkit::raw::sse_head();
    head.extend(octo_testkit::raw::chunk(": ping\n\n"));
    let base =
        octo_testkit::raw::serve(head, octo_testkit::raw::After::Hang(std::time::Duration::from_secs(60)))
            .await
            .unwrap();
    let home = TempHome::new().unwrap();
    std::fs::write(
        home.home().join("config.toml"),
        format!(
            "default = \"slow:m\"\n[endpoints.slow]\nprotocol = \"anthropic\"\nbase_url = \"{base}\"\napi_key_env = \"MOCK_KEY\"\nstall_timeout = 0.3\n"
        ),
    )
    .unwrap();
    let mut c = octo(&home);
    c.args(["--no-save", "hi"]);
    let out = assert_async(c).await.failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("0.3s"), "{stderr}");
}

/// Whether `pid` is a live process (not a zombie waiting to be reaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| !r.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Commands see no secret variable, even in auto mode, and nothing they start outlives octo: a
/// daemonised grandchild is killed, a background shell is stopped and named.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn commands_see_no_secrets_and_leave_nothing_running() {
    let llm = MockLlm::start().await;
    let daemon = "setsid nohup sh -c 'echo $$ > daemon.pid; exec sleep 1000' > /dev/null 2>&1 &";
    // Without the session's tag: a new session and an empty environment, or the tag dropped.
    let untagged = "env -i setsid sh -c 'echo $$ > untagged.pid; exec sleep 1001' > /dev/null 2>&1 &";
    let bare = "env -u OCTO_SESSION_TAG sh -c 'echo $$ > bare.pid; exec sleep 1002' > /dev/null 2>&1 &";
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "terminal", json!({"command": format!("env; {daemon} {untagged} {bare}")}))
                .tool_use("t2", "terminal", json!({"command": "sleep 1000", "run_in_background": true}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("started").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.env("ANTHROPIC_API_KEY", "sk-ant-leak")
        .env("AWS_SECRET_ACCESS_KEY", "aws-leak")
        .env("GITHUB_TOKEN", "ghp-leak")
        .env("DB_PASSWORD", "pw-leak")
        .env("OCTO_NO_KEYRING", "1")
        .args(["--permission-mode", "auto", "start things"]);
    assert_async(c)
        .await
        .success()
        .stderr(predicate::str::contains("stopped background command shell-1 (`sleep 1000`)"));
    let bodies = llm.request_bodies().await;
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("PATH="), "the command ran: {result}");
    for leak in ["sk-ant-leak", "aws-leak", "ghp-leak", "pw-leak", "sk-mock"] {
        assert!(!result.contains(leak), "{leak} reached the model: {result}");
    }
    for file in ["daemon.pid", "untagged.pid", "bare.pid"] {
        let pid: u32 = std::fs::read_to_string(home.workspace().join(file)).unwrap().trim().parse().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while running(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!running(pid), "the grandchild {pid} ({file}) outlived octo");
    }
}

/// An OpenAI-compatible chat completion, whole (the setup test request is not streamed).
fn chat_json(text: &str) -> Value {
    json!({"id": "c1", "object": "chat.completion", "model": "m1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
}

async fn models_endpoint(llm: &MockLlm) {
    use octo_testkit::wiremock::matchers::{method, path};
    use octo_testkit::wiremock::{Mock, ResponseTemplate};
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": [{"id": "m1"}, {"id": "m2"}]})))
        .mount(llm.server())
        .await;
}

/// `octo setup` without questions: the model list, one test request, then the config written
/// around what was there; a failed test writes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn setup_without_questions_tests_then_writes_the_config() {
    let llm = MockLlm::start().await;
    models_endpoint(&llm).await;
    llm.script_openai([
        Scripted::json(200, &chat_json("ready")),
        Scripted::json(401, &json!({"error": {"message": "bad key"}})),
    ])
    .await;
    let home = TempHome::new().unwrap();
    let config = home.home().join("config.toml");
    std::fs::write(&config, "# mine\nmax_turns = 12\n").unwrap();
    let mut c = octo(&home);
    c.args([
        "setup",
        "--endpoint",
        "custom",
        "--base-url",
        &format!("{}/v1", llm.uri()),
        "--key-env",
        "MOCK_KEY",
    ]);
    assert_async(c).await.success().stderr(predicate::str::contains("it answered: ready"));
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# mine\nmax_turns = 12\n"), "{text}");
    assert!(
        text.contains("default = \"custom:m1\"") && text.contains("api_key_env = \"MOCK_KEY\""),
        "{text}"
    );
    let req = &llm.requests().await[0];
    assert_eq!(req.header("authorization"), Some("Bearer sk-mock"));
    // The configured endpoint now answers a one-shot run.
    let before = text.clone();
    let mut c = octo(&home);
    c.args([
        "setup",
        "--endpoint",
        "custom",
        "--base-url",
        &format!("{}/v1", llm.uri()),
        "--key-env",
        "MOCK_KEY",
        "--model",
        "m2",
    ]);
    assert_async(c).await.code(1).stderr(predicate::str::contains("nothing was written"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before, "a failed test changes nothing");
    let mut c = octo(&home);
    c.args(["setup"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("needs a terminal"));
}

/// Programs written for Claude Code's headless mode can drive octo: JSON lines in, events and a
/// result per turn out; a bad line is an error event and the session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn stream_json_input_answers_each_message_in_one_session() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("First.").sse()),
        Scripted::sse(Reply::new().text("Second.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--no-save", "--input-format", "stream-json", "--output-format", "stream-json"]).write_stdin(
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"one\"}}\nthis is not json\n\
         {\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"two\"}]}}\n",
    );
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let lines: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{lines:?}");
    assert_eq!(
        (results[0]["answer"].as_str(), results[1]["answer"].as_str()),
        (Some("First."), Some("Second."))
    );
    assert!(lines
        .iter()
        .any(|l| l["type"] == "error" && l["message"].as_str().unwrap().contains("input line 2")));
    let second = &llm.request_bodies().await[1];
    assert_eq!(second["messages"].as_array().unwrap().len(), 3, "one session: {second}");
    let mut c = octo(&home);
    c.args(["--input-format", "stream-json"]);
    assert_async(c).await.code(2).stderr(predicate::str::contains("needs --output-format stream-json"));
}

/// With `--permission-prompt stdio` the driving program answers approvals on stdin.
#[tokio::test(flavor = "multi_thread")]
async fn approvals_can_be_answered_over_stdio() {
    use std::io::{BufRead, Write};
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new().tool_use("toolu_1", "write_file", json!({"path": "x.txt", "content": "x"})).sse(),
        ),
        Scripted::sse(Reply::new().text("Wrote it.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let ws = home.workspace();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.home())
        .env("OCTO_HOME", home.home())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock")
        .current_dir(&ws)
        .args([
            "--no-save",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--permission-prompt",
            "stdio",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let answer = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"write x\"}}}}")
            .unwrap();
        let mut answer = None;
        for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if v["type"] == "approval_required" {
                let id = v["approval_id"].as_str().unwrap().to_owned();
                writeln!(stdin, "{{\"type\":\"approval\",\"approval_id\":\"{id}\",\"decision\":\"allow\"}}")
                    .unwrap();
            }
            if v["type"] == "result" {
                answer = v["answer"].as_str().map(str::to_owned);
                break;
            }
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
        answer
    })
    .await
    .unwrap();
    assert_eq!(answer.as_deref(), Some("Wrote it."));
    assert_eq!(std::fs::read_to_string(home.workspace().join("x.txt")).unwrap(), "x");
}

/// `--resume N` continues this directory's Nth newest session; `octo trash` lists and restores.
#[tokio::test(flavor = "multi_thread")]
async fn resume_by_number_and_the_trash() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("toolu_1", "write_file", json!({"path": "f.txt", "content": "octo's"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Wrote f.").sse()),
        Scripted::sse(Reply::new().text("Second session.").sse()),
        Scripted::sse(Reply::new().text("Back in the first.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("f.txt", "mine\n").unwrap();
    for (args, answer) in [
        (vec!["--permission-mode", "accept-edits", "first task"], "Wrote f."),
        (vec!["second task"], "Second session."),
        (vec!["--resume", "2", "and again"], "Back in the first."),
    ] {
        let mut c = octo(&home);
        c.args(args);
        assert_async(c).await.success().stdout(format!("{answer}\n"));
    }
    let bodies = llm.request_bodies().await;
    let last = bodies.last().unwrap()["messages"].to_string();
    assert!(last.contains("first task") && !last.contains("second task"), "{last}");
    let mut c = octo(&home);
    c.args(["trash", "list"]);
    let listed = assert_async(c).await.success().get_output().stdout.clone();
    assert!(String::from_utf8_lossy(&listed).contains("f.txt"), "{}", String::from_utf8_lossy(&listed));
    let mut c = octo(&home);
    c.args(["trash", "restore", "f.txt"]);
    assert_async(c).await.success().stderr(predicate::str::contains("restored"));
    assert_eq!(std::fs::read_to_string(home.workspace().join("f.txt")).unwrap(), "mine\n");
    let mut c = octo(&home);
    c.args(["trash", "restore", "nothing-here"]);
    assert_async(c).await.code(2);
}

/// A one-shot's shell command edits a file; `octo checkpoints` lists the turn, shows its diff and
/// puts the file back, and leaves a file the user changed since unless told with --force.
#[tokio::test(flavor = "multi_thread")]
async fn checkpoints_list_diff_and_restore_a_one_shots_changes() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "t1",
                    "terminal",
                    json!({"command": "printf 'new\\n' > f.txt && printf x > other.txt"}),
                )
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Rewrote f.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("f.txt", "old\n").unwrap();
    let mut c = octo(&home);
    c.args(["--permission-mode", "auto", "rewrite f"]);
    assert_async(c).await.success().stdout("Rewrote f.\n");
    let ws = home.workspace().to_path_buf();
    assert_eq!(std::fs::read_to_string(ws.join("f.txt")).unwrap(), "new\n");
    let mut c = octo(&home);
    c.args(["checkpoints", "list"]);
    let listed = String::from_utf8_lossy(&assert_async(c).await.success().get_output().stdout).into_owned();
    assert!(listed.contains(":1 ") && listed.contains("2 files") && listed.contains("rewrite f"), "{listed}");
    let mut c = octo(&home);
    c.args(["checkpoints", "diff", "1"]);
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("-old").and(predicate::str::contains("+new")));
    std::fs::write(ws.join("other.txt"), "the user's").unwrap();
    let mut c = octo(&home);
    c.args(["checkpoints", "restore", "1"]);
    assert_async(c).await.code(1).stderr(predicate::str::contains("--force"));
    assert_eq!(std::fs::read_to_string(ws.join("f.txt")).unwrap(), "old\n");
    assert_eq!(std::fs::read_to_string(ws.join("other.txt")).unwrap(), "the user's");
    let mut c = octo(&home);
    c.args(["checkpoints", "restore", "1", "--force"]);
    assert_async(c).await.success();
    assert!(!ws.join("other.txt").exists());
    let mut c = octo(&home);
    c.args(["checkpoints", "diff", "nope"]);
    assert_async(c).await.code(2);
}

/// A program written for `claude -p --output-format json|stream-json` reads octo's output as it
/// reads Claude Code's: the result's `subtype`, `result`, `num_turns`, `total_cost_usd` and
/// `usage` names, and the stream's `system`/`init`, `assistant`, `user` and `result` lines with
/// Claude Code's tool names.
#[tokio::test(flavor = "multi_thread")]
async fn json_and_stream_json_have_claude_codes_shapes() {
    let llm = MockLlm::start().await;
    let script = || {
        [
            Scripted::sse(Reply::new().tool_use("t1", "terminal", json!({"command": "echo hi"})).sse()),
            Scripted::sse(Reply::new().text("All done.").sse()),
        ]
    };
    llm.script_anthropic(script()).await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--permission-mode", "auto", "--output-format", "json", "go"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let v = json_of(&out);
    assert_eq!((v["type"].as_str(), v["subtype"].as_str()), (Some("result"), Some("success")), "{v}");
    assert_eq!(v["is_error"], false);
    assert_eq!(v["result"], "All done.");
    assert_eq!(v["num_turns"], 2, "two model requests");
    assert!(
        v["total_cost_usd"].is_number() && v["duration_ms"].is_number() && v["duration_api_ms"].is_number()
    );
    assert!(
        v["usage"]["input_tokens"].is_number() && v["usage"]["cache_read_input_tokens"].is_number(),
        "{v}"
    );
    assert!(v["session_id"].is_string() && v["permission_denials"].is_array());

    let llm = MockLlm::start().await;
    llm.script_anthropic(script()).await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--permission-mode", "auto", "--output-format", "stream-json", "go"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let lines: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["system", "assistant", "user", "assistant", "result"], "{lines:#?}");
    let init = &lines[0];
    assert_eq!(init["subtype"], "init");
    assert!(init["tools"].as_array().unwrap().iter().any(|t| t == "Bash"), "{init}");
    assert!(init["tools"].as_array().unwrap().iter().any(|t| t == "Task"), "Claude Code's name: {init}");
    assert!(init["slash_commands"].is_array() && init["skills"].is_array(), "{init}");
    let uuid = init["uuid"].as_str().unwrap();
    assert!(uuid.len() == 36 && uuid.chars().filter(|c| *c == '-').count() == 4, "{uuid}");
    assert!(lines[1]["uuid"].is_string() && lines[1]["uuid"] != lines[3]["uuid"]);
    assert_eq!(init["permissionMode"], "bypassPermissions");
    assert!(init["cwd"].is_string() && init["model"].is_string());
    let call = &lines[1]["message"]["content"][0];
    assert_eq!((call["type"].as_str(), call["name"].as_str()), (Some("tool_use"), Some("Bash")), "{call}");
    assert_eq!(call["input"]["command"], "echo hi");
    let result = &lines[2]["message"]["content"][0];
    assert_eq!((result["type"].as_str(), result["tool_use_id"].as_str()), (Some("tool_result"), Some("t1")));
    assert!(result["content"].as_str().unwrap().contains("hi"), "{result}");
    assert_eq!(lines[3]["message"]["content"][0]["text"], "All done.");
    assert_eq!(lines[4]["subtype"], "success");
    assert_eq!(lines[4]["result"], "All done.");
    assert!(lines[1]["session_id"].is_string());

    // With --include-partial-messages the answer's text also arrives as `stream_event` deltas
    // before its `assistant` line, as Claude Code writes them.
    let llm = MockLlm::start().await;
    llm.script_anthropic(script()).await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args([
        "--permission-mode",
        "auto",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
        "go",
    ]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let lines: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let deltas: String = lines
        .iter()
        .filter(|l| l["type"] == "stream_event" && l["event"]["type"] == "content_block_delta")
        .filter_map(|l| l["event"]["delta"]["text"].as_str())
        .collect();
    assert_eq!(deltas, "All done.", "{lines:#?}");
    let first_delta = lines.iter().position(|l| l["type"] == "stream_event").unwrap();
    let last_assistant = lines.iter().rposition(|l| l["type"] == "assistant").unwrap();
    assert!(first_delta < last_assistant, "deltas come before the message they build");
    assert!(lines.iter().all(|l| l["type"] != "stream_event" || l["session_id"].is_string()));
}

/// Claude Code's spellings of the permission flags: `--allowedTools` lets a named call run
/// without asking in a headless default-mode run; `--disallowedTools` naming a tool whole leaves
/// it out of what the model is offered (as Claude Code does), even in auto mode.
#[tokio::test(flavor = "multi_thread")]
async fn allowed_and_disallowed_tools_as_claude_code_spells_them() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("t1", "terminal", json!({"command": "echo allowed"})).sse()),
        Scripted::sse(Reply::new().text("ok").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args(["--output-format", "json", "go", "--allowedTools", "Bash(echo:*)", "Read"]);
    let v = json_of(&assert_async(c).await.success().get_output().stdout.clone());
    assert_eq!(v["permission_denials"].as_array().unwrap().len(), 0, "{v}");
    let bodies = llm.request_bodies().await;
    assert!(bodies[1]["messages"].to_string().contains("allowed"), "the command ran");

    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().tool_use("t1", "terminal", json!({"command": "echo no"})).sse()),
        Scripted::sse(Reply::new().text("ok").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let mut c = octo(&home);
    c.args([
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "json",
        "go",
        "--disallowedTools",
        "Bash",
    ]);
    assert_async(c).await;
    let bodies = llm.request_bodies().await;
    let offered = bodies[0]["tools"].as_array().unwrap();
    assert!(!offered.iter().any(|t| t["name"] == "terminal"), "not offered: {offered:?}");
    assert!(offered.iter().any(|t| t["name"] == "read_file"), "the others are");
    let result = bodies[1]["messages"].to_string();
    assert!(!result.contains("[exit code"), "the command did not run: {result}");
}

/// A reply that broke off mid-stream and started again is in every output once: text, json,
/// and Claude Code's stream-json, whose partial deltas begin a new message at the restart.
#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_reply_is_in_every_output_once() {
    for format in ["text", "json", "stream-json"] {
        let llm = MockLlm::start().await;
        llm.script_anthropic(super::common::broken_then("Hello world.")).await;
        let home = home_for(&llm);
        let mut c = octo(&home);
        c.env("OCTO_MAX_ATTEMPTS", "3").args([
            "--output-format",
            format,
            "--include-partial-messages",
            "say hello",
        ]);
        let out = String::from_utf8(assert_async(c).await.success().get_output().stdout.clone()).unwrap();
        match format {
            "text" => assert_eq!(out, "Hello world.\n"),
            "json" => assert_eq!(json_of(out.as_bytes())["result"], "Hello world."),
            _ => {
                let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
                let said: Vec<&Value> = lines.iter().filter(|l| l["type"] == "assistant").collect();
                assert_eq!(said.len(), 1, "{lines:#?}");
                assert_eq!(said[0]["message"]["content"][0]["text"], "Hello world.");
                // What a reader keeps of the deltas: those after the last message_start.
                let events: Vec<&Value> =
                    lines.iter().filter(|l| l["type"] == "stream_event").map(|l| &l["event"]).collect();
                let start = events.iter().rposition(|e| e["type"] == "message_start").unwrap();
                let kept: String =
                    events[start..].iter().filter_map(|e| e["delta"]["text"].as_str()).collect();
                assert_eq!(kept, "Hello world.", "{lines:#?}");
                let all: String = events.iter().filter_map(|e| e["delta"]["text"].as_str()).collect();
                assert!(
                    all.starts_with("Hello wor") && all.len() > kept.len(),
                    "the broken part came first: {all}"
                );
            }
        }
    }
}
