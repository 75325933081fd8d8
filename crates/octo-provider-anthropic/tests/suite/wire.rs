//! The adapter against a mock Anthropic server: events, tool loops, retries and every bad input.

use super::common::*;
use futures_util::StreamExt;
use octo_agent::*;
use octo_provider_anthropic::{AnthropicSender, AuthStyle};
use octo_testkit::anthropic::{error_body, Reply};
use octo_testkit::raw::{self, After};
use octo_testkit::sse::SseBody;
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

struct Lookup;

#[async_trait]
impl ToolExecutor for Lookup {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "lookup",
            "Looks a word up.",
            json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}),
        )
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!("definition of {}", input["word"].as_str().unwrap_or("?")))
    }
}

fn agent(s: AnthropicSender) -> Agent {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Lookup));
    Agent::builder(Arc::new(s)).tools(tools).system_prompt("You are terse.").build()
}

async fn start(replies: Vec<Scripted>) -> MockLlm {
    let llm = MockLlm::start().await;
    llm.script_anthropic(replies).await;
    llm
}

#[tokio::test]
async fn streamed_text_answer_with_the_right_headers() {
    let llm = start(vec![Scripted::sse(Reply::new().text("Hello there, friend.").sse())]).await;
    let mut a = agent(sender(&llm.uri()));
    let out = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "Hello there, friend.");
    assert_eq!(out.stop_reason, StopReason::EndTurn);
    let r = &llm.requests().await[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(r.header("user-agent").unwrap().starts_with("octo/"));
    let body = r.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 32000, "defaults to the catalog's output cap, at most 32k");
}

#[tokio::test]
async fn tool_round_trip_through_the_agent_loop() {
    let llm = start(vec![
        Scripted::sse(
            Reply::new().text("Checking.").tool_use("toolu_01", "lookup", json!({"word": "octopus"})).sse(),
        ),
        Scripted::sse(Reply::new().text("An octopus has eight arms.").sse()),
    ])
    .await;
    let mut a = agent(sender(&llm.uri()));
    let out = a.turn(Message::user("what is an octopus?"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "An octopus has eight arms.");
    assert_eq!(out.requests, 2);
    let second = &llm.request_bodies().await[1];
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        msgs[1]["content"][1],
        json!({"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": {"word": "octopus"}})
    );
    let result = &msgs[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");
    assert_eq!(result["content"][0]["text"], "definition of octopus");
    assert!(result.get("is_error").is_none());
}

#[tokio::test]
async fn every_event_type_assembles_and_thinking_round_trips() {
    let reply = Reply::new()
        .thinking("Let me think about this.", "sig-abc==")
        .redacted_thinking("ENCRYPTED")
        .text("Answer.")
        .tool_use("toolu_9", "lookup", json!({"word": "x"}))
        .usage(100, 50, 1000, 200)
        .chunk_size(3);
    // an unknown event type and an extra ping must be ignored
    let body = reply.sse().replacen(
        "event: ping",
        "event: brand_new_event\ndata: {\"type\":\"brand_new_event\",\"x\":1}\n\n: comment\n\nevent: ping",
        1,
    );
    let llm = start(vec![Scripted::sse(body), Scripted::sse(Reply::new().text("ok").sse())]).await;
    let s = sender(&llm.uri());
    let tools = vec![Lookup.definition()];
    let history = vec![Message::user("q")];
    let (seen, resp) = stream_once(&s, Request::new(&history).with_tools(&tools)).await;
    let resp = resp.unwrap();
    assert_eq!(
        resp.message.content,
        vec![
            ContentBlock::Thinking {
                thinking: "Let me think about this.".into(),
                signature: Some("sig-abc==".into())
            },
            ContentBlock::RedactedThinking { data: "ENCRYPTED".into() },
            ContentBlock::text("Answer."),
            ContentBlock::ToolUse {
                id: "toolu_9".into(),
                name: "lookup".into(),
                input: json!({"word": "x"})
            },
        ]
    );
    assert_eq!(
        resp.usage,
        Usage {
            input_tokens: 100,
            output_tokens: 50,
            cache_read_tokens: 1000,
            cache_write_tokens: 200,
            estimated: false,
            reasoning_tokens: 0,
        }
    );
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    assert!(
        seen.iter().filter(|e| matches!(e, StreamEvent::ThinkingDelta(_))).count() > 3,
        "thinking streamed in pieces"
    );

    // Send the assistant message back: signature and redacted data go out unchanged.
    let history = vec![
        Message::user("q"),
        resp.message,
        Message::new(Role::User, vec![ContentBlock::tool_result("toolu_9", "r", false)]),
    ];
    let (_, r2) = stream_once(&s, Request::new(&history).with_tools(&tools)).await;
    r2.unwrap();
    let sent = &llm.request_bodies().await[1]["messages"][1]["content"];
    assert_eq!(
        sent[0],
        json!({"type": "thinking", "thinking": "Let me think about this.", "signature": "sig-abc=="})
    );
    assert_eq!(sent[1], json!({"type": "redacted_thinking", "data": "ENCRYPTED"}));
}

#[tokio::test]
async fn non_streaming_send_parses_the_json_body() {
    let reply = Reply::new().thinking("hm", "s1").text("Buffered answer.").usage(10, 5, 3, 2);
    let llm = start(vec![Scripted::json(200, &reply.json())]).await;
    let s = sender(&llm.uri());
    let history = vec![Message::user("q")];
    let resp = s.send(Request::new(&history)).await.unwrap();
    assert_eq!(resp.message.text(), "Buffered answer.");
    assert_eq!(
        resp.usage,
        Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 3,
            cache_write_tokens: 2,
            estimated: false,
            reasoning_tokens: 0,
        }
    );
    let body = &llm.request_bodies().await[0];
    assert!(body.get("stream").is_none());
    assert!(body.get("tools").is_none());
}

#[tokio::test]
async fn overload_and_rate_limits_are_retried_and_reported() {
    let llm = start(vec![
        Scripted::json(529, &error_body("overloaded_error", "Overloaded")),
        Scripted::json(429, &error_body("rate_limit_error", "Too many requests")).header("retry-after", "0"),
        Scripted::sse(Reply::new().text("finally").sse()),
    ])
    .await;
    let mut a = agent(sender(&llm.uri()));
    let events: Vec<AgentEvent> =
        a.turn_stream(Message::user("hi"), CancellationToken::new()).collect().await;
    let retries: Vec<_> = events.iter().filter(|e| matches!(e, AgentEvent::Retry { .. })).collect();
    assert_eq!(retries.len(), 2);
    assert!(matches!(retries[0], AgentEvent::Retry { reason, .. } if reason.contains("Overloaded")));
    assert_eq!(llm.requests().await.len(), 3);
    assert_eq!(a.history()[1].text(), "finally");
}

async fn turn_error(replies: Vec<Scripted>) -> (AgentError, usize) {
    let llm = start(replies).await;
    let mut a = agent(sender(&llm.uri()));
    let err = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap_err();
    assert!(a.history().is_empty(), "a failed first request leaves no trace");
    (err, llm.requests().await.len())
}

#[tokio::test]
async fn auth_failures_name_the_endpoint_and_the_key_source() {
    for status in [401, 403] {
        let (err, n) = turn_error(vec![Scripted::json(
            status,
            &error_body("authentication_error", "invalid x-api-key"),
        )])
        .await;
        let msg = err.to_string();
        assert_eq!(err.kind(), ErrorKind::Auth);
        assert!(msg.contains("`anthropic`") && msg.contains("ANTHROPIC_API_KEY"), "{msg}");
        assert!(!msg.contains("octo "), "a provider carries no application wording: {msg}");
        assert!(!msg.contains(KEY));
        assert_eq!(n, 1, "auth errors are not retried");
    }
}

#[tokio::test]
async fn invalid_request_carries_the_server_message() {
    let (err, n) = turn_error(vec![Scripted::json(
        400,
        &error_body("invalid_request_error", "messages: roles must alternate"),
    )])
    .await;
    assert!(
        matches!(&err, AgentError::Provider(ProviderError::InvalidRequest { status: Some(400), message }) if message.contains("roles must alternate")),
        "{err:?}"
    );
    assert_eq!(n, 1);
}

#[tokio::test]
async fn prompt_too_long_is_context_too_long_with_the_deficit() {
    // The agent compacts and retries three times before giving up: script the refusal four times.
    let too_long = || {
        Scripted::json(
            400,
            &error_body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        )
    };
    let (err, n) = turn_error((0..4).map(|_| too_long()).collect()).await;
    assert!(
        matches!(&err, AgentError::Provider(ProviderError::ContextTooLong { deficit: Some(10000), message }) if message.contains("prompt is too long")),
        "{err:?}"
    );
    assert_eq!(n, 4);
    let big = || Scripted::json(413, &error_body("request_too_large", "Request exceeds the maximum size"));
    let (err, _) = turn_error((0..4).map(|_| big()).collect()).await;
    assert_eq!(err.kind(), ErrorKind::ContextTooLong);
}

#[tokio::test]
async fn truncated_stream_is_a_transport_error_once_the_attempts_are_spent() {
    let cut = || Scripted::sse(Reply::new().text("partial answ").sse_truncated());
    let (err, _) = turn_error(vec![cut(), cut(), cut()]).await;
    assert!(
        matches!(&err, AgentError::Provider(ProviderError::Transport { message }) if message.contains("before the response was complete")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_empty_body_is_a_clear_error_after_one_more_try() {
    let (err, n) = turn_error(vec![Scripted::sse(""), Scripted::sse(""), Scripted::sse("")]).await;
    let text = err.to_string();
    assert!(text.contains("twice with an empty body"), "{err}");
    assert!(!text.contains("context window"), "a three-word prompt is not blamed on the window: {text}");
    assert_eq!(n, 2, "tried once more, then explained");
}

#[tokio::test]
async fn an_overload_event_before_any_content_is_retried() {
    let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let llm =
        start(vec![Scripted::sse(overloaded), Scripted::sse(Reply::new().text("recovered").sse())]).await;
    let mut a = agent(sender(&llm.uri()));
    assert_eq!(a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap().text, "recovered");
    assert_eq!(llm.requests().await.len(), 2);
}

#[tokio::test]
async fn malformed_json_in_a_data_line_is_malformed_stream() {
    let body = SseBody::new()
        .event(
            Some("message_start"),
            &json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
        )
        .raw(
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\n\n",
        )
        .build();
    let (err, n) =
        turn_error(vec![Scripted::sse(body.clone()), Scripted::sse(body.clone()), Scripted::sse(body)]).await;
    assert_eq!(n, 3, "a garbled stream is retried");
    assert!(
        matches!(&err, AgentError::Provider(ProviderError::MalformedStream { message }) if message.contains("content_block_delta")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_error_event_mid_stream_is_classified() {
    let body = Reply::new().text("start").sse_truncated()
        + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let (err, n) =
        turn_error(vec![Scripted::sse(body.clone()), Scripted::sse(body.clone()), Scripted::sse(body)]).await;
    assert_eq!(err.kind(), ErrorKind::Overloaded);
    assert_eq!(n, 3, "the reply was restarted until the attempts were spent");
}

#[tokio::test]
async fn arguments_that_never_form_json_become_an_error_result() {
    let broken = SseBody::new()
        .event(Some("message_start"), &json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}))
        .event(Some("content_block_start"), &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_x", "name": "lookup", "input": {}}}))
        .event(Some("content_block_delta"), &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"word\": \"unterminated"}}))
        .event(Some("content_block_stop"), &json!({"type": "content_block_stop", "index": 0}))
        .event(Some("message_delta"), &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}))
        .event(Some("message_stop"), &json!({"type": "message_stop"}))
        .build();
    let llm = start(vec![
        Scripted::sse(broken),
        Scripted::sse(Reply::new().text("Sorry, retrying differently.").sse()),
    ])
    .await;
    let mut a = agent(sender(&llm.uri()));
    let out = a.turn(Message::user("define"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "Sorry, retrying differently.");
    let second = &llm.request_bodies().await[1];
    assert_eq!(second["messages"][1]["content"][0]["input"], json!({}), "the stored call is still valid");
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true);
    assert!(result["content"][0]["text"].as_str().unwrap().contains("not valid JSON"), "{result}");
}

#[tokio::test]
async fn a_stream_that_stalls_fails_instead_of_hanging() {
    let mut resp = raw::sse_head();
    resp.extend(raw::chunk(&Reply::new().text("half").sse_truncated()));
    let base = raw::serve(resp, After::Hang(Duration::from_secs(60))).await.unwrap();
    let mut cfg = config(&base);
    cfg.settings.http.stall_timeout = Duration::from_millis(400);
    let mut a = agent(AnthropicSender::new(cfg).unwrap());
    // The server hangs for 60 s: only the stall limit ends the turn with this error.
    let err = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("stalled"), "{err}");
}

#[tokio::test]
async fn cancelling_mid_stream_stops_at_once_and_rolls_back() {
    let mut resp = raw::sse_head();
    resp.extend(raw::chunk(&Reply::new().text("streaming...").sse_truncated()));
    let base = raw::serve(resp, After::Hang(Duration::from_secs(60))).await.unwrap();
    let mut a = agent(sender(&base));
    let cancel = CancellationToken::new();
    {
        let mut events = a.turn_stream(Message::user("hi"), cancel.clone());
        while let Some(e) = events.next().await {
            if matches!(e, AgentEvent::TextDelta { .. }) {
                cancel.cancel();
            }
            if let AgentEvent::TurnEnd { reason, .. } = e {
                assert_eq!(reason, TurnEndReason::Cancelled);
            }
        }
    }
    assert!(a.history().is_empty());
}

#[tokio::test]
async fn bearer_auth_betas_custom_headers_and_v1_base() {
    let llm = start(vec![Scripted::sse(Reply::new().text("ok").sse())]).await;
    let mut cfg = config(&format!("{}/v1/", llm.uri()));
    cfg.auth = AuthStyle::Bearer;
    cfg.betas = vec!["feature-a".into(), "feature-b".into()];
    cfg.settings.http.headers = vec![("x-team".into(), "core".into())];
    let s = AnthropicSender::new(cfg).unwrap();
    let history = vec![Message::user("q")];
    stream_once(&s, Request::new(&history)).await.1.unwrap();
    let r = &llm.requests().await[0];
    assert_eq!(r.path, "/v1/messages", "a base ending in /v1 is not doubled");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(r.header("x-api-key"), None);
    assert_eq!(r.header("anthropic-beta"), Some("feature-a,feature-b"));
    assert_eq!(r.header("x-team"), Some("core"));
}

#[tokio::test]
async fn bad_configuration_is_refused_up_front() {
    let bad_url = AnthropicSender::new(config("not a url")).unwrap_err();
    assert!(bad_url.to_string().contains("invalid base URL"), "{bad_url}");
    let mut cfg = config("http://127.0.0.1:1");
    cfg.settings.api_key = Some("bad\nkey".into());
    let err = AnthropicSender::new(cfg).unwrap_err();
    assert!(!err.to_string().contains("bad\nkey") && err.to_string().contains("API key"), "{err}");
}

/// The body without its `cache_control` markers, which move to the newest messages each turn by
/// design (the cache key is the content before them).
fn without_breakpoints(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_breakpoints(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_breakpoints).collect()),
        other => other.clone(),
    }
}

#[tokio::test]
async fn twenty_turns_send_a_byte_identical_prefix() {
    let mut replies = Vec::new();
    for i in 0..20 {
        if i % 4 == 0 {
            replies.push(Scripted::sse(
                Reply::new().tool_use(format!("t{i}"), "lookup", json!({"word": "x"})).sse(),
            ));
        }
        replies.push(Scripted::sse(Reply::new().text(format!("answer {i}")).sse()));
    }
    let llm = start(replies).await;
    let mut a = agent(sender(&llm.uri()));
    for i in 0..20 {
        a.turn(Message::user(format!("question {i}")), CancellationToken::new()).await.unwrap();
    }
    let bodies: Vec<Value> = llm.request_bodies().await.iter().map(without_breakpoints).collect();
    assert_eq!(bodies.len(), 25);
    for pair in bodies.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert_eq!(a["system"].to_string(), b["system"].to_string(), "the system prompt never changes");
        assert_eq!(a["tools"].to_string(), b["tools"].to_string(), "the tool list never changes");
        let (ma, mb) = (a["messages"].as_array().unwrap(), b["messages"].as_array().unwrap());
        assert!(mb.len() > ma.len());
        for (x, y) in ma.iter().zip(mb) {
            assert_eq!(x.to_string(), y.to_string(), "an earlier message was re-serialized differently");
        }
    }
}
