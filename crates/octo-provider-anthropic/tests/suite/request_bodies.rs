//! The exact request bodies octo sends, pinned as snapshots: system prompt, tools, cache_control
//! placement, thinking configuration and every content block type.

use super::common::*;
use octo_agent::*;
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};

async fn body_for(
    cfg_edit: impl FnOnce(&mut octo_provider_anthropic::AnthropicConfig),
    req: Request<'_>,
    tools: bool,
) -> Value {
    let llm = MockLlm::start().await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("ok").sse())]).await;
    let mut cfg = config(&llm.uri());
    cfg_edit(&mut cfg);
    let s = octo_provider_anthropic::AnthropicSender::new(cfg).unwrap();
    if tools {
        stream_once(&s, req).await.1.unwrap();
    } else {
        use futures_util::StreamExt;
        let mut st = s.send_stream(req).await.unwrap();
        while st.next().await.is_some() {}
    }
    llm.request_bodies().await.remove(0)
}

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "read_file",
            "Reads a file.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        ToolDefinition::new(
            "terminal",
            "Runs a command.",
            json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        ),
    ]
}

fn long_history() -> Vec<Message> {
    vec![
        Message::user("Fix the failing test."),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    thinking: "Look at the test first.".into(),
                    signature: Some("c2ln".into()),
                },
                ContentBlock::Thinking {
                    thinking: "unsigned reasoning from another provider".into(),
                    signature: None,
                },
                ContentBlock::RedactedThinking { data: "b3BhcXVl".into() },
                ContentBlock::text("Reading it."),
                ContentBlock::ToolUse {
                    id: "toolu_1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "src/lib.rs"}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "toolu_1".into(),
                content: vec![
                    ToolResultPart::Text { text: "fn add() {}".into() },
                    ToolResultPart::Image {
                        source: ImageSource { media_type: "image/png".into(), data: "iVBORw0=".into() },
                    },
                ],
                is_error: false,
            }],
        ),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolUse {
                id: "toolu_2".into(),
                name: "terminal".into(),
                input: json!({"command": "cargo test"}),
            }],
        ),
        Message::new(Role::User, vec![ContentBlock::tool_result("toolu_2", "", true)]),
        // a second user message in a row (after an interrupted turn) is merged into the previous one
        Message::new(
            Role::User,
            vec![
                ContentBlock::text("Also check the image."),
                ContentBlock::Image {
                    source: ImageSource { media_type: "image/jpeg".into(), data: "/9j/4A==".into() },
                },
                ContentBlock::text(""),
            ],
        ),
    ]
}

#[tokio::test]
async fn simple_chat_with_cached_system_prompt() {
    let h = vec![Message::user("Hello")];
    let body = body_for(|_| {}, Request::new(&h).with_system("You are octo."), false).await;
    insta::assert_json_snapshot!("simple_chat", body);
}

#[tokio::test]
async fn tools_history_and_cache_breakpoints() {
    let h = long_history();
    let t = tools();
    let body = body_for(|_| {}, Request::new(&h).with_system("You are octo.").with_tools(&t), true).await;
    insta::assert_json_snapshot!("tools_and_history", body);
}

#[tokio::test]
async fn thinking_config_raises_max_tokens_above_the_budget() {
    let h = vec![Message::user("Think hard.")];
    let body = body_for(
        |_| {},
        Request::new(&h).with_reasoning(ReasoningEffort::High).with_max_tokens(Some(4096)),
        false,
    )
    .await;
    insta::assert_json_snapshot!("thinking_high", body);
    assert!(body["max_tokens"].as_u64().unwrap() > body["thinking"]["budget_tokens"].as_u64().unwrap());
}

#[tokio::test]
async fn caching_off_and_no_system() {
    let h = vec![Message::user("Hi"), Message::assistant("Hello"), Message::user("Again")];
    let t = tools();
    let body = body_for(|c| c.prompt_caching = false, Request::new(&h).with_tools(&t), true).await;
    insta::assert_json_snapshot!("caching_off", body);
}

#[tokio::test]
async fn tool_choice_maps_to_the_wire() {
    let h = vec![Message::user("Hi")];
    let t = tools();
    let forced = body_for(
        |_| {},
        Request::new(&h).with_tools(&t).with_tool_choice(ToolChoice::Tool("terminal")),
        true,
    )
    .await;
    assert_eq!(forced["tool_choice"], json!({"type": "tool", "name": "terminal"}));
    let any = body_for(|_| {}, Request::new(&h).with_tools(&t).with_tool_choice(ToolChoice::Any), true).await;
    assert_eq!(any["tool_choice"], json!({"type": "any"}));
    let none =
        body_for(|_| {}, Request::new(&h).with_tools(&t).with_tool_choice(ToolChoice::None), true).await;
    assert_eq!(none["tool_choice"], json!({"type": "none"}));
    let no_tools = body_for(|_| {}, Request::new(&h).with_tool_choice(ToolChoice::Any), true).await;
    assert!(no_tools.get("tool_choice").is_none(), "no tools, no tool_choice");
}

#[tokio::test]
async fn thinking_never_pushes_max_tokens_past_the_model_cap() {
    let h = vec![Message::user("Think as hard as you can.")];
    let body = body_for(
        |c| {
            c.settings.model = "claude-opus-4-1".into();
            c.settings.model_info.max_output = 32_000;
        },
        Request::new(&h).with_reasoning(ReasoningEffort::Max).with_max_tokens(Some(16_000)),
        false,
    )
    .await;
    let max = body["max_tokens"].as_u64().unwrap();
    let budget = body["thinking"]["budget_tokens"].as_u64().unwrap();
    assert_eq!(max, 32_000);
    assert!(budget >= 1024 && budget + 1024 <= max, "budget {budget}, max {max}");
}

#[tokio::test]
async fn default_max_tokens_leaves_room_for_a_long_prompt() {
    // ~175k tokens of history on a 200k-token model: asking for 32k output would be refused.
    let h = vec![Message::user("x".repeat(700_000))];
    let body = body_for(|_| {}, Request::new(&h), false).await;
    let max = body["max_tokens"].as_u64().unwrap();
    assert!((20_000..32_000).contains(&max), "{max}");
    let explicit = body_for(|_| {}, Request::new(&h).with_max_tokens(Some(30_000)), false).await;
    assert_eq!(explicit["max_tokens"], 30_000, "an explicit cap is respected");
}

#[tokio::test]
async fn tool_history_without_tool_definitions_is_sent_as_text() {
    let h = long_history();
    let body = body_for(|_| {}, Request::new(&h), false).await;
    let text = body.to_string();
    assert!(!text.contains("\"tool_use\"") && !text.contains("\"tool_result\""), "{text}");
    assert!(text.contains("[called tool `read_file` with {\\\"path\\\":\\\"src/lib.rs\\\"}]"), "{text}");
    assert!(text.contains("[tool result (error)]"));
    assert!(body.get("tools").is_none());
}

#[test]
fn thinking_budgets_per_effort() {
    use octo_provider_anthropic::thinking_budget;
    assert_eq!(thinking_budget(ReasoningEffort::Off), None);
    let budgets: Vec<u32> =
        [ReasoningEffort::Low, ReasoningEffort::Medium, ReasoningEffort::High, ReasoningEffort::Max]
            .iter()
            .map(|e| thinking_budget(*e).unwrap())
            .collect();
    assert!(budgets.windows(2).all(|w| w[0] < w[1]), "{budgets:?}");
    assert!(budgets[0] >= 1024);
}
