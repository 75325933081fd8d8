//! Building the `POST /chat/completions` body straight from the borrowed history.

use crate::config::OpenAiConfig;
use crate::preset::{accepts_reasoning_effort, is_openai_reasoning_model, MaxTokensField, ReasoningStyle};
use octo_agent::{
    ContentBlock, ImageSource, Message, ReasoningEffort, Request, Role, ToolChoice, ToolResultPart,
};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Msg<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<EffortObj>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct EffortObj {
    effort: &'static str,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum Msg<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        /// Always a string: `""` beside tool calls (llama.cpp's server and others reject `null`).
        content: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
    },
    Tool {
        tool_call_id: &'a str,
        content: String,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(String),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: String,
}

fn data_url(src: &ImageSource) -> ImageUrl {
    ImageUrl { url: format!("data:{};base64,{}", src.media_type, src.data) }
}

/// The user's content: a plain string when it is only text (the most widely accepted form),
/// else parts.
fn user_content<'a>(texts: Vec<Cow<'a, str>>, images: Vec<&'a ImageSource>) -> Option<UserContent<'a>> {
    if images.is_empty() {
        let joined = texts.join("\n\n");
        return (!joined.is_empty()).then_some(UserContent::Text(joined));
    }
    let mut parts: Vec<Part<'a>> = texts.into_iter().map(|text| Part::Text { text }).collect();
    parts.extend(images.into_iter().map(|s| Part::ImageUrl { image_url: data_url(s) }));
    Some(UserContent::Parts(parts))
}

/// A tool result as plain text, for requests that carry no tool definitions (some servers
/// reject tool messages then).
fn result_as_text<'a>(
    content: &'a [ToolResultPart],
    is_error: bool,
    images: &mut Vec<&'a ImageSource>,
) -> String {
    let mut text = String::from(if is_error { "[tool result (error)]" } else { "[tool result]" });
    for part in content {
        match part {
            ToolResultPart::Text { text: t } => {
                text.push('\n');
                text.push_str(t);
            }
            ToolResultPart::Image { source } => images.push(source),
        }
    }
    text
}

fn push_user<'a>(m: &'a Message, flatten: bool, out: &mut Vec<Msg<'a>>) {
    let mut texts: Vec<Cow<'a, str>> = Vec::new();
    let mut images = Vec::new();
    // Tool results become `tool` messages, which must directly follow the assistant's calls, so
    // they go first; images inside results follow in a user message (tool messages take text).
    let mut result_images = Vec::new();
    for block in &m.content {
        match block {
            ContentBlock::ToolResult { content, is_error, .. } if flatten => {
                texts.push(Cow::Owned(result_as_text(content, *is_error, &mut images)));
            }
            ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                let text = octo_provider::tool_result_text(content, *is_error, &mut result_images);
                out.push(Msg::Tool { tool_call_id: tool_use_id, content: text });
            }
            ContentBlock::Text { text } if !text.is_empty() => texts.push(Cow::Borrowed(text.as_str())),
            ContentBlock::Image { source } => images.push(source),
            _ => {}
        }
    }
    if !result_images.is_empty() {
        if let Some(c) =
            user_content(vec![Cow::Borrowed("Images returned by the tools above:")], result_images)
        {
            out.push(Msg::User { content: c });
        }
    }
    if let Some(c) = user_content(texts, images) {
        out.push(Msg::User { content: c });
    }
}

fn push_assistant<'a>(m: &'a Message, replay_reasoning: bool, flatten: bool, out: &mut Vec<Msg<'a>>) {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in &m.content {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::Thinking { thinking, .. } if replay_reasoning => reasoning.push_str(thinking),
            ContentBlock::ToolUse { name, input, .. } if flatten => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!("[called tool `{name}` with {input}]"));
            }
            ContentBlock::ToolUse { id, name, input } => calls.push(Call {
                id,
                kind: "function",
                function: CallFunction { name, arguments: input.to_string() },
            }),
            _ => {}
        }
    }
    if text.is_empty() && calls.is_empty() {
        return;
    }
    out.push(Msg::Assistant {
        content: text,
        tool_calls: calls,
        reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
    });
}

/// Index of the first message of the current turn: the last user message that carries text or
/// images rather than only tool results. Reasoning is replayed only from there on.
fn current_turn_start(history: &[Message]) -> usize {
    history
        .iter()
        .rposition(|m| {
            m.role == Role::User
                && m.content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::Text { .. } | ContentBlock::Image { .. }))
        })
        .unwrap_or(0)
}

fn effort_name(e: ReasoningEffort) -> Option<&'static str> {
    match e {
        ReasoningEffort::Off => None,
        ReasoningEffort::Low => Some("low"),
        ReasoningEffort::Medium => Some("medium"),
        ReasoningEffort::High | ReasoningEffort::Max => Some("high"),
    }
}

/// The output cap kept inside the window: what is left after the (estimated) prompt, with a
/// margin for the estimate's error, at least a little so the server can still answer (or say the
/// prompt does not fit, which starts overflow recovery).
fn cap_within(window: u64, wanted: u32, req: &Request<'_>) -> u32 {
    let prompt = octo_agent::context::estimate_fixed_tokens(req.system, req.tools)
        + octo_agent::context::estimate_tokens(req.messages);
    let margin = window / 10 + 64;
    let room = window.saturating_sub(prompt + margin).max(256);
    u32::try_from(room).unwrap_or(u32::MAX).min(wanted.max(1))
}

/// Serializes the request body.
pub(crate) fn build(
    req: &Request<'_>,
    cfg: &OpenAiConfig,
    stream: bool,
    with_tools: bool,
    window: Option<u64>,
) -> Result<Vec<u8>, serde_json::Error> {
    let q = cfg.quirks;
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = req.system.filter(|s| !s.is_empty()) {
        messages.push(Msg::System { content: system });
    }
    let turn_start = current_turn_start(req.messages);
    // Without tool definitions, earlier calls and results travel as text.
    let flatten = !with_tools || req.tools.is_empty();
    for (i, m) in req.messages.iter().enumerate() {
        match m.role {
            Role::User => push_user(m, flatten, &mut messages),
            Role::Assistant => {
                push_assistant(m, q.replay_reasoning && i > turn_start, flatten, &mut messages);
            }
        }
    }
    let tools: Vec<Tool<'_>> = if with_tools {
        req.tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                function: Function {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.input_schema,
                },
            })
            .collect()
    } else {
        Vec::new()
    };
    // `auto` is the default and some servers reject the field outright, so it is left out.
    let tool_choice = match (tools.is_empty(), req.tool_choice) {
        (true, _) | (false, ToolChoice::Auto) => None,
        (false, ToolChoice::Any) => Some(Value::from("required")),
        (false, ToolChoice::None) => Some(Value::from("none")),
        (false, ToolChoice::Tool(name)) => {
            Some(serde_json::json!({"type": "function", "function": {"name": name}}))
        }
    };
    let cap = req.max_tokens.or(cfg.settings.max_tokens);
    let cap = match window {
        Some(w) => Some(cap_within(w, cap.unwrap_or(cfg.settings.model_info.max_output), req)),
        None => cap,
    };
    let completion_field = match q.max_tokens_field {
        MaxTokensField::MaxTokens => false,
        MaxTokensField::MaxCompletionTokens => true,
        MaxTokensField::ByModel => is_openai_reasoning_model(&cfg.settings.model),
    };
    let effort = effort_name(req.reasoning);
    let (reasoning_effort, reasoning) = match q.reasoning {
        ReasoningStyle::Effort if accepts_reasoning_effort(&cfg.settings.model) => (effort, None),
        ReasoningStyle::OpenRouter => (None, effort.map(|effort| EffortObj { effort })),
        _ => (None, None),
    };
    let body = Body {
        model: &cfg.settings.model,
        messages,
        tools,
        tool_choice,
        max_tokens: if completion_field { None } else { cap },
        max_completion_tokens: if completion_field { cap } else { None },
        reasoning_effort,
        reasoning,
        stream,
        stream_options: (stream && q.stream_usage).then_some(StreamOptions { include_usage: true }),
    };
    serde_json::to_vec(&body)
}
