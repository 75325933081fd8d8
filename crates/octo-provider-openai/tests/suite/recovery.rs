//! What real endpoints do to a stream, before and after content (the OpenAI protocol): each
//! retryable failure costs one more request and leaves no trace of the broken reply; a whole
//! JSON reply streams; an answer that is not the API is explained at once; a local server is
//! asked for its context window and the output cap kept inside it.

use super::common::*;
use futures_util::StreamExt;
use octo_agent::*;
use octo_provider_openai::{LocalServer, OpenAiSender};
use octo_testkit::openai::Reply;
use octo_testkit::raw::{self, After};
use octo_testkit::wiremock::matchers::{method, path};
use octo_testkit::wiremock::{Mock, ResponseTemplate};
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const VOID: &str = "THIS PART IS VOID";
const ANSWER: &str = "the whole answer";

fn good() -> Answer {
    (raw::sse_response(&Reply::new().text(ANSWER).sse()), After::Close)
}

/// Chunks carrying `VOID`, with no finish reason and no `[DONE]`.
fn partial() -> String {
    Reply::new().text(VOID).no_finish_reason().without_done().without_usage().sse()
}

fn error_chunk(kind: &str, code: &str) -> String {
    format!("data: {{\"error\":{{\"message\":\"{kind} now\",\"type\":\"{kind}\",\"code\":\"{code}\"}}}}\n\n")
}

/// A scripted response: raw bytes, then what the server does.
type Answer = (Vec<u8>, After);

/// Failure cases: (name, the first response, whether content came before the failure).
fn failures() -> Vec<(&'static str, Answer, bool)> {
    let cut = |body: &str| {
        let mut v = raw::sse_head();
        v.extend(raw::chunk(body));
        v.extend(b"40\r\ndata: {\"choices\":[{\"delta\":{\"con".to_vec());
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
        ("early close before content", (cut(": keep-alive\n\n"), After::Close), false),
        ("early close after content", (cut(&partial()), After::Close), true),
        ("malformed chunk before content", (raw::sse_response("data: {not json\n\n"), After::Close), false),
        (
            "malformed chunk after content",
            (raw::sse_response(&(partial() + "data: {not json\n\n")), After::Close),
            true,
        ),
        (
            "overloaded chunk after content",
            (raw::sse_response(&(partial() + &error_chunk("server_overloaded", "overloaded"))), After::Close),
            true,
        ),
        (
            "server error chunk after content",
            (raw::sse_response(&(partial() + &error_chunk("server_error", "internal"))), After::Close),
            true,
        ),
        (
            "rate limit chunk after content",
            (
                raw::sse_response(&(partial() + &error_chunk("rate_limit_exceeded", "rate_limit_exceeded"))),
                After::Close,
            ),
            true,
        ),
        ("stall before content", (open(""), hang), false),
        ("stall after content", (open(&partial()), hang), true),
    ]
}

fn fast(base: &str) -> OpenAiSender {
    let mut c = config("openai", base);
    c.settings.http.stall_timeout = Duration::from_millis(400);
    OpenAiSender::new(c).unwrap()
}

async fn turn(sender: OpenAiSender) -> (Agent, Vec<AgentEvent>) {
    let mut a = Agent::builder(Arc::new(sender)).build();
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
async fn a_non_retryable_error_chunk_after_content_is_not_retried() {
    let body = partial() + &error_chunk("invalid_request_error", "invalid_value");
    let server = raw::serve_sequence(vec![(raw::sse_response(&body), After::Close), good()]).await.unwrap();
    let (agent, events) = turn(fast(&server.base)).await;
    assert_eq!(server.connections(), 1);
    assert!(agent.history().is_empty());
    assert!(
        events.iter().any(|e| matches!(e, AgentEvent::Error { kind: ErrorKind::InvalidRequest, .. })),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_whole_json_reply_to_a_streaming_request_streams_as_one() {
    let llm = MockLlm::start().await;
    llm.script_openai([
        Scripted::json(200, &Reply::new().text("from a whole reply").json()),
        Scripted::json(200, &Reply::new().tool_call("call_1", "lookup", r#"{"word":"x"}"#).json()),
    ])
    .await;
    let s = sender("openai", &llm.uri());
    let msgs = [Message::user("hi")];
    let (_, r) = stream_once(&s, Request::new(&msgs)).await;
    assert_eq!(r.unwrap().response.message.text(), "from a whole reply");
    let (_, r) = stream_once(&s, Request::new(&msgs)).await;
    let r = r.unwrap().response;
    let call = r.message.tool_uses().next().unwrap();
    assert_eq!((call.name, call.input), ("lookup", &json!({"word": "x"})));
    assert_eq!(r.stop_reason, StopReason::ToolUse);
    assert_eq!(llm.requests().await.len(), 2, "nothing retried");
}

#[tokio::test]
async fn html_plain_text_and_empty_200s_are_explained_at_once() {
    // One empty answer is tried again, and the second attempt answers.
    let llm = MockLlm::start().await;
    llm.script_openai([
        Scripted::raw(200, "text/event-stream", ""),
        Scripted::sse(Reply::new().text("yes").sse()),
    ])
    .await;
    let mut a = Agent::builder(Arc::new(sender("openai", &llm.uri()))).build();
    let out = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "yes");
    assert_eq!(llm.requests().await.len(), 2, "the empty answer was tried once more");
    for (ct, body, want) in [
        ("text/html", "<html><body>Captive portal: accept the terms</body></html>", "HTML page"),
        ("text/plain", "Not Found", "`text/plain` starting \"Not Found\""),
    ] {
        let llm = MockLlm::start().await;
        llm.script_openai([Scripted::raw(200, ct, body), Scripted::sse(Reply::new().text("no").sse())]).await;
        let mut a = Agent::builder(Arc::new(sender("openai", &llm.uri()))).build();
        let err = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BadEndpoint, "{err}");
        let msg = err.to_string();
        assert!(msg.contains(want) && msg.contains("/v1"), "{msg}");
        assert_eq!(llm.requests().await.len(), 1, "not retried");
    }
}

#[tokio::test]
async fn a_local_servers_window_is_asked_once_and_the_output_cap_kept_inside_it() {
    let llm = MockLlm::start().await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"default_generation_settings": {"n_ctx": 8192}})),
        )
        .mount(llm.server())
        .await;
    llm.script_openai([
        Scripted::sse(Reply::new().text("one").sse()),
        Scripted::sse(Reply::new().text("two").sse()),
    ])
    .await;
    let mut c = config("llamacpp", &llm.uri());
    assert_eq!(c.discover, Some(LocalServer::LlamaCpp));
    c.settings.max_tokens = Some(32_000);
    let s = OpenAiSender::new(c).unwrap();
    let long = "word ".repeat(4_000); // about 5,000 tokens by octo's estimate
    let msgs = [Message::user(long)];
    stream_once(&s, Request::new(&msgs)).await.1.unwrap();
    stream_once(&s, Request::new(&[Message::user("short")])).await.1.unwrap();
    assert_eq!(octo_agent::Sender::context_window(&s), Some(8192));
    let all = llm.all_requests().await;
    assert_eq!(all.iter().filter(|r| r.path == "/props").count(), 1, "asked once");
    let bodies = llm.request_bodies().await;
    let first = bodies[0]["max_tokens"].as_u64().unwrap();
    assert!(first + 5_000 <= 8192, "prompt plus output fit the window: {first}");
    let second = bodies[1]["max_tokens"].as_u64().unwrap();
    assert!(second > first && second < 8192, "{second}");
}

#[tokio::test]
async fn ollama_reports_the_context_it_runs_with() {
    let llm = MockLlm::start().await;
    Mock::given(method("POST"))
        .and(path("/api/show"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "parameters": "num_ctx 4096",
            "model_info": {"qwen2.context_length": 32768}
        })))
        .mount(llm.server())
        .await;
    llm.script_openai([Scripted::sse(Reply::new().text("one").sse())]).await;
    let s = sender("ollama", &llm.uri());
    stream_once(&s, Request::new(&[Message::user("hi")])).await.1.unwrap();
    assert_eq!(octo_agent::Sender::context_window(&s), Some(4096));
    let show = llm.all_requests().await.into_iter().find(|r| r.path == "/api/show").unwrap();
    assert_eq!(show.json()["model"], "qwen2.5-coder");
}

#[tokio::test]
async fn a_server_that_knows_nothing_leaves_the_window_to_the_catalog() {
    let llm = MockLlm::start().await;
    llm.script_openai([Scripted::sse(Reply::new().text("one").sse())]).await;
    let s = sender("vllm", &llm.uri());
    stream_once(&s, Request::new(&[Message::user("hi")])).await.1.unwrap();
    assert_eq!(octo_agent::Sender::context_window(&s), None);
    assert!(llm.request_bodies().await[0].get("max_tokens").is_none(), "no cap invented");
}
