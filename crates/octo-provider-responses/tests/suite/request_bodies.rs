//! Request bodies per preset, pinned as snapshots: every block kind of the history, reasoning
//! of this endpoint and model kept, another's dropped.

use super::common::*;
use octo_agent::*;
use octo_testkit::responses::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};

async fn body_for(preset: &str, model: &str, req: Request<'_>) -> Value {
    let llm = start(vec![Scripted::sse(Reply::new().text("ok").sse())]).await;
    let mut cfg = config(preset, &llm.uri());
    cfg.settings.model = model.into();
    let s = octo_provider_responses::ResponsesSender::new(cfg).unwrap();
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

fn reasoning(id: &str, source: &str) -> ContentBlock {
    ContentBlock::Reasoning {
        id: id.into(),
        summary: format!("summary of {id}"),
        encrypted_content: Some(format!("enc-{id}")),
        source: source.into(),
    }
}

/// A history with every block kind, ending after tool results.
fn history(source: &str) -> Vec<Message> {
    vec![
        Message::user("Earlier question"),
        Message::new(
            Role::Assistant,
            vec![
                reasoning("rs_other", "anthropic:claude-sonnet-4-5"),
                ContentBlock::Thinking {
                    thinking: "another provider's thinking".into(),
                    signature: Some("sig".into()),
                },
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
                reasoning("rs_1", source),
                ContentBlock::text("Reading both."),
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a.rs"}),
                },
                ContentBlock::ToolUse {
                    id: "call_2".into(),
                    name: "read_file".into(),
                    input: json!({"path": "b.rs"}),
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
async fn openai_preset_with_a_reasoning_model() {
    let h = history("openai:gpt-5.1");
    let t = tools();
    let req = Request::new(&h)
        .with_system("You are octo.")
        .with_tools(&t)
        .with_max_tokens(Some(2048))
        .with_reasoning(ReasoningEffort::High);
    let body = body_for("openai", "gpt-5.1", req).await;
    insta::assert_json_snapshot!("openai", body);
    let text = body.to_string();
    assert!(text.contains("rs_1") && !text.contains("rs_other"), "only this endpoint's reasoning goes back");
    assert!(!text.contains("another provider's thinking"));
    assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(body["max_output_tokens"], 2048);
}

#[tokio::test]
async fn a_model_switch_drops_the_reasoning_and_a_plain_model_gets_no_reasoning_params() {
    let h = history("openai:gpt-5.1");
    let t = tools();
    let body = body_for("openrouter-responses", "openai/gpt-4.1", Request::new(&h).with_tools(&t)).await;
    insta::assert_json_snapshot!("openrouter_plain_model", body);
    assert!(!body.to_string().contains("\"reasoning\""), "another endpoint and model: no reasoning items");
    assert!(body.get("include").is_none());
    assert_eq!(body["tool_choice"], "auto");
}
