//! Servers started, listed, called, misbehaving, restarted, stopped.

use octo_agent::{ToolContext, ToolExecutor, ToolOutcome, ToolOutput, ToolResultPart, ToolSource};
use octo_mcp::{McpHub, McpSource, Origin, ServerConfig, ServerSpec};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

pub(super) fn stdio(name: &str, args: &[&str]) -> ServerConfig {
    let spec = ServerSpec {
        command: Some(octo_testkit::mcp::server_bin().display().to_string()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        startup_timeout: Some(5.0),
        call_timeout: Some(10.0),
        ..ServerSpec::default()
    };
    ServerConfig { name: name.into(), spec, origin: Origin::User }
}

fn no_env(_: &str) -> Option<String> {
    None
}

pub(super) async fn hub(configs: Vec<ServerConfig>) -> (Arc<McpHub>, McpSource) {
    let dir = std::env::temp_dir();
    let hub = McpHub::new(configs, dir, &no_env, &|_| true);
    hub.start();
    hub.wait_ready(Duration::from_secs(20)).await;
    let source = McpSource(Arc::clone(&hub));
    (hub, source)
}

pub(super) fn tool(source: &McpSource, name: &str) -> Arc<dyn ToolExecutor> {
    let tools = source.tools();
    let names: Vec<String> = tools.iter().map(|t| t.definition().name).collect();
    tools
        .into_iter()
        .find(|t| t.definition().name == name)
        .unwrap_or_else(|| panic!("no {name} in {names:?}"))
}

pub(super) async fn call(source: &McpSource, name: &str, input: serde_json::Value) -> ToolOutput {
    tool(source, name).execute(input, &ToolContext::detached(std::env::temp_dir())).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_lists_calls_and_describes_its_tools() {
    let (hub, source) = hub(vec![stdio("t", &[])]).await;
    let status = hub.status();
    assert_eq!(status[0].state, "ready", "{status:?}");
    assert!(status[0].tools.contains(&"mcp__t__echo".to_owned()));
    let echo = tool(&source, "mcp__t__echo");
    assert!(echo.meta().read_only, "readOnlyHint makes it read-only");
    assert!(!tool(&source, "mcp__t__add").meta().read_only, "otherwise it asks");
    assert_eq!(call(&source, "mcp__t__echo", json!({"text": "hi"})).await.text_content(), "hi");
    assert_eq!(call(&source, "mcp__t__add", json!({"a": 2, "b": 3})).await.text_content(), "5");
    let img = call(&source, "mcp__t__image", json!({})).await;
    assert!(matches!(&img.content[1], ToolResultPart::Image { source } if source.media_type == "image/png"));
    let fail = call(&source, "mcp__t__fail", json!({})).await;
    assert!(fail.is_error && fail.text_content().contains("on purpose"));
    let big = call(&source, "mcp__t__big", json!({})).await;
    assert!(big.text_content().len() < 2 * 1024 * 1024 && big.text_content().contains("was cut"));
    let listed = call(&source, "mcp_list_resources", json!({})).await.text_content();
    assert!(listed.contains("mem://notes"), "{listed}");
    let read = call(&source, "mcp_read_resource", json!({"server": "t", "uri": "mem://notes"})).await;
    assert!(read.text_content().contains("remember the milk"));
    let prompts = hub.prompts().await;
    assert_eq!(prompts[0].command, "/mcp__t__review");
    assert!(hub.render_prompt(&prompts[0], &[]).await.unwrap_err().to_string().contains("needs file"));
    assert_eq!(
        hub.render_prompt(&prompts[0], &["a.rs".into()]).await.unwrap(),
        "Please review a.rs carefully."
    );
    hub.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changes_show_between_turns_and_cancellation_reaches_the_server() {
    let (_hub, source) = hub(vec![stdio("t", &[])]).await;
    let before = source.generation();
    assert!(!source.tools().iter().any(|t| t.definition().name == "mcp__t__late"));
    call(&source, "mcp__t__grow", json!({})).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while source.generation() == before && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(source.generation() > before, "the generation moved");
    assert!(source.tools().iter().any(|t| t.definition().name == "mcp__t__late"));

    let mark = tempfile::NamedTempFile::new().unwrap();
    let mut cfg = stdio("c", &[]);
    cfg.spec.env.insert("MCP_MARK".into(), mark.path().display().to_string());
    let (_h2, s2) = hub(vec![cfg]).await;
    let cancel = octo_agent::CancellationToken::new();
    let ctx = ToolContext::detached(std::env::temp_dir()).with_cancel(cancel.clone());
    let slow = tool(&s2, "mcp__c__slow");
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c2.cancel();
    });
    let out = slow.execute(json!({}), &ctx).await;
    assert_eq!(out.outcome(), ToolOutcome::Interrupted);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(mark.path()).unwrap_or_default() != "cancelled"
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        std::fs::read_to_string(mark.path()).unwrap(),
        "cancelled",
        "notifications/cancelled reached the server"
    );
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_server_restarts_and_nothing_outlives_the_hub() {
    let (hub, source) = hub(vec![stdio("t", &[])]).await;
    assert!(!hub.status()[0].tools.is_empty(), "{:?} {:?}", hub.status(), hub.take_notices());
    let first: i32 = call(&source, "mcp__t__pid", json!({})).await.text_content().parse().unwrap();
    let crashed = call(&source, "mcp__t__crash", json!({})).await;
    assert!(
        crashed.is_error && crashed.text_content().contains("stopped during the call"),
        "{}",
        crashed.text_content()
    );
    assert!(
        crashed.text_content().contains("octo-test-mcp starting"),
        "the stderr tail: {}",
        crashed.text_content()
    );
    let second: i32 = call(&source, "mcp__t__pid", json!({})).await.text_content().parse().unwrap();
    assert_ne!(first, second, "started again");
    let grandchild: i32 = call(&source, "mcp__t__spawn", json!({})).await.text_content().parse().unwrap();
    assert!(alive(second) && alive(grandchild));
    hub.shutdown();
    drop(source);
    drop(hub);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (alive(second) || alive(grandchild)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(second) && !alive(grandchild), "the server and what it started are gone");
}

/// A server that never answers `initialize`, given up while it starts (octo exiting: its
/// runtime dropped), leaves nothing it started running.
#[cfg(target_os = "linux")]
#[test]
fn a_server_given_up_while_it_starts_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
    let spec = ServerSpec {
        command: Some("sh".into()),
        args: vec!["-c".into(), script],
        startup_timeout: Some(120.0),
        ..ServerSpec::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let hub = rt.block_on(async {
        let hub = McpHub::new(
            vec![ServerConfig { name: "mute".into(), spec, origin: Origin::User }],
            dir.path().to_path_buf(),
            &no_env,
            &|_| true,
        );
        hub.start();
        hub
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut pid = None;
    while pid.is_none() && std::time::Instant::now() < deadline {
        pid = std::fs::read_to_string(&pidfile).ok().and_then(|p| p.trim().parse::<i32>().ok());
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = pid.expect("the server started its child");
    assert!(alive(pid));
    drop(hub);
    drop(rt);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "what the server started is gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_servers_are_reported_and_never_stop_the_others() {
    let missing = ServerConfig {
        name: "missing".into(),
        spec: ServerSpec { command: Some("/no/such/octo-server".into()), ..ServerSpec::default() },
        origin: Origin::User,
    };
    let mut silent = stdio("silent", &["--silent"]);
    silent.spec.startup_timeout = Some(1.0);
    let (hub, source) = hub(vec![
        missing,
        silent,
        stdio("garbage", &["--garbage"]),
        stdio("odd", &["--bad-schema", "--weird-names"]),
    ])
    .await;
    let notices = hub.take_notices().join("\n");
    assert!(notices.contains("`missing`") && notices.contains("was not found"), "{notices}");
    assert!(notices.contains("`silent`") && notices.contains("did not answer `initialize`"), "{notices}");
    assert!(hub.take_notices().is_empty(), "each reported once");
    assert_eq!(
        call(&source, "mcp__garbage__echo", json!({"text": "still works"})).await.text_content(),
        "still works"
    );
    let names: Vec<String> = source.tools().iter().map(|t| t.definition().name).collect();
    assert!(names.iter().all(|n| octo_agent::valid_tool_name(n)), "{names:?}");
    let weird = names.iter().filter(|n| n.starts_with("mcp__odd__files_read_all")).count();
    assert_eq!(weird, 2, "both kept, under different names: {names:?}");
    let odd = tool(&source, "mcp__odd__odd");
    assert_eq!(odd.definition().input_schema["type"], "object", "the schema was mended");
    assert!(!names.iter().any(|n| n.starts_with("mcp__missing__") || n.starts_with("mcp__silent__")));
    hub.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamable_http_server_works_and_bad_urls_are_explained() {
    let (url, stop) = octo_testkit::mcp::serve_http(octo_testkit::mcp::Options::default()).await;
    let http = |name: &str, url: &str| ServerConfig {
        name: name.into(),
        spec: ServerSpec { url: Some(url.into()), startup_timeout: Some(5.0), ..ServerSpec::default() },
        origin: Origin::User,
    };
    let wrong = format!("{}/nothing-here", url.trim_end_matches("/mcp"));
    let html = octo_testkit::wiremock::MockServer::start().await;
    octo_testkit::wiremock::Mock::given(octo_testkit::wiremock::matchers::any())
        .respond_with(
            octo_testkit::wiremock::ResponseTemplate::new(200).set_body_raw("<html>hi</html>", "text/html"),
        )
        .mount(&html)
        .await;
    let denied = octo_testkit::wiremock::MockServer::start().await;
    octo_testkit::wiremock::Mock::given(octo_testkit::wiremock::matchers::any())
        .respond_with(octo_testkit::wiremock::ResponseTemplate::new(401))
        .mount(&denied)
        .await;
    let (hub, source) = hub(vec![
        http("web", &url),
        http("lost", &wrong),
        http("page", &format!("{}/mcp", html.uri())),
        http("locked", &format!("{}/mcp", denied.uri())),
    ])
    .await;
    assert_eq!(
        call(&source, "mcp__web__echo", json!({"text": "over http"})).await.text_content(),
        "over http"
    );
    let notices = hub.take_notices().join("\n");
    for name in ["lost", "page", "locked"] {
        assert!(notices.contains(&format!("`{name}`")), "{name} in {notices}");
    }
    hub.shutdown();
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_gets_no_keys_from_octos_environment() {
    // The test process's own environment stands for octo's: it has PATH and, here, a key.
    // (Set through the server's config, a variable does reach it: that is the user's choice.)
    let mut with_env = stdio("t", &[]);
    with_env.spec.env = [("CHOSEN".to_owned(), "yes".to_owned())].into_iter().collect();
    let (hub, source) = hub(vec![with_env]).await;
    let get = |name: &str| call(&source, "mcp__t__getenv", json!({"name": name}));
    assert_ne!(get("PATH").await.text_content(), "(unset)", "PATH is passed");
    assert_eq!(get("CHOSEN").await.text_content(), "yes");
    for secret in ["CARGO_PKG_NAME", "RUST_TEST_THREADS", "OCTO_TEST_GGUF", "CARGO_MANIFEST_DIR"] {
        if std::env::var_os(secret).is_some() {
            assert_eq!(get(secret).await.text_content(), "(unset)", "{secret} reached the server");
        }
    }
    hub.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_server_that_forgot_its_session_is_joined_again_not_waited_on() {
    let (url, stop, forget) =
        octo_testkit::mcp::serve_http_forgetful(octo_testkit::mcp::Options::default()).await;
    let mut server = ServerConfig {
        name: "h".into(),
        spec: ServerSpec { url: Some(url), ..ServerSpec::default() },
        origin: Origin::User,
    };
    server.spec.call_timeout = Some(20.0);
    let (hub, source) = hub(vec![server]).await;
    assert_eq!(call(&source, "mcp__h__echo", json!({"text": "one"})).await.text_content(), "one");
    // The server restarts: the old session id now gets 400 (not 404).
    forget.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut answered = call(&source, "mcp__h__echo", json!({"text": "two"})).await;
    if answered.is_error {
        // At most the call in flight fails, saying so; the next one joins a new session.
        answered = call(&source, "mcp__h__echo", json!({"text": "two"})).await;
    }
    assert_eq!(answered.text_content(), "two", "{}", answered.text_content());
    hub.shutdown();
    stop.cancel();
}
