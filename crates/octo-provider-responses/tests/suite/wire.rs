//! The adapter against event streams written from the documented Responses wire format: text,
//! the tool loop with reasoning carried to the next request, parallel calls, usage, truncation,
//! and every bad input.

use super::common::*;
use octo_agent::*;
use octo_testkit::responses::Reply;
use octo_testkit::sse::SseBody;
use octo_testkit::Scripted;
use serde_json::json;

#[tokio::test]
async fn a_text_answer_with_bearer_auth_and_nothing_stored() {
    let llm = start(vec![Scripted::sse(Reply::new().text("Hi from the mock.").sse())]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("hello"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "Hi from the mock.");
    let r = &llm.requests().await[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body = r.json();
    assert_eq!((body["stream"].clone(), body["store"].clone()), (json!(true), json!(false)));
    assert_eq!(body["instructions"], "Be terse.");
    assert_eq!(body["input"], json!([{"type": "message", "role": "user", "content": "hello"}]));
    assert_eq!(
        body["include"],
        json!(["reasoning.encrypted_content"]),
        "gpt-5.1 reasons: its reasoning comes back"
    );
    assert!(body["prompt_cache_key"].as_str().unwrap().starts_with("octo-"));
}

#[tokio::test]
async fn reasoning_is_carried_to_the_next_request_and_shown_once() {
    let llm = start(vec![
        Scripted::sse(
            Reply::new()
                .reasoning("rs_1", "Need to echo first.", "ENCRYPTED-1")
                .call("call_1", "echo", r#"{"text":"x"}"#)
                .usage(1000, 800, 50, 30)
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Done.").sse()),
    ])
    .await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("echo x"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "Done.");
    let bodies = llm.request_bodies().await;
    let second = &bodies[1]["input"];
    assert_eq!(
        second[1],
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need to echo first."}], "encrypted_content": "ENCRYPTED-1"})
    );
    assert_eq!(
        second[2],
        json!({"type": "function_call", "call_id": "call_1", "name": "echo", "arguments": "{\"text\":\"x\"}"})
    );
    assert_eq!(second[3], json!({"type": "function_call_output", "call_id": "call_1", "output": "echo: x"}));
    // In the history once, as its own kind: the streamed summary did not stay as thinking.
    let first_answer = &a.history()[1];
    assert!(
        matches!(&first_answer.content[0], ContentBlock::Reasoning { id, source, .. } if id == "rs_1" && source == "openai:gpt-5.1")
    );
    assert!(!first_answer.content.iter().any(|b| matches!(b, ContentBlock::Thinking { .. })));
    assert_eq!(out.text.matches("Need to echo").count(), 0, "never shown as answer text");
}

#[tokio::test]
async fn usage_is_normalised_and_reasoning_tokens_reported() {
    let llm = start(vec![Scripted::sse(Reply::new().text("ok").usage(1000, 800, 50, 30).sse())]).await;
    let s = sender("openai", &llm.uri());
    let h = [Message::user("hi")];
    let (_, asm) = stream_once(&s, Request::new(&h)).await;
    let u = asm.unwrap().response.usage;
    assert_eq!(
        (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens),
        (200, 800, 50, 30)
    );
}

#[tokio::test]
async fn parallel_calls_arrive_in_order_and_truncation_is_max_tokens() {
    let llm = start(vec![
        Scripted::sse(
            Reply::new().call("c1", "echo", r#"{"text":"a"}"#).call("c2", "echo", r#"{"text":"b"}"#).sse(),
        ),
        Scripted::sse(Reply::new().text("cut off mid").incomplete("max_output_tokens").sse()),
    ])
    .await;
    let s = sender("openai", &llm.uri());
    let h = [Message::user("two")];
    let asm = stream_once(&s, Request::new(&h)).await.1.unwrap();
    let calls: Vec<_> = asm
        .response
        .message
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, input, .. } => Some((id.as_str(), input["text"].as_str().unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(calls, [("c1", "a"), ("c2", "b")]);
    assert_eq!(asm.response.stop_reason, StopReason::ToolUse);
    let asm = stream_once(&s, Request::new(&h)).await.1.unwrap();
    assert_eq!(asm.response.stop_reason, StopReason::MaxTokens);
}

fn ev(name: &str, mut data: serde_json::Value) -> SseBody {
    data["type"] = json!(name);
    SseBody::new().event(Some(name), &data)
}

#[tokio::test]
async fn unknown_events_are_ignored_and_unfinished_arguments_never_run() {
    let mut body = ev("response.created", json!({"response": {"status": "in_progress"}})).build();
    body += &ev("response.something_new", json!({"whatever": 1})).build();
    body += &ev("response.output_item.added", json!({"output_index": 0, "item": {"type": "function_call", "call_id": "c1", "name": "echo", "arguments": ""}})).build();
    body +=
        &ev("response.function_call_arguments.delta", json!({"output_index": 0, "delta": "{\"te"})).build();
    body += &ev("response.completed", json!({"response": {"status": "completed", "output": []}})).build();
    let llm = start(vec![Scripted::sse(body)]).await;
    let s = sender("openai", &llm.uri());
    let h = [Message::user("go")];
    let asm = stream_once(&s, Request::new(&h)).await.1.unwrap();
    assert!(asm.invalid_inputs.contains_key("c1"), "a call cut off is reported, not run: {asm:?}");
}

#[tokio::test]
async fn a_failed_response_mid_stream_is_an_error_and_a_cut_stream_is_retried() {
    let mut failed = ev("response.created", json!({"response": {}})).build();
    failed += &ev("response.output_text.delta", json!({"delta": "partial"})).build();
    failed += &ev("response.failed", json!({"response": {"status": "failed", "error": {"code": "invalid_prompt", "message": "the prompt was refused"}}})).build();
    let llm = start(vec![Scripted::sse(failed)]).await;
    let s = sender("openai", &llm.uri());
    let h = [Message::user("go")];
    let err = stream_once(&s, Request::new(&h)).await.1.unwrap_err();
    assert!(err.to_string().contains("the prompt was refused"), "{err}");

    let llm = start(vec![
        Scripted::sse(Reply::new().text("half").without_completed().sse()),
        Scripted::sse(Reply::new().text("whole answer").sse()),
    ])
    .await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "whole answer");
    assert_eq!(llm.requests().await.len(), 2, "a stream without response.completed is tried again");
}

#[tokio::test]
async fn reasoning_without_content_is_not_sent_back() {
    let llm = start(vec![
        Scripted::sse(Reply::new().reasoning("rs_9", "", "").call("c1", "echo", r#"{"text":"y"}"#).sse()),
        Scripted::sse(Reply::new().text("ok").sse()),
    ])
    .await;
    let mut a = agent(sender("openai", &llm.uri()));
    a.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    let second = llm.request_bodies().await[1]["input"].clone();
    assert!(!second.to_string().contains("rs_9"), "nothing stored, nothing to send back: {second}");
}

#[tokio::test]
async fn a_whole_json_reply_and_an_html_page() {
    let reply = Reply::new().reasoning("rs_1", "hm", "E").text("From JSON.").response_json();
    let llm = start(vec![Scripted::json(200, &reply)]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let out = a.turn(Message::user("go"), CancellationToken::new()).await.unwrap();
    assert_eq!(out.text, "From JSON.");
    assert!(
        matches!(&a.history()[1].content[0], ContentBlock::Reasoning { encrypted_content: Some(e), .. } if e == "E")
    );

    let page = "<html><head><title>404 Not Found</title></head><body>nginx</body></html>";
    let llm = start(vec![Scripted::raw(404, "text/html", page)]).await;
    let mut a = agent(sender("openai", &llm.uri()));
    let err = a.turn(Message::user("go"), CancellationToken::new()).await.unwrap_err();
    assert!(err.to_string().contains("HTML page"), "{err}");
}

#[tokio::test]
async fn azure_sends_its_key_in_the_api_key_header() {
    let llm = start(vec![Scripted::sse(Reply::new().text("hi").sse())]).await;
    let s = sender("azure", &llm.uri());
    let h = [Message::user("hi")];
    stream_once(&s, Request::new(&h)).await.1.unwrap();
    let r = &llm.requests().await[0];
    assert_eq!(r.header("api-key"), Some(KEY));
    assert_eq!(r.header("authorization"), None);
}
