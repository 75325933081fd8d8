//! The retrying, stall-detecting SSE transport against local servers.

use futures_util::StreamExt;
use octo_agent::{ProviderError, StreamEvent};
use octo_provider::sse::SseEvent;
use octo_provider::*;
use octo_testkit::raw::{self, After};
use octo_testkit::{MockLlm, Scripted};
use std::time::Duration;

/// Passes `data` through as text; `[END]` closes the stream.
#[derive(Default, Clone)]
struct Echo {
    done: bool,
}

impl StreamParser for Echo {
    fn event(&mut self, ev: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if ev.data == "[END]" {
            self.done = true;
        } else if ev.event == "error" {
            return Err(ProviderError::Server { status: None, message: ev.data });
        } else {
            out.push(StreamEvent::TextDelta(ev.data));
        }
        Ok(())
    }
    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        Err(ProviderError::Transport { message: "stream ended before [END]".into() })
    }
    fn finished(&self) -> bool {
        self.done
    }
    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        out.push(StreamEvent::TextDelta(format!("whole:{}", String::from_utf8_lossy(body))));
        self.done = true;
        Ok(())
    }
}

fn transport(base: &str, retry: RetryPolicy, stall: Duration) -> Transport {
    let cfg = HttpConfig { retry, stall_timeout: stall, first_byte_timeout: stall, ..HttpConfig::default() };
    let ep = EndpointInfo::new("mock", base, "m", "set MOCK_KEY");
    Transport::new(build_client(&cfg).unwrap(), &cfg, ep, Some("sk-test-secret".into()))
}

fn fast_retry(n: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts: n,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(20),
        ..RetryPolicy::default()
    }
}

fn req(base: &str) -> PreparedRequest {
    PreparedRequest { url: format!("{base}/v1/messages"), headers: Default::default(), body: "{}".into() }
}

async fn collect(s: octo_agent::EventStream) -> Vec<Result<StreamEvent, ProviderError>> {
    s.collect().await
}

#[tokio::test]
async fn retries_overload_then_streams_with_retry_events() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::raw(
            529,
            "application/json",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        Scripted::raw(503, "text/plain", "try later").header("retry-after", "0"),
        Scripted::sse("data: a\n\ndata: b\n\ndata: [END]\n\ndata: ignored\n\n"),
    ])
    .await;
    let t = transport(&llm.uri(), fast_retry(4), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    let items: Vec<StreamEvent> = items.into_iter().map(Result::unwrap).collect();
    assert!(
        matches!(&items[0], StreamEvent::Retry { attempt: 2, max_attempts: 4, reason, .. } if reason.contains("Overloaded"))
    );
    assert!(matches!(&items[1], StreamEvent::Retry { attempt: 3, delay, .. } if *delay == Duration::ZERO));
    assert_eq!(&items[2..], [StreamEvent::TextDelta("a".into()), StreamEvent::TextDelta("b".into())]);
    assert_eq!(llm.requests().await.len(), 3);
}

#[tokio::test]
async fn gives_up_after_max_attempts_with_the_last_error() {
    let llm = MockLlm::start().await;
    llm.script_anthropic((0..5).map(|_| Scripted::raw(500, "text/plain", "boom"))).await;
    let t = transport(&llm.uri(), fast_retry(3), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(items.iter().filter(|i| matches!(i, Ok(StreamEvent::Retry { .. }))).count(), 2);
    assert!(matches!(items.last(), Some(Err(ProviderError::Server { status: Some(500), .. }))));
    assert_eq!(llm.requests().await.len(), 3);
}

#[tokio::test]
async fn auth_errors_are_not_retried_and_never_show_the_key() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::raw(
        401,
        "application/json",
        r#"{"error":{"message":"bad key sk-test-secret"}}"#,
    )])
    .await;
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(items.len(), 1);
    let Err(ProviderError::Auth { message }) = &items[0] else { panic!("{items:?}") };
    assert!(message.contains("set MOCK_KEY") && !message.contains("sk-test-secret"), "{message}");
    assert_eq!(llm.requests().await.len(), 1);
}

#[tokio::test]
async fn a_body_that_ends_early_is_an_error_from_the_parser() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse("data: a\n\n")]).await;
    let t = transport(&llm.uri(), RetryPolicy::none(), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(items[0], Ok(StreamEvent::TextDelta("a".into())));
    assert!(
        matches!(&items[1], Err(ProviderError::Transport { message }) if message.contains("before [END]"))
    );
}

#[tokio::test]
async fn a_stream_that_stalls_mid_body_fails_as_stalled() {
    let mut resp = raw::sse_head();
    resp.extend(raw::chunk("data: first\n\n"));
    let base = raw::serve(resp, After::Hang(Duration::from_secs(30))).await.unwrap();
    let t = transport(&base, RetryPolicy::none(), Duration::from_millis(300));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    assert_eq!(items[0], Ok(StreamEvent::TextDelta("first".into())));
    assert!(
        matches!(&items[1], Err(ProviderError::Transport { message }) if message.contains("stalled")),
        "{items:?}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let base = raw::serve(Vec::new(), After::Hang(Duration::from_secs(30))).await.unwrap();
    let t = transport(&base, RetryPolicy::none(), Duration::from_millis(300));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    assert!(
        matches!(&items[0], Err(ProviderError::Transport { message }) if message.contains("no response within")),
        "{items:?}"
    );
}

#[tokio::test]
async fn a_connection_cut_mid_chunk_is_a_transport_error() {
    let mut resp = raw::sse_head();
    resp.extend(raw::chunk("data: one\n\n"));
    resp.extend(b"40\r\ndata: cut off her".to_vec());
    let base = raw::serve(resp, After::Close).await.unwrap();
    let t = transport(&base, RetryPolicy::none(), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    assert_eq!(items[0], Ok(StreamEvent::TextDelta("one".into())));
    assert!(matches!(items.last(), Some(Err(ProviderError::Transport { .. }))), "{items:?}");
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let t = transport(&base, fast_retry(2), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    assert!(matches!(&items[0], Ok(StreamEvent::Retry { .. })));
    let Some(Err(ProviderError::Transport { message })) = items.last() else { panic!("{items:?}") };
    assert!(message.contains("could not connect") && message.contains("`mock`"), "{message}");
}

#[tokio::test]
async fn buffered_post_retries_and_returns_the_body() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::raw(429, "application/json", r#"{"error":{"message":"slow"}}"#).header("retry-after", "0"),
        Scripted::json(200, &serde_json::json!({"ok": true})),
    ])
    .await;
    let t = transport(&llm.uri(), fast_retry(3), Duration::from_secs(5));
    let body = t.post_json(&req(&llm.uri())).await.unwrap();
    assert_eq!(&body[..], br#"{"ok":true}"#);
    assert_eq!(llm.requests().await.len(), 2);
}

#[tokio::test]
async fn a_failure_before_any_content_is_retried_with_a_fresh_parser() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse("event: error\ndata: overloaded\n\n"),
        Scripted::sse(": only a keep-alive, then the end\n\n"),
        Scripted::sse("data: fine\n\ndata: [END]\n\n"),
    ])
    .await;
    let t = transport(&llm.uri(), fast_retry(4), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    let items: Vec<StreamEvent> = items.into_iter().map(Result::unwrap).collect();
    assert!(matches!(&items[0], StreamEvent::Retry { attempt: 2, .. }));
    assert!(
        matches!(&items[1], StreamEvent::Retry { attempt: 3, reason, .. } if reason.contains("before [END]"))
    );
    assert_eq!(items[2], StreamEvent::TextDelta("fine".into()));
    assert_eq!(llm.requests().await.len(), 3);
}

#[tokio::test]
async fn an_error_body_that_never_ends_does_not_hang() {
    let mut resp =
        b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    resp.extend(raw::chunk("upstream is"));
    let base = raw::serve(resp, After::Hang(Duration::from_secs(30))).await.unwrap();
    let t = transport(&base, RetryPolicy::none(), Duration::from_millis(300));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    assert!(matches!(&items[0], Err(ProviderError::Server { status: Some(502), .. })), "{items:?}");
}

#[tokio::test]
async fn an_error_event_mid_stream_ends_it_when_no_attempts_are_left() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse("data: a\n\nevent: error\ndata: kaput\n\ndata: b\n\n")]).await;
    let t = transport(&llm.uri(), RetryPolicy::none(), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(items.len(), 2);
    assert!(matches!(&items[1], Err(ProviderError::Server { message, .. }) if message == "kaput"));
}

/// The items of a stream, with retries shown as `retry` or `restart` and errors as `err`.
fn shape(items: &[Result<StreamEvent, ProviderError>]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Ok(StreamEvent::TextDelta(t)) => t.clone(),
            Ok(StreamEvent::Retry { restart: true, .. }) => "restart".into(),
            Ok(StreamEvent::Retry { .. }) => "retry".into(),
            Ok(other) => format!("{other:?}"),
            Err(e) => format!("err: {e}"),
        })
        .collect()
}

#[tokio::test]
async fn failures_after_content_restart_the_reply_within_the_same_attempts() {
    // An error event, a stream cut before its end, and a reset connection, each after content.
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse("data: a\n\nevent: error\ndata: overloaded\n\n"),
        Scripted::sse("data: b\n\n"),
        Scripted::sse("data: whole\n\ndata: [END]\n\n"),
    ])
    .await;
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(shape(&items), ["a", "restart", "b", "restart", "whole"]);
    assert_eq!(llm.requests().await.len(), 3);

    let mut resp = raw::sse_head();
    resp.extend(raw::chunk("data: half\n\n"));
    resp.extend(b"40\r\ndata: cut off her".to_vec());
    let base = raw::serve(resp, After::Close).await.unwrap();
    let t = transport(&base, fast_retry(2), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    let s = shape(&items);
    assert_eq!(&s[..2], ["half", "restart"], "{s:?}");
    assert!(s.last().is_some_and(|l| l.starts_with("err:")), "the budget is shared: {s:?}");
}

#[tokio::test]
async fn a_stall_after_content_restarts_and_is_reported_once_the_budget_is_spent() {
    let mut resp = raw::sse_head();
    resp.extend(raw::chunk("data: first\n\n"));
    let base = raw::serve(resp, After::Hang(Duration::from_secs(30))).await.unwrap();
    let t = transport(&base, fast_retry(2), Duration::from_millis(300));
    let items = collect(t.post_sse(req(&base), Echo::default())).await;
    let s = shape(&items);
    assert_eq!(&s[..2], ["first", "restart"], "{s:?}");
    assert!(s.last().is_some_and(|l| l.contains("stalled") || l.contains("no response")), "{s:?}");
}

#[tokio::test]
async fn a_non_retryable_error_after_content_is_not_retried() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse("data: a\n\nevent: error\ndata: kaput\n\n")]).await;
    // The Echo parser reports error events as `Server`; an auth-like kind is not retried.
    #[derive(Clone, Default)]
    struct Strict(Echo);
    impl StreamParser for Strict {
        fn event(&mut self, ev: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
            if ev.event == "error" {
                return Err(ProviderError::InvalidRequest { status: None, message: ev.data });
            }
            self.0.event(ev, out)
        }
        fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
            self.0.end(out)
        }
        fn finished(&self) -> bool {
            self.0.finished()
        }
        fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
            self.0.whole(body, out)
        }
    }
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Strict::default())).await;
    assert_eq!(shape(&items), ["a", "err: invalid request: kaput"]);
    assert_eq!(llm.requests().await.len(), 1);
}

#[tokio::test]
async fn a_whole_json_reply_to_a_streaming_request_is_parsed_as_one() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::json(200, &serde_json::json!({"answer": 42}))]).await;
    let t = transport(&llm.uri(), fast_retry(3), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(shape(&items), [r#"whole:{"answer":42}"#]);
}

#[tokio::test]
async fn answers_that_are_not_the_api_are_explained_and_not_retried() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::raw(200, "text/html; charset=utf-8", "<!DOCTYPE html><html><title>Sign in</title></html>"),
        Scripted::raw(200, "text/plain", "Not the API"),
        Scripted::raw(200, "text/event-stream", ""),
        Scripted::raw(200, "text/event-stream", ""),
    ])
    .await;
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let url = format!("{}/v1/messages", llm.uri());
    for want in ["HTML page", "`text/plain` starting \"Not the API\"", "empty body"] {
        let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
        // An empty answer is tried once more (a proxy or a restarting server does it once).
        let retried = usize::from(want == "empty body");
        assert_eq!(items.len(), 1 + retried, "{items:?}");
        let Err(ProviderError::BadEndpoint { message }) = &items[retried] else { panic!("{items:?}") };
        assert!(message.contains(want) && message.contains(&url), "{message}");
        if retried == 1 {
            assert!(
                message.contains("twice") && !message.contains("context"),
                "a short request is not blamed on the window: {message}"
            );
        }
    }
    assert_eq!(llm.requests().await.len(), 4, "one request each, the empty one twice");
    // The buffered path refuses them too.
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::raw(200, "text/html", "<html><body>portal</body></html>")]).await;
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let err = t.post_json(&req(&llm.uri())).await.unwrap_err();
    assert!(matches!(err, ProviderError::BadEndpoint { .. }), "{err:?}");
}

#[tokio::test]
async fn a_stall_is_retried_once_not_until_the_attempts_run_out() {
    // Every attempt stalls after its first bytes: one retry, then the error (not five).
    let mut resp = raw::sse_head();
    resp.extend(raw::chunk("data: first\n\n"));
    let server = raw::serve_sequence(vec![(resp, After::Hang(Duration::from_secs(30)))]).await.unwrap();
    let t = transport(&server.base, fast_retry(5), Duration::from_millis(200));
    let items = collect(t.post_sse(req(&server.base), Echo::default())).await;
    let retries = items.iter().filter(|i| matches!(i, Ok(StreamEvent::Retry { .. }))).count();
    assert_eq!(retries, 1, "{items:?}");
    assert!(
        matches!(items.last(), Some(Err(ProviderError::Transport { message })) if message.contains("stalled")),
        "{items:?}"
    );
    assert_eq!(server.connections(), 2);
    // Nothing at all (not even the head): the first-byte wait, also retried once.
    let server = raw::serve_sequence(vec![(Vec::new(), After::Hang(Duration::from_secs(30)))]).await.unwrap();
    let t = transport(&server.base, fast_retry(5), Duration::from_millis(200));
    let items = collect(t.post_sse(req(&server.base), Echo::default())).await;
    assert!(
        matches!(items.last(), Some(Err(ProviderError::Transport { message })) if message.contains("no first byte")),
        "{items:?}"
    );
    assert_eq!(server.connections(), 2);
}

#[tokio::test]
async fn a_validation_error_in_a_huge_body_is_shown_once_capped_and_not_retried() {
    let llm = MockLlm::start().await;
    let dump: String = (0..49)
        .map(|i| {
            format!("{{\"loc\":[\"messages\",{i},\"content\"],\"msg\":\"Input should be a valid string\"}}\n")
        })
        .collect();
    let body = serde_json::json!({"error": {"message": format!("49 validation errors for ChatRequest\n{}", dump.repeat(10)), "type": "server_error"}});
    llm.script_anthropic([Scripted::json(500, &body), Scripted::json(500, &body)]).await;
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(items.len(), 1, "not retried: {items:?}");
    let Err(e) = &items[0] else { panic!("{items:?}") };
    let text = e.to_string();
    assert!(matches!(e, ProviderError::InvalidRequest { status: Some(500), .. }), "{e:?}");
    assert!(
        text.lines().count() <= 7 && text.len() < 1000,
        "capped: {} lines, {} bytes",
        text.lines().count(),
        text.len()
    );
    assert!(text.contains("validation errors") && text.contains("characters in all"), "{text}");
    assert_eq!(llm.requests().await.len(), 1);
}

#[tokio::test]
async fn a_4xx_with_a_50_kb_body_is_shown_once_capped_and_not_retried() {
    let llm = MockLlm::start().await;
    let detail: String = (0..800).map(|i| format!("field_{i}: this value is not allowed here\n")).collect();
    assert!(detail.len() > 30_000);
    let body = serde_json::json!({"error": {"type": "invalid_request_error", "message": format!("{detail}{detail}")}});
    assert!(body.to_string().len() > 50_000);
    llm.script_anthropic([Scripted::json(422, &body), Scripted::json(422, &body)]).await;
    let t = transport(&llm.uri(), fast_retry(5), Duration::from_secs(5));
    let items = collect(t.post_sse(req(&llm.uri()), Echo::default())).await;
    assert_eq!(items.len(), 1, "not retried: {items:?}");
    let Err(e) = &items[0] else { panic!("{items:?}") };
    let text = e.to_string();
    assert!(text.lines().count() <= 7 && text.len() < 1000, "capped: {} bytes: {text}", text.len());
    assert!(text.contains("422") || text.contains("field_0"), "{text}");
    assert_eq!(llm.requests().await.len(), 1, "a 4xx is not retried");
}

/// A buffered request whose server never answers fails at `request_timeout`, saying so, and is
/// not sent again (a whole generation that ran out of time would likely run out again, and may
/// be billed twice).
#[tokio::test]
async fn a_buffered_request_that_never_completes_fails_at_its_limit_once() {
    let server = raw::serve_sequence(vec![(Vec::new(), After::Hang(Duration::from_secs(30)))]).await.unwrap();
    let cfg =
        HttpConfig { retry: fast_retry(5), request_timeout: Duration::from_secs(1), ..HttpConfig::default() };
    let ep = EndpointInfo::new("mock", &server.base, "m", "set MOCK_KEY");
    let t = Transport::new(build_client(&cfg).unwrap(), &cfg, ep, Some("sk-test-secret".into()));
    let err = t.post_json(&req(&server.base)).await.unwrap_err();
    assert!(err.to_string().contains("no complete response within 1s"), "{err}");
    assert_eq!(server.connections(), 1, "not retried");
}

/// A listener whose accept queue is full: the kernel drops further connection attempts, so a
/// connect hangs as it does to a host that is down; offline, on loopback. The fillers are kept.
fn never_accepting() -> (String, Vec<std::net::TcpStream>) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let listener = socket.listen(0).unwrap();
    std::mem::forget(listener);
    let mut fillers = Vec::new();
    for _ in 0..8 {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(s) => fillers.push(s),
            Err(_) => break,
        }
    }
    (format!("http://{addr}"), fillers)
}

/// The connect limit (`connect_timeout`) ends a connection that is never accepted, once per
/// attempt, and the error says it was the connection.
#[tokio::test]
async fn a_server_that_never_accepts_fails_at_the_connect_timeout() {
    let (base, _fillers) = never_accepting();
    let cfg = HttpConfig {
        retry: fast_retry(2),
        connect_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(60),
        ..HttpConfig::default()
    };
    let ep = EndpointInfo::new("mock", &base, "m", "set MOCK_KEY");
    let t = Transport::new(build_client(&cfg).unwrap(), &cfg, ep, Some("sk-test-secret".into()));
    let started = std::time::Instant::now();
    let err = t.post_json(&req(&base)).await.unwrap_err();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1900) && took < Duration::from_secs(8), "{took:?}: {err}");
    let text = err.to_string().to_ascii_lowercase();
    assert!(text.contains("connect"), "{err}");
    assert!(!text.contains("sk-test-secret"), "{err}");
}
