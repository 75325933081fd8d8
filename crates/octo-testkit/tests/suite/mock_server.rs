//! The mock server answers in script order and records what it was sent.

use octo_testkit::{anthropic, openai, MockLlm, Scripted, TempHome};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A minimal HTTP/1.1 POST over a raw socket, so the testkit needs no HTTP client of its own.
async fn post(base: &str, path: &str, body: &str) -> (u16, String, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nX-Api-Key: test-key\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

#[tokio::test]
async fn anthropic_replies_come_in_order_then_a_clear_500() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(anthropic::Reply::new().text("first").sse()),
        Scripted::json(429, &anthropic::error_body("rate_limit_error", "slow down"))
            .header("retry-after", "7"),
    ])
    .await;
    let (s1, h1, b1) = post(&llm.uri(), "/v1/messages", r#"{"n":1}"#).await;
    assert_eq!(s1, 200);
    assert!(h1.to_ascii_lowercase().contains("content-type: text/event-stream"));
    assert!(b1.contains("first") || b1.contains("fir"));
    let (s2, h2, b2) = post(&llm.uri(), "/v1/messages", r#"{"n":2}"#).await;
    assert_eq!(s2, 429);
    assert!(h2.to_ascii_lowercase().contains("retry-after: 7"));
    assert!(b2.contains("rate_limit_error"));
    let (s3, _, b3) = post(&llm.uri(), "/v1/messages", "{}").await;
    assert_eq!(s3, 500);
    assert!(b3.contains("request #3 was not scripted"), "{b3}");

    let reqs = llm.requests().await;
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[1].json(), json!({"n": 2}));
    assert_eq!(reqs[0].header("X-API-KEY"), Some("test-key"));
    assert_eq!(reqs[0].path, "/v1/messages");
}

#[tokio::test]
async fn openai_route_accepts_any_prefix() {
    let llm = MockLlm::start().await;
    llm.script_openai([
        Scripted::sse(openai::Reply::new().text("a").sse()),
        Scripted::sse(openai::Reply::new().text("b").sse()),
    ])
    .await;
    let (s1, _, b1) = post(&llm.uri(), "/v1/chat/completions", "{}").await;
    let (s2, _, b2) = post(&llm.uri(), "/api/paas/v4/chat/completions", "{}").await;
    assert_eq!((s1, s2), (200, 200));
    assert!(b1.contains("\"content\":\"a\"") && b2.contains("\"content\":\"b\""));
    let (s3, _, _) = post(&llm.uri(), "/v1/messages", "{}").await;
    assert_eq!(s3, 404, "the OpenAI script does not answer the Anthropic route");
    assert_eq!(llm.request_bodies().await.len(), 3);
}

#[test]
fn temp_home_writes_into_the_workspace() {
    let home = TempHome::new().unwrap();
    let p = home.write("src/lib.rs", "fn x() {}").unwrap();
    assert_eq!(std::fs::read_to_string(p).unwrap(), "fn x() {}");
    assert!(home.home().is_dir());
}
