//! MCP end to end: a scripted model calls a real MCP server's tool through the `octo` binary;
//! a project's servers wait for the user's yes; `octo mcp list|add|remove`; `octo mcp serve`
//! driven by an MCP client; nothing outlives octo.

use super::common::{assert_async, home_for, octo};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use predicates::prelude::*;
use serde_json::json;

fn server_toml(name: &str) -> String {
    format!(
        "\n[mcp_servers.{name}]\ncommand = \"{}\"\nstartup_timeout = 20\n",
        octo_testkit::mcp::server_bin().display()
    )
}

fn add_to_config(home: &TempHome, text: &str) {
    let path = home.home().join("config.toml");
    let mut c = std::fs::read_to_string(&path).unwrap_or_default();
    c.push_str(text);
    std::fs::write(path, c).unwrap();
}

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

/// The first request already has the server's tools (it waited for the start); the call's
/// result reaches the model; the server and what it started are gone when octo exits.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_model_calls_an_mcp_tool_and_nothing_outlives_octo() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "mcp__t__add", json!({"a": 2, "b": 40}))
                .tool_use("t2", "mcp__t__spawn", json!({}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("It is 42.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    add_to_config(&home, &server_toml("t"));
    let mut c = octo(&home);
    c.args(["--no-save", "--permission-mode", "auto", "--output-format", "json", "add them"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["answer"], "It is 42.");
    let bodies = llm.request_bodies().await;
    let tools: Vec<&str> =
        bodies[0]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(tools.contains(&"mcp__t__add"), "{tools:?}");
    let results = bodies[1]["messages"].to_string();
    assert!(results.contains("42"), "{results}");
    let spawned: i32 =
        bodies[1]["messages"][2]["content"][1]["content"][0]["text"].as_str().unwrap().parse().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running(spawned) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!running(spawned), "the server's child {spawned} outlived octo");
}

/// A project's `.mcp.json` server does not start headless (a notice says why), and a broken
/// `.mcp.json` is named while the user's servers still load.
#[tokio::test(flavor = "multi_thread")]
async fn a_projects_servers_wait_for_approval_and_bad_files_are_named() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("ok").sse()),
        Scripted::sse(Reply::new().text("ok").sse()),
    ])
    .await;
    let home = home_for(&llm);
    let bin = octo_testkit::mcp::server_bin();
    home.write(
        ".mcp.json",
        format!("{{\"mcpServers\": {{\"proj\": {{\"command\": \"{}\"}}}}}}", bin.display()),
    )
    .unwrap();
    let mut c = octo(&home);
    c.args(["--no-save", "hi"]);
    assert_async(c)
        .await
        .success()
        .stderr(predicate::str::contains("MCP server `proj`").and(predicate::str::contains("approve")));
    let tools = llm.request_bodies().await[0]["tools"].to_string();
    assert!(!tools.contains("mcp__proj__"), "an unapproved project server never runs");
    home.write(".mcp.json", "{\"mcpServers\": {\"proj\": {\"command\": 5}, }").unwrap();
    add_to_config(&home, &server_toml("mine"));
    let mut c = octo(&home);
    c.args(["mcp", "list"]);
    assert_async(c)
        .await
        .success()
        .stderr(predicate::str::contains(".mcp.json: line 1"))
        .stdout(predicate::str::contains("mine").and(predicate::str::contains("ready")));
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_add_list_get_remove_keep_the_rest_of_the_config() {
    let home = TempHome::new().unwrap();
    std::fs::write(home.home().join("config.toml"), "# mine\nmax_turns = 9\n").unwrap();
    let bin = octo_testkit::mcp::server_bin();
    let mut c = octo(&home);
    c.args(["mcp", "add", "t", "--env", "A=1", "--"]).arg(&bin).arg("--weird-names");
    assert_async(c).await.success();
    let text = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    assert!(text.starts_with("# mine\nmax_turns = 9\n") && text.contains("[mcp_servers.t]"), "{text}");
    let mut c = octo(&home);
    c.args(["mcp", "get", "t"]);
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("ready").and(predicate::str::contains("tool: mcp__t__echo")));
    let mut c = octo(&home);
    c.args(["mcp", "add", "web", "--url", "http://127.0.0.1:1/mcp"]);
    assert_async(c).await.success();
    let mut c = octo(&home);
    c.args(["mcp", "list"]);
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("web").and(predicate::str::contains("failed")));
    for name in ["t", "web"] {
        let mut c = octo(&home);
        c.args(["mcp", "remove", name]);
        assert_async(c).await.success();
    }
    let mut c = octo(&home);
    c.args(["mcp", "remove", "t"]);
    assert_async(c).await.code(2);
    assert_eq!(
        std::fs::read_to_string(home.home().join("config.toml")).unwrap().trim(),
        "# mine\nmax_turns = 9"
    );
}

/// `octo mcp serve` as an MCP client sees it: read-only tools unless --allow-writes, the
/// permission engine in front of every call.
#[tokio::test(flavor = "multi_thread")]
async fn octo_serves_its_tools_over_mcp_behind_its_permissions() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::ServiceExt;
    let home = TempHome::new().unwrap();
    home.write("notes.txt", "hello from the workspace").unwrap();
    std::fs::create_dir_all(home.home().join(".ssh")).unwrap();
    std::fs::write(home.home().join(".ssh/id_rsa"), "PRIVATE").unwrap();
    let start = |writes: bool| {
        let mut cmd = tokio::process::Command::new(assert_cmd::cargo::cargo_bin("octo"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.home())
            .env("OCTO_HOME", home.home())
            .env("OCTO_NO_KEYRING", "1")
            .current_dir(home.workspace())
            .args(["mcp", "serve"]);
        if writes {
            cmd.arg("--allow-writes");
        }
        rmcp::transport::TokioChildProcess::new(cmd).unwrap()
    };
    let client = ().serve(start(false)).await.unwrap();
    let tools: Vec<String> =
        client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(
        tools.contains(&"read_file".to_owned()) && !tools.contains(&"write_file".to_owned()),
        "{tools:?}"
    );
    let args = |v: serde_json::Value| v.as_object().unwrap().clone();
    let read = client
        .call_tool(CallToolRequestParams::new("read_file").with_arguments(args(json!({"path": "notes.txt"}))))
        .await
        .unwrap();
    assert!(format!("{:?}", read.content).contains("hello from the workspace"));
    let secret = client
        .call_tool(
            CallToolRequestParams::new("read_file").with_arguments(args(json!({"path": "~/.ssh/id_rsa"}))),
        )
        .await
        .unwrap();
    assert_eq!(secret.is_error, Some(true));
    assert!(!format!("{:?}", secret.content).contains("PRIVATE"));
    let _ = client.cancel().await;
    let client = ().serve(start(true)).await.unwrap();
    let wrote = client
        .call_tool(
            CallToolRequestParams::new("write_file")
                .with_arguments(args(json!({"path": "out.txt", "content": "x"}))),
        )
        .await
        .unwrap();
    assert_ne!(wrote.is_error, Some(true), "{:?}", wrote.content);
    assert_eq!(std::fs::read_to_string(home.workspace().join("out.txt")).unwrap(), "x");
    let _ = client.cancel().await;
}

/// A server that cannot start is reported in every output format: here the json result names
/// it with its state and why, and the stream-json init line gives its status.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_server_is_reported_in_json_and_stream_json() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(Reply::new().text("fine").sse()),
        Scripted::sse(Reply::new().text("fine").sse()),
    ])
    .await;
    let home = home_for(&llm);
    add_to_config(&home, "\n[mcp_servers.gone]\ncommand = \"/no/such/octo-mcp-server\"\n");
    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "json", "hi"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let problems = v["mcp_servers_not_working"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{v}");
    assert_eq!(
        (problems[0]["name"].as_str(), problems[0]["status"].as_str()),
        (Some("gone"), Some("failed"))
    );
    assert!(problems[0]["error"].as_str().unwrap().contains("not found"), "{v}");
    let mut c = octo(&home);
    c.args(["--no-save", "--output-format", "stream-json", "hi"]);
    let out = assert_async(c).await.success().get_output().stdout.clone();
    let init: serde_json::Value =
        serde_json::from_str(String::from_utf8(out).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(init["mcp_servers"][0]["status"], "failed", "{init}");
}

/// A remote server behind OAuth: unusable (and saying what to run) before `octo mcp login`,
/// usable after one, forgotten after `octo mcp logout`; without a browser or a terminal the
/// login does not wait.
#[tokio::test(flavor = "multi_thread")]
async fn one_mcp_login_makes_a_server_behind_oauth_usable() {
    let srv = octo_testkit::oauth::serve_http_oauth(octo_testkit::mcp::Options::default()).await;
    let home = TempHome::new().unwrap();
    add_to_config(&home, &format!("[mcp_servers.remote]\nurl = \"{}\"\n", srv.url));
    let keys = home.home().join("keys.json");
    let with_keys = |c: &mut assert_cmd::Command| {
        c.env("OCTO_KEYRING_FILE", &keys);
    };
    let mut c = octo(&home);
    with_keys(&mut c);
    c.args(["mcp", "get", "remote"]);
    assert_async(c).await.stdout(predicate::str::contains("octo mcp login remote"));

    let mut c = octo(&home);
    with_keys(&mut c);
    c.args(["mcp", "login", "remote"]);
    assert_async(c).await.code(1).stderr(predicate::str::contains("$BROWSER"));

    let browser = format!("{} --browse", octo_testkit::mcp::server_bin().display());
    let mut c = octo(&home);
    with_keys(&mut c);
    c.env("BROWSER", &browser).args(["mcp", "login", "remote"]);
    assert_async(c).await.success().stderr(predicate::str::contains("logged in to `remote`"));
    let stored = std::fs::read_to_string(&keys).unwrap();
    assert!(stored.contains("mcp-oauth:remote:"), "the login is in the key file");
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    assert!(!config.contains("access_token"), "no token in the config: {config}");

    let mut c = octo(&home);
    with_keys(&mut c);
    c.args(["mcp", "get", "remote"]);
    assert_async(c)
        .await
        .success()
        .stdout(predicate::str::contains("ready").and(predicate::str::contains("mcp__remote__echo")));

    let mut c = octo(&home);
    with_keys(&mut c);
    c.args(["mcp", "logout", "remote"]);
    assert_async(c).await.success().stderr(predicate::str::contains("forgot"));
    assert!(!std::fs::read_to_string(&keys).unwrap().contains("mcp-oauth:remote:"));
    srv.stop.cancel();
}

/// An MCP server that ignores the end of its input (it never reads it) still dies with an octo
/// killed by `SIGKILL`: what octo starts carries a parent-death signal.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_ignores_its_input_dies_with_an_octo_killed_by_sigkill() {
    use octo_testkit::raw::{serve_sequence, After};
    let hang =
        serve_sequence(vec![(Vec::new(), After::Hang(std::time::Duration::from_secs(60)))]).await.unwrap();
    let home = TempHome::new().unwrap();
    let pid_file = home.home().join("server.pid");
    let script = home
        .write(
            "stubborn.py",
            format!(
                "import os, time\nopen({:?}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n",
                pid_file.display().to_string()
            ),
        )
        .unwrap();
    let config = format!(
        "default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n\n[mcp_servers.stubborn]\ncommand = \"python3\"\nargs = [{:?}]\nstartup_timeout = 1\n",
        hang.base,
        script.display().to_string()
    );
    std::fs::write(home.home().join("config.toml"), config).unwrap();
    let mut c = super::common::octo_std(&home);
    c.args(["--no-save", "say hi"]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut octo = c.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let server = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|s| s.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "the server never started");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(running(server));
    // octo now waits for a model that never answers; kill it the hard way.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    octo.kill().unwrap();
    let _ = octo.wait();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running(server) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let alive = running(server);
    if alive {
        let _ = std::process::Command::new("kill").args(["-9", &server.to_string()]).status();
    }
    assert!(!alive, "the MCP server outlived an octo killed with SIGKILL");
}
