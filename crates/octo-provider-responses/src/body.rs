//! Building the `POST /responses` body from the borrowed history: the system prompt as
//! `instructions`, each message as input items (`message`, `function_call`,
//! `function_call_output`, `reasoning`), the tools as function tools.

use crate::config::ResponsesConfig;
use octo_agent::{ContentBlock, ImageSource, Message, ReasoningEffort, Request, Role, ToolChoice};
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<Item<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ReasoningParam>,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

#[derive(Serialize)]
struct ReasoningParam {
    effort: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'static str>,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    /// Function tools are strict by default in this API, which refuses schemas with optional
    /// properties; octo's are validated by octo.
    strict: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        role: &'static str,
        content: Content<'a>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: String,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: String,
    },
    Reasoning {
        id: &'a str,
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<&'a str>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText { text: Cow<'a, str> },
    InputImage { image_url: String },
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

fn data_url(src: &ImageSource) -> String {
    format!("data:{};base64,{}", src.media_type, src.data)
}

/// A user message: plain text when it is only text (the most widely accepted form), else parts.
fn user_item<'a>(texts: Vec<Cow<'a, str>>, images: &[&'a ImageSource]) -> Option<Item<'a>> {
    if images.is_empty() {
        let joined = texts.join("\n\n");
        return (!joined.is_empty())
            .then_some(Item::Message { role: "user", content: Content::Text(Cow::Owned(joined)) });
    }
    let mut parts: Vec<Part<'a>> = texts.into_iter().map(|text| Part::InputText { text }).collect();
    parts.extend(images.iter().map(|s| Part::InputImage { image_url: data_url(s) }));
    Some(Item::Message { role: "user", content: Content::Parts(parts) })
}

fn push_user<'a>(m: &'a Message, out: &mut Vec<Item<'a>>) {
    let mut texts: Vec<Cow<'a, str>> = Vec::new();
    let mut images = Vec::new();
    let mut result_images = Vec::new();
    for block in &m.content {
        match block {
            ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                let text = octo_provider::tool_result_text(content, *is_error, &mut result_images);
                out.push(Item::FunctionCallOutput { call_id: tool_use_id, output: text });
            }
            ContentBlock::Text { text } if !text.is_empty() => texts.push(Cow::Borrowed(text.as_str())),
            ContentBlock::Image { source } => images.push(source),
            _ => {}
        }
    }
    if !result_images.is_empty() {
        out.extend(user_item(vec![Cow::Borrowed("Images returned by the tools above:")], &result_images));
    }
    out.extend(user_item(texts, &images));
}

/// An assistant message, its blocks in order: reasoning (only this endpoint and model's, with the
/// content the vendor needs to go on from it), text, calls.
fn push_assistant<'a>(m: &'a Message, source: &str, store: bool, out: &mut Vec<Item<'a>>) {
    let mut text = String::new();
    let flush = |text: &mut String, out: &mut Vec<Item<'a>>| {
        if !text.is_empty() {
            out.push(Item::Message {
                role: "assistant",
                content: Content::Text(Cow::Owned(std::mem::take(text))),
            });
        }
    };
    for block in &m.content {
        match block {
            ContentBlock::Text { text: t } => text.push_str(t),
            ContentBlock::Reasoning { id, summary, encrypted_content, source: from }
                if from == source && !id.is_empty() && (store || encrypted_content.is_some()) =>
            {
                flush(&mut text, out);
                let summary = if summary.is_empty() {
                    Vec::new()
                } else {
                    vec![Summary { kind: "summary_text", text: summary }]
                };
                out.push(Item::Reasoning { id, summary, encrypted_content: encrypted_content.as_deref() });
            }
            ContentBlock::ToolUse { id, name, input } => {
                flush(&mut text, out);
                out.push(Item::FunctionCall { call_id: id, name, arguments: input.to_string() });
            }
            _ => {}
        }
    }
    flush(&mut text, out);
}

fn effort_name(e: ReasoningEffort) -> Option<&'static str> {
    match e {
        ReasoningEffort::Off => None,
        ReasoningEffort::Low => Some("low"),
        ReasoningEffort::Medium => Some("medium"),
        ReasoningEffort::High | ReasoningEffort::Max => Some("high"),
    }
}

/// Whether `model` is one of OpenAI's reasoning families (they reason whether asked or not, and
/// their reasoning is worth carrying; others refuse `reasoning` parameters).
pub fn is_reasoning_model(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5", "codex", "gpt-oss"].iter().any(|p| m.starts_with(p))
}

/// A key that stays the same for every request of one conversation (its system prompt and first
/// message), so the vendor's prompt cache is found again.
fn cache_key(req: &Request<'_>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let first = req.messages.first().map(Message::text).unwrap_or_default();
    for b in req.system.unwrap_or_default().bytes().chain([0]).chain(first.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("octo-{h:016x}")
}

pub(crate) fn build(
    req: &Request<'_>,
    cfg: &ResponsesConfig,
    stream: bool,
    with_tools: bool,
) -> Result<Vec<u8>, serde_json::Error> {
    let s = &cfg.settings;
    let source = format!("{}:{}", s.id, s.model);
    let mut input = Vec::with_capacity(req.messages.len() + 4);
    for m in req.messages {
        match m.role {
            Role::User => push_user(m, &mut input),
            Role::Assistant => push_assistant(m, &source, cfg.store, &mut input),
        }
    }
    let tools: Vec<Tool<'_>> = if with_tools {
        req.tools
            .iter()
            .map(|t| Tool {
                kind: "function",
                name: &t.name,
                description: &t.description,
                parameters: &t.input_schema,
                strict: false,
            })
            .collect()
    } else {
        Vec::new()
    };
    let tool_choice = (!tools.is_empty()).then(|| match req.tool_choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Any => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
    });
    let reasoning_model = is_reasoning_model(&s.model);
    let effort = effort_name(req.reasoning).or(reasoning_model.then_some("medium"));
    let reasoning = effort
        .filter(|_| reasoning_model || req.reasoning != ReasoningEffort::Off)
        .map(|effort| ReasoningParam { effort, summary: cfg.reasoning_summary.then_some("auto") });
    let include =
        if reasoning.is_some() && !cfg.store { vec!["reasoning.encrypted_content"] } else { Vec::new() };
    let body = Body {
        model: &s.model,
        instructions: req.system.filter(|t| !t.is_empty()),
        input,
        parallel_tool_calls: (!tools.is_empty()).then_some(true),
        tools,
        tool_choice,
        max_output_tokens: req.max_tokens.or(s.max_tokens),
        reasoning,
        store: cfg.store,
        include,
        prompt_cache_key: cfg.cache_key.then(|| cache_key(req)),
        stream,
    };
    serde_json::to_vec(&body)
}
