//! `web_fetch` and `web_search` against local mock servers.

use octo_agent::{ToolContext, ToolOutput};
use octo_testkit::wiremock::matchers::{header, method, path, query_param};
use octo_testkit::wiremock::{Mock, MockServer, ResponseTemplate};
use octo_tools::{default_registry, SearchEndpoints, ToolsConfig, WebConfig};
use serde_json::{json, Value};

async fn call(web: WebConfig, tool: &str, input: Value) -> ToolOutput {
    let reg = default_registry(ToolsConfig { web, ..ToolsConfig::default() });
    reg.get(tool).unwrap().execute(input, &ToolContext::detached(std::env::temp_dir())).await
}

fn endpoints(base: &str) -> SearchEndpoints {
    SearchEndpoints {
        duckduckgo: format!("{base}/ddg"),
        bing: format!("{base}/bing"),
        brave: format!("{base}/brave"),
        tavily: format!("{base}/tavily"),
        serper: format!("{base}/serper"),
    }
}

#[tokio::test]
async fn fetch_turns_html_into_markdown() {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/page"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<html><head><title>Docs</title><script>x()</script></head><body><h2>Install</h2><p>Run <code>make</code>.</p></body></html>",
            "text/html; charset=utf-8",
        ))
        .mount(&s)
        .await;
    let out = call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/page", s.uri())})).await;
    let text = out.text_content();
    assert!(!out.is_error);
    assert!(text.contains("# Docs\n\n## Install\n\nRun `make`."), "{text}");
    assert!(!text.contains("x()"));
}

#[tokio::test]
async fn fetch_follows_redirects_within_limits() {
    let s = MockServer::start().await;
    Mock::given(path("/old"))
        .respond_with(ResponseTemplate::new(301).insert_header("location", "/new"))
        .mount(&s)
        .await;
    Mock::given(path("/new"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("moved here", "text/plain"))
        .mount(&s)
        .await;
    Mock::given(path("/loop"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/loop"))
        .mount(&s)
        .await;
    let out = call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/old", s.uri())}))
        .await
        .text_content();
    assert!(out.contains("/new (200") && out.ends_with("moved here"), "{out}");
    let looped = call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/loop", s.uri())})).await;
    assert!(looped.is_error && looped.text_content().contains("redirect"), "{}", looped.text_content());
}

/// A redirect to another host (or port) is not followed: the model's next fetch of that URL goes
/// through the permission gate like any other.
#[tokio::test]
async fn fetch_reports_a_redirect_to_another_host_instead_of_following_it() {
    let other = MockServer::start().await;
    Mock::given(path("/secret-admin"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("internal", "text/plain"))
        .expect(0)
        .mount(&other)
        .await;
    let s = MockServer::start().await;
    let target = format!("http://localhost:{}/secret-admin", other.address().port());
    Mock::given(path("/go"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", target.as_str()))
        .mount(&s)
        .await;
    let out = call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/go", s.uri())})).await;
    let text = out.text_content();
    assert!(!out.is_error && text.contains("another host") && text.contains(&target), "{text}");
    assert!(!text.contains("internal"));
}

#[tokio::test]
async fn fetch_describes_binaries_caps_size_and_flags_http_errors() {
    let s = MockServer::start().await;
    Mock::given(path("/img"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(vec![0u8; 2048], "image/png"))
        .mount(&s)
        .await;
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("y".repeat(50_000), "text/plain"))
        .mount(&s)
        .await;
    Mock::given(path("/missing"))
        .respond_with(ResponseTemplate::new(404).set_body_raw("no such page", "text/plain"))
        .mount(&s)
        .await;
    Mock::given(path("/json"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(r#"{"a":1}"#, "application/json"))
        .mount(&s)
        .await;
    let img = call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/img", s.uri())}))
        .await
        .text_content();
    assert!(img.contains("image/png content, which cannot be shown"), "{img}");
    let small = WebConfig { fetch_max_bytes: 10_000, fetch_max_chars: 1_000, ..WebConfig::default() };
    let big = call(small, "web_fetch", json!({"url": format!("{}/big", s.uri())})).await.text_content();
    assert!(
        big.contains("download cut at the size limit") && big.contains("9000 more characters"),
        "{}",
        &big[..200]
    );
    let missing =
        call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/missing", s.uri())})).await;
    assert!(missing.is_error && missing.text_content().contains("(404"));
    let j = call(WebConfig::default(), "web_fetch", json!({"url": format!("{}/json", s.uri())}))
        .await
        .text_content();
    assert!(j.ends_with(r#"{"a":1}"#));
}

#[tokio::test]
async fn fetch_rejects_bad_urls() {
    for url in ["not a url", "file:///etc/passwd", "ftp://example.com/x"] {
        let out = call(WebConfig::default(), "web_fetch", json!({"url": url})).await;
        assert!(out.is_error, "{url}");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let refused =
        call(WebConfig::default(), "web_fetch", json!({"url": format!("http://127.0.0.1:{port}/")})).await;
    assert!(
        refused.is_error && refused.text_content().contains("could not connect"),
        "{}",
        refused.text_content()
    );
}

const DDG_PAGE: &str = r#"<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F">Tokio</a>
<a class="result__snippet">An asynchronous runtime.</a></div>"#;

#[tokio::test]
async fn search_without_keys_reads_duckduckgo() {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/ddg"))
        .and(query_param("q", "rust async"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(DDG_PAGE, "text/html"))
        .mount(&s)
        .await;
    let web = WebConfig { endpoints: endpoints(&s.uri()), ..WebConfig::default() };
    let out = call(web, "web_search", json!({"query": "rust async"})).await.text_content();
    assert_eq!(out, "Results from DuckDuckGo for `rust async`:\n\n1. Tokio\n   https://tokio.rs/\n   An asynchronous runtime.\n");
}

#[tokio::test]
async fn search_falls_back_to_bing_without_gzip() {
    let s = MockServer::start().await;
    Mock::given(path("/ddg"))
        .respond_with(ResponseTemplate::new(403).set_body_string("blocked"))
        .mount(&s)
        .await;
    let bing = r#"<li class="b_algo"><h2><a href="https://crates.io/">crates.io</a></h2><p>The Rust registry.</p></li>"#;
    Mock::given(path("/bing"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(bing, "text/html"))
        .mount(&s)
        .await;
    let web = WebConfig { endpoints: endpoints(&s.uri()), ..WebConfig::default() };
    let out = call(web, "web_search", json!({"query": "rust registry"})).await.text_content();
    assert!(out.starts_with("Results from Bing") && out.contains("https://crates.io/"), "{out}");
    let reqs = s.received_requests().await.unwrap();
    let to_bing = reqs.iter().find(|r| r.url.path() == "/bing").unwrap();
    let enc = to_bing
        .headers
        .get("accept-encoding")
        .map(|v| v.to_str().unwrap_or("").to_owned())
        .unwrap_or_default();
    assert!(!enc.contains("gzip"), "never ask Bing's HTML endpoint for gzip: {enc}");
}

#[tokio::test]
async fn search_apis_are_used_when_keys_are_set() {
    let s = MockServer::start().await;
    Mock::given(method("GET")).and(path("/brave")).and(header("X-Subscription-Token", "bk"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"web": {"results": [{"title": "B", "url": "https://b.example", "description": "from brave"}]}})))
        .mount(&s).await;
    Mock::given(method("POST"))
        .and(path("/tavily"))
        .and(header("authorization", "Bearer tk"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"results": [{"title": "T", "url": "https://t.example", "content": "from tavily"}]}),
        ))
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path("/serper"))
        .and(header("X-API-KEY", "sk"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"organic": [{"title": "S", "link": "https://s.example", "snippet": "from serper"}]}),
        ))
        .mount(&s)
        .await;
    let base = WebConfig { endpoints: endpoints(&s.uri()), ..WebConfig::default() };
    let brave = call(
        WebConfig { brave_api_key: Some("bk".into()), ..base.clone() },
        "web_search",
        json!({"query": "q"}),
    )
    .await;
    assert!(
        brave.text_content().starts_with("Results from Brave Search")
            && brave.text_content().contains("from brave")
    );
    let tavily = call(
        WebConfig { tavily_api_key: Some("tk".into()), ..base.clone() },
        "web_search",
        json!({"query": "q"}),
    )
    .await;
    assert!(
        tavily.text_content().starts_with("Results from Tavily")
            && tavily.text_content().contains("from tavily")
    );
    let serper = call(
        WebConfig { serper_api_key: Some("sk".into()), ..base.clone() },
        "web_search",
        json!({"query": "q"}),
    )
    .await;
    assert!(
        serper.text_content().starts_with("Results from Serper")
            && serper.text_content().contains("https://s.example")
    );
}

#[tokio::test]
async fn search_failure_says_what_to_do() {
    let s = MockServer::start().await;
    Mock::given(path("/ddg")).respond_with(ResponseTemplate::new(500)).mount(&s).await;
    Mock::given(path("/bing")).respond_with(ResponseTemplate::new(500)).mount(&s).await;
    let web = WebConfig { endpoints: endpoints(&s.uri()), ..WebConfig::default() };
    let out = call(web, "web_search", json!({"query": "x"})).await;
    assert!(out.is_error && out.text_content().contains("BRAVE_API_KEY"), "{}", out.text_content());
    let empty = call(WebConfig::default(), "web_search", json!({"query": "  "})).await;
    assert!(empty.is_error);
}
