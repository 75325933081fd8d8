//! The conversation as the page draws it: the committed messages folded into the same cards the
//! live stream makes (answers as clean HTML, tool calls with their one-line summary and result),
//! and Markdown rendered for the text being streamed.

use super::error::{entry, ApiError, Body};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::Json;
use octo_app::{ContentBlock, Message, OutputKind, Role, Session};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// A tool result longer than this is cut in the history (the full text is in the session file).
const MAX_OUTPUT: usize = 20_000;

/// `GET /api/sessions/{id}/history[?limit=N]`: the committed messages (the last N or so), the
/// cards they make, how many earlier ones were left out, and the number of the last event they
/// include. A client draws the cards, then follows the events after that
/// number: those of the turn under way (its text so far, its pending approvals) come again.
pub async fn history(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<Limit>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let (mut messages, last_event) = e.history().await;
    let earlier = q.limit.map_or(0, |l| start(&messages, l));
    messages.drain(..earlier);
    let (items, messages) = super::error::blocking(move || (items(&e.session, &messages), messages)).await?;
    Ok(Json(json!({"messages": messages, "items": items, "earlier": earlier, "last_event": last_event})))
}

#[derive(Deserialize)]
pub struct Limit {
    /// Only about the last `limit` messages (from a prompt on); `earlier` says how many are left out.
    limit: Option<usize>,
}

/// Where the last `limit` messages begin, moved back to the prompt that starts their turn.
fn start(messages: &[Message], limit: usize) -> usize {
    let mut i = messages.len().saturating_sub(limit);
    while i > 0 && !is_prompt(&messages[i]) {
        i -= 1;
    }
    i
}

fn is_prompt(m: &Message) -> bool {
    m.role == Role::User
        && m.content.iter().any(|b| matches!(b, ContentBlock::Text { .. } | ContentBlock::Image { .. }))
}

/// The cards `messages` make.
pub fn items(session: &Session, messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut tools: HashMap<String, usize> = HashMap::new();
    for m in messages {
        if m.role == Role::User {
            prompt(m, &mut out);
        }
        let mut text = String::new();
        let flush = |text: &mut String, out: &mut Vec<Value>| {
            if !text.trim().is_empty() {
                out.push(json!({"kind": "assistant", "html": octo_markdown::to_html(text)}));
            }
            text.clear();
        };
        for b in &m.content {
            match (m.role, b) {
                (Role::User, ContentBlock::ToolResult { tool_use_id, content, is_error }) => {
                    let output: String =
                        content.iter().filter_map(|p| p.as_text()).collect::<Vec<_>>().join("\n");
                    let output = cut(&output);
                    match tools.get(tool_use_id).and_then(|&i| out.get_mut(i)) {
                        Some(card) => {
                            card["output"] = json!(output);
                            card["is_error"] = json!(is_error);
                        }
                        None => out.push(json!({"kind": "tool", "id": tool_use_id, "name": "", "summary": "", "output": output, "is_error": is_error})),
                    }
                }
                (Role::Assistant, ContentBlock::Text { text: t }) => text.push_str(t),
                (_, ContentBlock::Thinking { thinking, .. }) => {
                    flush(&mut text, &mut out);
                    out.push(json!({"kind": "thinking", "text": thinking}));
                }
                (_, ContentBlock::ToolUse { id, name, input }) => {
                    flush(&mut text, &mut out);
                    let diff = session.tools().meta(name).is_some_and(|m| m.output == OutputKind::Diff);
                    tools.insert(id.clone(), out.len());
                    out.push(json!({
                        "kind": "tool", "id": id, "name": name,
                        "summary": session.tools().summary(name, input),
                        "diff": diff, "output": null, "is_error": false,
                    }));
                }
                _ => {}
            }
        }
        flush(&mut text, &mut out);
    }
    out
}

/// A user message's prompt card: its text and how many images it carries (none for a message of
/// tool results only).
fn prompt(m: &Message, out: &mut Vec<Value>) {
    let text: Vec<&str> = m
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let images = m.content.iter().filter(|b| matches!(b, ContentBlock::Image { .. })).count();
    if !text.is_empty() || images > 0 {
        out.push(json!({"kind": "user", "text": text.join("\n"), "images": images}));
    }
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_OUTPUT {
        return s.to_owned();
    }
    let mut end = MAX_OUTPUT;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… ({} more bytes in the session file)", &s[..end], s.len() - end)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Markdown {
    text: String,
}

/// `POST /api/markdown {"text"}`: the text as clean HTML (what the page shows while an answer
/// streams; the same renderer draws the history).
pub async fn markdown(Body(m): Body<Markdown>) -> Result<Json<Value>, ApiError> {
    let html = super::error::blocking(move || octo_markdown::to_html(&m.text)).await?;
    Ok(Json(json!({"html": html})))
}
