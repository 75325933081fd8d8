//! Request bodies for the OpenAI, DeepSeek and Ollama presets, pinned as snapshots.

use super::common::*;
use octo_agent::*;
use octo_testkit::openai::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};

async fn body_for(
    preset: &str,
    edit: impl FnOnce(&mut octo_provider_openai::OpenAiConfig),
    req: Request<'_>,
) -> Value {
    let llm = MockLlm::start().await;
    llm.script_openai([Scripted::sse(Reply::new().text("ok").sse())]).await;
    let mut cfg = config(preset, &llm.uri());
    edit(&mut cfg);
    let s = octo_provider_openai::OpenAiSender::new(cfg).unwrap();
    stream_once(&s, req).await.1.unwrap();
    llm.request_bodies().await.remove(0)
}

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition::new(
        "read_file",
        "Reads a file.",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )]
}

/// A history with every block type, ending mid-turn (after tool results).
fn history() -> Vec<Message> {
    vec![
        Message::user("Earlier question"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking { thinking: "old reasoning".into(), signature: None },
                ContentBlock::text("Earlier answer"),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::text("Look at this screenshot and the file."),
                ContentBlock::Image {
                    source: ImageSource { media_type: "image/png".into(), data: "iVBORw0=".into() },
                },
            ],
        ),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "current reasoning".into(),
                    signature: Some("ignored".into()),
                },
                ContentBlock::RedactedThinking { data: "opaque".into() },
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a.rs"}),
                },
                ContentBlock::ToolUse {
                    id: "call_2".into(),
                    name: "read_file".into(),
                    input: json!({"path": "missing.rs"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::tool_result("call_1", "fn main() {}", false),
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: vec![
                        ToolResultPart::Text { text: "no such file".into() },
                        ToolResultPart::Image {
                            source: ImageSource { media_type: "image/png".into(), data: "AAAA".into() },
                        },
                    ],
                    is_error: true,
                },
            ],
        ),
    ]
}

#[tokio::test]
async fn openai_preset() {
    let h = history();
    let t = tools();
    let body = body_for(
        "openai",
        |c| c.settings.model = "o4-mini".into(),
        Request::new(&h)
            .with_system("You are octo.")
            .with_tools(&t)
            .with_max_tokens(Some(2048))
            .with_reasoning(ReasoningEffort::Max),
    )
    .await;
    insta::assert_json_snapshot!("openai", body);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["max_completion_tokens"], 2048);
    assert_eq!(body["reasoning_effort"], "high");
}

#[tokio::test]
async fn deepseek_preset_replays_reasoning_of_the_current_turn_only() {
    let h = history();
    let t = tools();
    let body = body_for(
        "deepseek",
        |_| {},
        Request::new(&h).with_system("You are octo.").with_tools(&t).with_max_tokens(Some(4096)),
    )
    .await;
    insta::assert_json_snapshot!("deepseek", body);
    let msgs = body["messages"].as_array().unwrap();
    assert!(msgs[2].get("reasoning_content").is_none(), "earlier turns' reasoning is not sent");
    assert_eq!(msgs[4]["reasoning_content"], "current reasoning");
    assert_eq!(body["max_tokens"], 4096);
}

#[tokio::test]
async fn ollama_preset() {
    let h = vec![Message::user("Hello")];
    let t = tools();
    let body = body_for(
        "ollama",
        |c| c.settings.model = "qwen2.5-coder:7b".into(),
        Request::new(&h).with_tools(&t).with_reasoning(ReasoningEffort::High),
    )
    .await;
    insta::assert_json_snapshot!("ollama", body);
    assert!(body.get("reasoning_effort").is_none(), "not sent to models that do not take it");
    assert!(body.get("tool_choice").is_none(), "auto is the default and is left out");
}

#[tokio::test]
async fn tool_choice_and_openrouter_reasoning() {
    let h = vec![Message::user("Hello")];
    let t = tools();
    let forced = body_for(
        "openrouter",
        |_| {},
        Request::new(&h)
            .with_tools(&t)
            .with_tool_choice(ToolChoice::Tool("read_file"))
            .with_reasoning(ReasoningEffort::Low),
    )
    .await;
    assert_eq!(forced["tool_choice"], json!({"type": "function", "function": {"name": "read_file"}}));
    assert_eq!(forced["reasoning"], json!({"effort": "low"}));
    let any =
        body_for("openai", |_| {}, Request::new(&h).with_tools(&t).with_tool_choice(ToolChoice::Any)).await;
    assert_eq!(any["tool_choice"], "required");
}

#[tokio::test]
async fn tool_history_without_tool_definitions_is_sent_as_text() {
    let h = history();
    let body = body_for("openai", |_| {}, Request::new(&h)).await;
    assert!(body.get("tools").is_none());
    let msgs = body["messages"].as_array().unwrap();
    assert!(msgs.iter().all(|m| m["role"] != "tool" && m.get("tool_calls").is_none()), "{body}");
    let text = body.to_string();
    assert!(text.contains("[called tool `read_file` with"), "{text}");
    assert!(text.contains("[tool result"), "{text}");
}
