//! Building the `POST /v1/messages` body straight from the borrowed history (no copy of the
//! conversation is made to serialize it).

use crate::config::AnthropicConfig;
use octo_agent::{
    ContentBlock, ImageSource, Message, ReasoningEffort, Request, Role, ToolChoice, ToolResultPart,
};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System<'a>>,
    messages: Vec<WireMsg<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Blocks([SystemBlock<'a>; 1]),
}

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: Kind,
}

#[derive(Serialize)]
struct Choice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

#[derive(Serialize, Clone, Copy)]
struct Kind {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Kind = Kind { kind: "ephemeral" };

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Kind>,
}

#[derive(Serialize)]
struct WireMsg<'a> {
    role: &'static str,
    content: Vec<Out<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Out<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Kind>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Kind>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: Vec<Part<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Kind>,
    },
    Image {
        source: Image<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Kind>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: &'a str },
    Image { source: Image<'a> },
}

#[derive(Serialize)]
struct Image<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

fn image(src: &ImageSource) -> Image<'_> {
    Image { kind: "base64", media_type: &src.media_type, data: &src.data }
}

const NO_OUTPUT: &str = "(no output)";

impl Out<'_> {
    /// Sets a cache breakpoint; returns false for blocks that cannot carry one.
    fn mark(&mut self) -> bool {
        match self {
            Out::Text { cache_control, .. }
            | Out::ToolUse { cache_control, .. }
            | Out::ToolResult { cache_control, .. }
            | Out::Image { cache_control, .. } => {
                *cache_control = Some(EPHEMERAL);
                true
            }
            Out::Thinking { .. } | Out::RedactedThinking { .. } => false,
        }
    }
}

/// Tool blocks rewritten as text, for requests that carry no tool definitions: Anthropic (and
/// gateways in front of other clouds) reject `tool_use`/`tool_result` blocks without them.
fn flattened(block: &ContentBlock) -> Option<Vec<Out<'_>>> {
    Some(match block {
        ContentBlock::ToolUse { name, input, .. } => {
            vec![Out::Text {
                text: Cow::Owned(format!("[called tool `{name}` with {input}]")),
                cache_control: None,
            }]
        }
        ContentBlock::ToolResult { content, is_error, .. } => {
            let mut out = vec![Out::Text {
                text: Cow::Borrowed(if *is_error { "[tool result (error)]" } else { "[tool result]" }),
                cache_control: None,
            }];
            for p in content {
                out.push(match p {
                    ToolResultPart::Text { text } if text.is_empty() => continue,
                    ToolResultPart::Text { text } => {
                        Out::Text { text: Cow::Borrowed(text), cache_control: None }
                    }
                    ToolResultPart::Image { source } => {
                        Out::Image { source: image(source), cache_control: None }
                    }
                });
            }
            out
        }
        _ => return None,
    })
}

fn convert(block: &ContentBlock) -> Option<Out<'_>> {
    Some(match block {
        ContentBlock::Text { text } if text.is_empty() => return None,
        ContentBlock::Text { text } => Out::Text { text: Cow::Borrowed(text), cache_control: None },
        // Reasoning without a signature (from another provider) cannot be verified: leave it out.
        ContentBlock::Thinking { thinking, signature: Some(signature) } => {
            Out::Thinking { thinking, signature }
        }
        // Another provider's reasoning items mean nothing here.
        ContentBlock::Thinking { signature: None, .. } | ContentBlock::Reasoning { .. } => return None,
        ContentBlock::RedactedThinking { data } => Out::RedactedThinking { data },
        ContentBlock::ToolUse { id, name, input } => Out::ToolUse { id, name, input, cache_control: None },
        ContentBlock::ToolResult { tool_use_id, content, is_error } => {
            let mut parts: Vec<Part<'_>> = content
                .iter()
                .filter_map(|p| match p {
                    ToolResultPart::Text { text } if text.is_empty() => None,
                    ToolResultPart::Text { text } => Some(Part::Text { text }),
                    ToolResultPart::Image { source } => Some(Part::Image { source: image(source) }),
                })
                .collect();
            if parts.is_empty() {
                parts.push(Part::Text { text: NO_OUTPUT });
            }
            Out::ToolResult { tool_use_id, content: parts, is_error: *is_error, cache_control: None }
        }
        ContentBlock::Image { source } => Out::Image { source: image(source), cache_control: None },
    })
}

/// Converts the history, merging consecutive messages of one role (some compatible endpoints
/// reject them) and dropping empty ones.
fn messages(history: &[Message], flatten_tools: bool) -> Vec<WireMsg<'_>> {
    let mut out: Vec<WireMsg<'_>> = Vec::with_capacity(history.len());
    for m in history {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let blocks = m.content.iter().flat_map(|b| match flatten_tools.then(|| flattened(b)).flatten() {
            Some(flat) => flat,
            None => convert(b).into_iter().collect(),
        });
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => {
                let content: Vec<Out<'_>> = blocks.collect();
                if !content.is_empty() {
                    out.push(WireMsg { role, content });
                }
            }
        }
    }
    out
}

/// Marks the last cacheable block of the last message and of the previous user message, so each
/// request reads the prefix the previous one wrote.
fn mark_message_breakpoints(msgs: &mut [WireMsg<'_>]) {
    let Some(last) = msgs.len().checked_sub(1) else { return };
    let mut targets = vec![last];
    if let Some(prev_user) = msgs[..last].iter().rposition(|m| m.role == "user") {
        targets.push(prev_user);
    }
    for i in targets {
        for block in msgs[i].content.iter_mut().rev() {
            if block.mark() {
                break;
            }
        }
    }
}

/// The thinking budget for an effort level.
pub fn thinking_budget(effort: ReasoningEffort) -> Option<u32> {
    match effort {
        ReasoningEffort::Off => None,
        ReasoningEffort::Low => Some(4_096),
        ReasoningEffort::Medium => Some(10_000),
        ReasoningEffort::High => Some(24_000),
        ReasoningEffort::Max => Some(31_999),
    }
}

/// Anthropic's smallest allowed thinking budget.
const MIN_BUDGET: u32 = 1_024;

/// The output cap octo asks for when none is configured.
///
/// Newer Claude models reject a request whose prompt plus `max_tokens` exceeds the context window,
/// so asking for the model's full output cap would shrink the usable prompt by that much. octo
/// asks for at most 32,000 tokens, and less when the prompt (estimated at about 4 characters a
/// token) leaves less room.
const DEFAULT_OUTPUT_CAP: u32 = 32_000;

fn default_max_tokens(req: &Request<'_>, cfg: &AnthropicConfig) -> u32 {
    let wanted = cfg.settings.model_info.max_output.clamp(MIN_BUDGET, DEFAULT_OUTPUT_CAP);
    let room = cfg.settings.model_info.context_window.saturating_sub(estimate_prompt_tokens(req) + 1_024);
    u32::try_from(room).unwrap_or(u32::MAX).clamp(MIN_BUDGET, wanted)
}

/// A cheap estimate of a request's prompt tokens: about 4 characters a token, and a flat 1,600
/// per image.
pub(crate) fn estimate_prompt_tokens(req: &Request<'_>) -> u64 {
    octo_agent::context::estimate_fixed_tokens(req.system, req.tools)
        + octo_agent::context::estimate_tokens(req.messages)
}

/// Serializes the request body.
pub(crate) fn build(
    req: &Request<'_>,
    cfg: &AnthropicConfig,
    stream: bool,
    with_tools: bool,
) -> Result<Vec<u8>, serde_json::Error> {
    let model_max = cfg.settings.model_info.max_output.max(MIN_BUDGET);
    let mut max_tokens = match req.max_tokens.or(cfg.settings.max_tokens) {
        Some(explicit) => explicit,
        None => default_max_tokens(req, cfg),
    };
    let thinking = thinking_budget(req.reasoning).map(|wanted| {
        // The budget must stay below max_tokens (leaving room for the answer), and max_tokens
        // within the model's cap.
        if max_tokens <= wanted {
            max_tokens = wanted.saturating_add(8_192);
        }
        max_tokens = max_tokens.min(model_max);
        let budget = wanted.min(max_tokens.saturating_sub(MIN_BUDGET)).max(MIN_BUDGET);
        if max_tokens <= budget {
            // Only for models whose cap is below two minimum budgets.
            max_tokens = budget + MIN_BUDGET;
        }
        Thinking { kind: "enabled", budget_tokens: budget }
    });
    let caching = cfg.prompt_caching;
    let system = req.system.filter(|s| !s.is_empty()).map(|text| {
        if caching {
            System::Blocks([SystemBlock { kind: "text", text, cache_control: EPHEMERAL }])
        } else {
            System::Text(text)
        }
    });
    let mut tools: Vec<WireTool<'_>> = if with_tools {
        req.tools
            .iter()
            .map(|t| WireTool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.input_schema,
                cache_control: None,
            })
            .collect()
    } else {
        Vec::new()
    };
    if caching {
        if let Some(last) = tools.last_mut() {
            last.cache_control = Some(EPHEMERAL);
        }
    }
    // Without tool definitions, earlier tool calls are sent as text (see `flattened`).
    let mut msgs = messages(req.messages, tools.is_empty());
    if caching {
        mark_message_breakpoints(&mut msgs);
    }
    let tool_choice = (!tools.is_empty()).then_some(match req.tool_choice {
        ToolChoice::Auto => Choice { kind: "auto", name: None },
        ToolChoice::Any => Choice { kind: "any", name: None },
        ToolChoice::None => Choice { kind: "none", name: None },
        ToolChoice::Tool(name) => Choice { kind: "tool", name: Some(name) },
    });
    let body = Body {
        model: &cfg.settings.model,
        max_tokens,
        system,
        messages: msgs,
        tools,
        tool_choice,
        thinking,
        stream,
    };
    serde_json::to_vec(&body)
}
