//! The adapter against Chat-Completions-shaped mocks: fragments, reasoning, usage, tool loops,
//! retries and every bad input.

use super::common::*;
use octo_agent::*;
use octo_testkit::openai::{error_body, CacheShape, Reply};
use octo_testkit::sse::SseBody;
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};
use std::sync::Arc;

struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "echo",
            "Echoes text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!("echo: {}", input["text"].as_str().unwrap_or("?")))
    }
}

fn agent(s: octo_provider_openai::OpenAiSender) -> Agent {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Echo));
    Agent::builder(Arc::new(s)).tools(tools).system_prompt("Be terse.").build()
}

async fn start(replies: Vec<Scripted>) -> MockLlm {
    let llm = MockLlm::start().await;
    llm.script_openai(replies).await;
    llm
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[tokio::test]
async fn text_answer_with_bearer_auth_and_stream_options() {
    let llm = start(vec![Scripted::sse(Reply::new().text("Hi from the mock.").sse())]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("hello"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "Hi from the mock.");
    let r = &llm.requests().await[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = r.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "Be terse."}));
    assert_eq!(body["messages"][1], json!({"role": "user", "content": "hello"}));
}

#[tokio::test]
async fn two_parallel_calls_with_interleaved_fragments_join_by_index() {
    let body = SseBody::new()
        .event(None, &chunk(json!({"role": "assistant", "content": null}), None))
        .event(None, &chunk(json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "echo", "arguments": ""}}]}), None))
        .event(None, &chunk(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "echo", "arguments": "{\"te"}}]}), None))
        .event(None, &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"text\""}}]}), None))
        .event(None, &chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": "xt\": \"second\"}"}}]}), None))
        .event(None, &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": ": \"first\"}"}}]}), None))
        .event(None, &chunk(json!({}), Some("tool_calls")))
        .raw_data("[DONE]")
        .build();
    let llm = start(vec![Scripted::sse(body), Scripted::sse(Reply::new().text("Both echoed.").sse())]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("echo twice"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "Both echoed.");
    let second = &llm.request_bodies().await[1];
    let msgs = second["messages"].as_array().unwrap();
    let calls = msgs[2]["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["function"]["arguments"], r#"{"text":"first"}"#);
    assert_eq!(calls[1]["id"], "call_b");
    assert_eq!(msgs[2]["content"], "", "never null: llama.cpp-compatible servers reject it");
    assert_eq!(msgs[3], json!({"role": "tool", "tool_call_id": "call_a", "content": "echo: first"}));
    assert_eq!(msgs[4], json!({"role": "tool", "tool_call_id": "call_b", "content": "echo: second"}));
}

#[tokio::test]
async fn calls_without_index_or_id_still_work() {
    // Some servers send each call whole, without `index`, and some omit the id.
    let body = SseBody::new()
        .event(None, &chunk(json!({"tool_calls": [{"function": {"name": "echo", "arguments": "{\"text\":\"x\"}"}}, {"id": "c2", "function": {"name": "echo", "arguments": {"text": "y"}}}]}), None))
        .event(None, &chunk(json!({}), Some("stop")))
        .build();
    let llm = start(vec![Scripted::sse(body)]).await;
    let s = sender("ollama", &llm.uri());
    let tools = vec![Echo.definition()];
    let h = vec![Message::user("go")];
    let (_, res) = stream_once(&s, Request::new(&h).with_tools(&tools)).await;
    let res = res.unwrap();
    let calls: Vec<_> =
        res.response.message.tool_uses().map(|t| (t.id.to_owned(), t.input.clone())).collect();
    assert!(calls[0].0.starts_with("call_octo_"), "a unique id is made up: {}", calls[0].0);
    assert_eq!(calls[0].1, json!({"text": "x"}));
    assert_eq!(calls[1], ("c2".to_owned(), json!({"text": "y"})));
    assert_eq!(res.response.stop_reason, StopReason::ToolUse, "`stop` after tool calls means tool use");
}

#[tokio::test]
async fn reasoning_content_and_reasoning_fields_are_thinking() {
    for reply in [
        Reply::new().reasoning("think think").text("answer"),
        Reply::new().reasoning("think think").reasoning_in_reasoning_field().text("answer"),
    ] {
        let llm = start(vec![Scripted::sse(reply.sse())]).await;
        let s = sender("deepseek", &llm.uri());
        let h = vec![Message::user("q")];
        let (seen, res) = stream_once(&s, Request::new(&h)).await;
        assert!(seen.iter().any(|e| matches!(e, StreamEvent::ThinkingDelta(_))));
        assert_eq!(
            res.unwrap().response.message.content,
            vec![
                ContentBlock::Thinking { thinking: "think think".into(), signature: None },
                ContentBlock::text("answer")
            ]
        );
    }
}

#[tokio::test]
async fn usage_is_normalized_for_openai_and_deepseek_shapes() {
    for shape in [CacheShape::OpenAi, CacheShape::DeepSeek] {
        let llm = start(vec![Scripted::sse(Reply::new().text("x").usage(1000, 50, 800, shape).sse())]).await;
        let s = sender("deepseek", &llm.uri());
        let h = vec![Message::user("q")];
        let usage = stream_once(&s, Request::new(&h)).await.1.unwrap().response.usage;
        assert_eq!(
            usage,
            Usage {
                input_tokens: 200,
                output_tokens: 50,
                cache_read_tokens: 800,
                cache_write_tokens: 0,
                estimated: false,
                reasoning_tokens: 0,
            },
            "{shape:?}"
        );
    }
}

#[tokio::test]
async fn missing_done_and_empty_choices_chunks_are_fine() {
    let llm = start(vec![Scripted::sse(Reply::new().text("no sentinel").without_done().sse())]).await;
    let s = sender("vllm", &llm.uri());
    let h = vec![Message::user("q")];
    let res = stream_once(&s, Request::new(&h)).await.1.unwrap();
    assert_eq!(res.response.message.text(), "no sentinel");
    assert_eq!(res.response.usage.output_tokens, 6, "usage from the empty-choices chunk");
    let empty = SseBody::new()
        .event(None, &json!({"id": "c", "choices": []}))
        .event(None, &chunk(json!({"content": "ok"}), None))
        .event(None, &chunk(json!({}), Some("stop")))
        .raw_data("[DONE]")
        .build();
    let llm = start(vec![Scripted::sse(empty)]).await;
    let s = sender("vllm", &llm.uri());
    assert_eq!(stream_once(&s, Request::new(&h)).await.1.unwrap().response.message.text(), "ok");
}

#[tokio::test]
async fn a_stream_without_finish_reason_or_done_is_an_error() {
    let cut =
        || Scripted::sse(Reply::new().text("cut").no_finish_reason().without_done().without_usage().sse());
    let llm = start(vec![cut(), cut(), cut()]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let err = a.turn(Message::user("q"), CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("without a finish_reason"), "{err}");
    assert_eq!(llm.requests().await.len(), 3, "the reply was restarted until the attempts were spent");
    assert!(a.history().is_empty());
    // ...but a [DONE] without a finish_reason is a complete answer
    let llm = start(vec![Scripted::sse(Reply::new().text("fine").no_finish_reason().sse())]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    assert_eq!(a.turn(Message::user("q"), CancellationToken::new()).await.unwrap().text, "fine");
}

#[tokio::test]
async fn invalid_arguments_after_concatenation_are_an_error_result() {
    let llm = start(vec![
        Scripted::sse(Reply::new().tool_call("call_1", "echo", r#"{"text": "unterminated"#).sse()),
        Scripted::sse(Reply::new().text("retried").sse()),
    ])
    .await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("q"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "retried");
    let tool_msg = &llm.request_bodies().await[1]["messages"][3];
    assert_eq!(tool_msg["role"], "tool");
    let content = tool_msg["content"].as_str().unwrap();
    assert!(content.starts_with("Error: ") && content.contains("not valid JSON"), "{content}");
}

#[tokio::test]
async fn an_error_object_inside_the_stream_is_classified() {
    let body = SseBody::new()
        .event(None, &chunk(json!({"content": "par"}), None))
        .event(None, &json!({"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens", "code": "context_length_exceeded"}}))
        .build();
    // The agent compacts and retries before giving up: the refusal comes four times.
    let llm = start((0..4).map(|_| Scripted::sse(body.clone())).collect()).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let err = a.turn(Message::user("q"), CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(err, AgentError::Provider(ProviderError::ContextTooLong { deficit: Some(808), .. })),
        "{err:?}"
    );
}

async fn turn_error(preset: &str, replies: Vec<Scripted>) -> (AgentError, usize) {
    let llm = start(replies).await;
    let mut a = agent(sender(preset, &llm.uri()));
    let err = a.turn(Message::user("hi"), CancellationToken::new()).await.unwrap_err();
    assert!(a.history().is_empty());
    (err, llm.requests().await.len())
}

#[tokio::test]
async fn html_error_pages_from_a_proxy_are_explained() {
    let page = "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>";
    let (err, n) =
        turn_error("openai", (0..3).map(|_| Scripted::raw(502, "text/html", page)).collect()).await;
    assert!(err.to_string().contains("HTML page: 502 Bad Gateway"), "{err}");
    assert_eq!(n, 3, "5xx is retried up to the limit");
}

#[tokio::test]
async fn unauthorized_and_unknown_model_say_what_to_fix() {
    let (err, n) = turn_error(
        "deepseek",
        vec![Scripted::json(
            401,
            &error_body("authentication_error", Some("invalid_api_key"), "Authentication Fails"),
        )],
    )
    .await;
    assert_eq!(err.kind(), ErrorKind::Auth);
    assert!(err.to_string().contains("DEEPSEEK_API_KEY") && err.to_string().contains("`deepseek`"), "{err}");
    assert_eq!(n, 1);
    let (err, _) = turn_error(
        "openai",
        vec![Scripted::json(
            404,
            &error_body("invalid_request_error", Some("model_not_found"), "The model `gpt-9` does not exist"),
        )],
    )
    .await;
    let msg = err.to_string();
    assert!(msg.contains("no model `gpt-4.1`") && msg.contains("/v1") && msg.contains("`openai`"), "{msg}");
}

#[tokio::test]
async fn rate_limits_with_and_without_retry_after_and_server_errors_are_retried() {
    let llm = start(vec![
        Scripted::json(429, &error_body("rate_limit", None, "slow down")).header("retry-after", "0"),
        Scripted::json(429, &error_body("rate_limit", None, "slow down")),
        Scripted::sse(Reply::new().text("ok").sse()),
    ])
    .await;
    let mut a = agent(sender("groq", &llm.uri()));
    assert_eq!(a.turn(Message::user("q"), CancellationToken::new()).await.unwrap().text, "ok");
    assert_eq!(llm.requests().await.len(), 3);

    let llm = start(vec![
        Scripted::raw(500, "text/plain", "internal"),
        Scripted::raw(503, "text/plain", "unavailable"),
        Scripted::sse(Reply::new().text("ok").sse()),
    ])
    .await;
    let mut a = agent(sender("openai", &llm.uri()));
    assert_eq!(a.turn(Message::user("q"), CancellationToken::new()).await.unwrap().text, "ok");
    assert_eq!(llm.requests().await.len(), 3);
}

#[tokio::test]
async fn context_length_errors_in_several_wordings() {
    let cases = [
        json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}),
        json!({"error": {"message": "Invalid request: Your request exceeded model token limit: 262144", "type": "invalid_request_error"}}),
        json!({"error": {"message": "Range of input length should be [1, 129024]", "code": "InvalidParameter"}}),
        json!({"error": {"message": "Prompt exceeds max length", "code": "1261"}}),
    ];
    for body in cases {
        let (err, n) = turn_error("openai", (0..4).map(|_| Scripted::json(400, &body)).collect()).await;
        assert_eq!(err.kind(), ErrorKind::ContextTooLong, "{body}");
        assert_eq!(n, 4, "the first try and three retries after compacting; never a plain retry loop");
    }
}

#[tokio::test]
async fn non_streaming_send_parses_a_completion() {
    let reply = Reply::new()
        .reasoning("hmm")
        .text("whole")
        .tool_call("call_9", "echo", r#"{"text":"z"}"#)
        .usage(10, 3, 4, CacheShape::OpenAi);
    let llm = start(vec![Scripted::json(200, &reply.json())]).await;
    let s = sender("openai", &llm.uri());
    let h = vec![Message::user("q")];
    let tools = vec![Echo.definition()];
    let resp = s.send_with_tools(Request::new(&h).with_tools(&tools)).await.unwrap();
    assert_eq!(resp.message.text(), "whole");
    assert_eq!(resp.message.tool_uses().next().unwrap().input, &json!({"text": "z"}));
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    assert_eq!(
        resp.usage,
        Usage {
            input_tokens: 6,
            output_tokens: 3,
            cache_read_tokens: 4,
            cache_write_tokens: 0,
            estimated: false,
            reasoning_tokens: 0,
        }
    );
    assert!(llm.request_bodies().await[0].get("stream").is_none());
}

#[tokio::test]
async fn a_local_server_without_a_key_gets_no_authorization_header() {
    let llm = start(vec![Scripted::sse(Reply::new().text("local").sse())]).await;
    let mut cfg = config("ollama", &llm.uri());
    cfg.settings.api_key = None;
    let s = octo_provider_openai::OpenAiSender::new(cfg).unwrap();
    let h = vec![Message::user("q")];
    stream_once(&s, Request::new(&h)).await.1.unwrap();
    assert_eq!(llm.requests().await[0].header("authorization"), None);
}

#[tokio::test]
async fn every_preset_completes_a_tool_using_turn() {
    for p in octo_provider_openai::PRESETS {
        let llm = start(vec![
            Scripted::sse(Reply::new().tool_call("call_1", "echo", r#"{"text":"ping"}"#).sse()),
            Scripted::sse(Reply::new().text("pong").sse()),
        ])
        .await;
        let mut a = agent(sender(p.id, &llm.uri()));
        let out = a
            .turn(Message::user("echo ping"), CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("preset {}: {e}", p.id));
        assert_eq!(out.text, "pong", "preset {}", p.id);
        let second = &llm.request_bodies().await[1];
        let msgs = second["messages"].as_array().unwrap();
        let result = msgs.iter().find(|m| m["role"] == "tool").unwrap_or_else(|| panic!("preset {}", p.id));
        assert_eq!(result["tool_call_id"], "call_1", "preset {}", p.id);
        assert_eq!(result["content"], "echo: ping", "preset {}", p.id);
    }
}

#[tokio::test]
async fn twenty_turns_send_a_byte_identical_prefix() {
    let mut replies = Vec::new();
    for i in 0..20 {
        if i % 4 == 0 {
            replies.push(Scripted::sse(
                Reply::new().tool_call(format!("c{i}"), "echo", r#"{"text":"x"}"#).sse(),
            ));
        }
        replies.push(Scripted::sse(Reply::new().text(format!("answer {i}")).sse()));
    }
    let llm = start(replies).await;
    let mut a = agent(sender("openai", &llm.uri()));
    for i in 0..20 {
        a.turn(Message::user(format!("question {i}")), CancellationToken::new()).await.unwrap();
    }
    let bodies = llm.request_bodies().await;
    assert_eq!(bodies.len(), 25);
    for pair in bodies.windows(2) {
        assert_eq!(pair[0]["tools"].to_string(), pair[1]["tools"].to_string());
        let (ma, mb) = (pair[0]["messages"].as_array().unwrap(), pair[1]["messages"].as_array().unwrap());
        assert!(mb.len() > ma.len());
        for (x, y) in ma.iter().zip(mb) {
            assert_eq!(x.to_string(), y.to_string(), "an earlier message was re-serialized differently");
        }
    }
}
