//! What real endpoints do to a stream, before and after content: each retryable failure costs one
//! more request and leaves no trace of the broken reply; a whole JSON reply streams; an answer
//! that is not the API is explained at once.

use super::common::*;
use futures_util::StreamExt;
use octo_agent::*;
use octo_provider_anthropic::AnthropicSender;
use octo_testkit::anthropic::Reply;
use octo_testkit::raw::{self, After};
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;
use std::time::Duration;

const VOID: &str = "THIS PART IS VOID";
const ANSWER: &str = "the whole answer";

fn good() -> Answer {
    (raw::sse_response(&Reply::new().text(ANSWER).sse()), After::Close)
}

/// The events of a reply cut before its end, carrying `VOID`.
fn partial() -> String {
    Reply::new().text(VOID).sse_truncated()
}

fn error_event(kind: &str) -> String {
    format!("event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"{kind}\",\"message\":\"{kind} now\"}}}}\n\n")
}

/// A scripted response: raw bytes, then what the server does.
type Answer = (Vec<u8>, After);

/// Failure cases: (name, the first response, whether content came before the failure).
fn failures() -> Vec<(&'static str, Answer, bool)> {
    let cut = |body: &str| {
        let mut v = raw::sse_head();
        v.extend(raw::chunk(body));
        v.extend(b"40\r\ndata: cut off in the midd".to_vec());
        v
    };
    let open = |body: &str| {
        let mut v = raw::sse_head();
        if !body.is_empty() {
            v.extend(raw::chunk(body));
        }
        v
    };
    let hang = After::Hang(Duration::from_secs(30));
    vec![
        ("reset before content", (open(""), After::Reset), false),
        ("reset after content", (open(&partial()), After::Reset), true),
        ("early close before content", (cut(": ping\n\n"), After::Close), false),
        ("early close after content", (cut(&partial()), After::Close), true),
        (
            "malformed event before content",
            (raw::sse_response("event: message_start\ndata: {\n\n"), After::Close),
            false,
        ),
        (
            "malformed event after content",
            (raw::sse_response(&(partial() + "event: content_block_delta\ndata: {oops\n\n")), After::Close),
            true,
        ),
        (
            "overloaded event before content",
            (raw::sse_response(&error_event("overloaded_error")), After::Close),
            false,
        ),
        (
            "overloaded event after content",
            (raw::sse_response(&(partial() + &error_event("overloaded_error"))), After::Close),
            true,
        ),
        (
            "server error event after content",
            (raw::sse_response(&(partial() + &error_event("api_error"))), After::Close),
            true,
        ),
        (
            "rate limit event after content",
            (raw::sse_response(&(partial() + &error_event("rate_limit_error"))), After::Close),
            true,
        ),
        ("stall before content", (open(""), hang), false),
        ("stall after content", (open(&partial()), hang), true),
    ]
}

fn fast(base: &str) -> AnthropicSender {
    let mut c = config(base);
    c.settings.http.stall_timeout = Duration::from_millis(400);
    AnthropicSender::new(c).unwrap()
}

async fn turn(sender: AnthropicSender) -> (Agent, Vec<AgentEvent>) {
    let mut a = Agent::builder(std::sync::Arc::new(sender)).build();
    let events: Vec<AgentEvent> =
        a.turn_stream(Message::user("hi"), CancellationToken::new()).collect().await;
    (a, events)
}

#[tokio::test]
async fn every_retryable_failure_costs_one_request_and_leaves_no_trace() {
    for (name, failure, after_content) in failures() {
        let server = raw::serve_sequence(vec![failure, good()]).await.unwrap();
        let (agent, events) = turn(fast(&server.base)).await;
        let errors: Vec<&AgentEvent> =
            events.iter().filter(|e| matches!(e, AgentEvent::Error { .. })).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        assert_eq!(server.connections(), 2, "{name}: retried exactly once");
        assert_eq!(agent.history().len(), 2, "{name}");
        assert_eq!(agent.history()[1].text(), ANSWER, "{name}: the history holds only the new reply");
        let restarted = events.iter().any(|e| matches!(e, AgentEvent::Retry { restart: true, .. }));
        assert_eq!(restarted, after_content, "{name}: front ends are told the partial reply is void");
    }
}

#[tokio::test]
async fn failures_share_one_retry_budget() {
    let mut v = raw::sse_head();
    v.extend(raw::chunk(&partial()));
    let server = raw::serve_sequence(vec![(v, After::Reset)]).await.unwrap();
    let (agent, events) = turn(fast(&server.base)).await;
    assert_eq!(server.connections(), 3, "max_attempts is 3 in these tests");
    assert!(agent.history().is_empty());
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Error { kind: ErrorKind::Transport, .. })),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_non_retryable_error_event_after_content_is_not_retried() {
    let body = partial() + &error_event("invalid_request_error");
    let server = raw::serve_sequence(vec![(raw::sse_response(&body), After::Close), good()]).await.unwrap();
    let (agent, events) = turn(fast(&server.base)).await;
    assert_eq!(server.connections(), 1);
    assert!(agent.history().is_empty());
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { kind: ErrorKind::InvalidRequest, .. })));
}

#[tokio::test]
async fn a_whole_json_reply_to_a_streaming_request_streams_as_one() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::json(200, &Reply::new().text("from a whole reply").json()),
        Scripted::json(200, &Reply::new().tool_use("toolu_1", "lookup", json!({"word": "x"})).json()),
    ])
    .await;
    let s = sender(&llm.uri());
    let msgs = [Message::user("hi")];
    let (seen, r) = stream_once(&s, Request::new(&msgs)).await;
    assert_eq!(r.unwrap().message.text(), "from a whole reply");
    assert!(seen.iter().any(|e| matches!(e, StreamEvent::TextDelta(t) if t == "from a whole reply")));
    let (_, r) = stream_once(&s, Request::new(&msgs)).await;
    let r = r.unwrap();
    let call = r.message.tool_uses().next().unwrap();
    assert_eq!((call.name, call.input), ("lookup", &json!({"word": "x"})));
    assert_eq!(r.stop_reason, StopReason::ToolUse);
    assert_eq!(llm.requests().await.len(), 2, "nothing retried");
}

#[tokio::test]
async fn html_plain_text_and_empty_200s_are_explained_at_once() {
    // One empty answer is tried again, and the second attempt answers.
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::raw(200, "text/event-stream", ""),
        Scripted::sse(Reply::new().text("yes").sse()),
    ])
    .await;
    let mut a = Agent::builder(std::sync::Arc::new(sender(&llm.uri()))).build();
    let out = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "yes");
    assert_eq!(llm.requests().await.len(), 2, "the empty answer was tried once more");
    for (ct, body, want) in [
        (
            "text/html; charset=utf-8",
            "<!doctype html><html><head><title>Log in</title></head></html>",
            "HTML page",
        ),
        ("text/plain", "404 page not found", "`text/plain` starting \"404 page not found\""),
    ] {
        let llm = MockLlm::start().await;
        llm.script_anthropic([Scripted::raw(200, ct, body), Scripted::sse(Reply::new().text("no").sse())])
            .await;
        let mut a = Agent::builder(std::sync::Arc::new(sender(&llm.uri()))).build();
        let err = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BadEndpoint, "{err}");
        let msg = err.to_string();
        assert!(msg.contains(want) && msg.contains(&llm.uri()), "{msg}");
        assert_eq!(llm.requests().await.len(), 1, "not retried");
    }
}
