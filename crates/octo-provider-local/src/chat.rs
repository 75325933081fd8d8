//! Between octo's messages and llama.cpp's OpenAI-shaped chat layer: the history as OpenAI
//! messages (which the chat template renders), and the parser's deltas back as stream events.
// The answer side (deltas, the generic scheme) is the engine's; a client-only build keeps the
// request side.
#![cfg_attr(not(feature = "engine"), allow(dead_code))]

use octo_agent::{ContentBlock, Message, Role, StopReason, StreamEvent, ToolDefinition, ToolResultPart};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The conversation as an OpenAI `messages` array: tool results become `tool` messages, tool
/// calls `tool_calls`, thinking `reasoning_content`; images are named, not sent (the model reads
/// text).
pub fn messages(system: Option<&str>, history: &[Message]) -> Value {
    let mut out = Vec::new();
    if let Some(s) = system.filter(|s| !s.is_empty()) {
        out.push(json!({"role": "system", "content": s}));
    }
    for m in history {
        match m.role {
            Role::User => user(m, &mut out),
            Role::Assistant => out.push(assistant(m)),
        }
    }
    Value::Array(out)
}

fn user(m: &Message, out: &mut Vec<Value>) {
    let mut text = String::new();
    for b in &m.content {
        match b {
            ContentBlock::Text { text: t } => push_line(&mut text, t),
            ContentBlock::Image { .. } => {
                push_line(&mut text, "[an image was attached; this model reads text only]");
            }
            ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                let mut body: String = content
                    .iter()
                    .map(|p| match p {
                        ToolResultPart::Text { text } => text.as_str(),
                        ToolResultPart::Image { .. } => "[image]",
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                if *is_error {
                    body = format!("Error: {body}");
                }
                out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": body}));
            }
            _ => {}
        }
    }
    if !text.is_empty() {
        out.push(json!({"role": "user", "content": text}));
    }
}

fn assistant(m: &Message) -> Value {
    let (mut text, mut thinking, mut calls) = (String::new(), String::new(), Vec::new());
    for b in &m.content {
        match b {
            ContentBlock::Text { text: t } => push_line(&mut text, t),
            ContentBlock::Thinking { thinking: t, .. } => push_line(&mut thinking, t),
            ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}
            })),
            _ => {}
        }
    }
    let mut msg = json!({"role": "assistant", "content": text});
    if !thinking.is_empty() {
        msg["reasoning_content"] = json!(thinking);
    }
    if !calls.is_empty() {
        msg["tool_calls"] = Value::Array(calls);
    }
    msg
}

fn push_line(buf: &mut String, t: &str) {
    if !buf.is_empty() {
        buf.push('\n');
    }
    buf.push_str(t);
}

/// The tools as an OpenAI `tools` array (`None` when there are none).
pub fn tools(defs: &[ToolDefinition]) -> Option<Value> {
    if defs.is_empty() {
        return None;
    }
    let list: Vec<Value> = defs
        .iter()
        .map(|d| {
            json!({"type": "function", "function": {
                "name": d.name, "description": d.description, "parameters": d.input_schema
            }})
        })
        .collect();
    Some(Value::Array(list))
}

/// Turns the chat parser's OpenAI-shaped deltas into stream events, numbering tool calls.
#[derive(Debug, Default)]
pub struct Deltas {
    /// Calls started, by the parser's index: our index.
    started: BTreeMap<u64, usize>,
}

impl Deltas {
    /// The events for one delta (a JSON object with `content`, `reasoning_content` or
    /// `tool_calls`).
    pub fn events(&mut self, delta: &str) -> Vec<StreamEvent> {
        let Ok(v) = serde_json::from_str::<Value>(delta) else { return Vec::new() };
        let mut out = Vec::new();
        if let Some(t) = v.get("reasoning_content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            out.push(StreamEvent::ThinkingDelta(t.to_owned()));
        }
        if let Some(t) = v.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta(t.to_owned()));
        }
        for call in v.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let key = call.get("index").and_then(Value::as_u64).unwrap_or(self.started.len() as u64);
            let f = call.get("function");
            let name = f.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|n| !n.is_empty());
            let index = match (self.started.get(&key), name) {
                (Some(i), _) => *i,
                (None, Some(name)) => {
                    let i = self.started.len();
                    self.started.insert(key, i);
                    let id = call
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|i| !i.is_empty())
                        .map_or_else(unique_call_id, str::to_owned);
                    out.push(StreamEvent::ToolUseStart { index: i, id, name: name.to_owned() });
                    i
                }
                // Arguments before a name: nothing to attach them to yet.
                (None, None) => continue,
            };
            if let Some(args) =
                f.and_then(|f| f.get("arguments")).and_then(Value::as_str).filter(|a| !a.is_empty())
            {
                out.push(StreamEvent::ToolUseInputDelta { index, partial_json: args.to_owned() });
            }
        }
        out
    }

    /// Closes the calls; the stop reason (`ToolUse` when there were calls, else `stop`).
    pub fn finish(&mut self, stop: StopReason) -> (Vec<StreamEvent>, StopReason) {
        let closes: Vec<StreamEvent> =
            self.started.values().map(|&index| StreamEvent::ToolUseStop { index }).collect();
        let stop =
            if closes.is_empty() || stop == StopReason::MaxTokens { stop } else { StopReason::ToolUse };
        (closes, stop)
    }
}

/// A call id no other call of any session shares: the process's start time and a counter (the
/// engine's output carries none, and ids that restart each request would collide in a history).
fn unique_call_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static BASE: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let base = *BASE.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nanos ^ u64::from(std::process::id()).rotate_left(32)
    });
    format!("call_local_{base:x}_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_becomes_openai_messages() {
        let call = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking { thinking: "hmm".into(), signature: None },
                ContentBlock::text("Looking."),
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a"}),
                },
            ],
        );
        let result = Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "t1".into(),
                content: vec![ToolResultPart::Text { text: "contents".into() }],
                is_error: true,
            }],
        );
        let v = messages(Some("be brief"), &[Message::user("hi"), call, result]);
        assert_eq!(v[0], json!({"role": "system", "content": "be brief"}));
        assert_eq!(v[1], json!({"role": "user", "content": "hi"}));
        assert_eq!(v[2]["reasoning_content"], "hmm");
        assert_eq!(v[2]["tool_calls"][0]["function"]["arguments"], "{\"path\":\"a\"}");
        assert_eq!(v[3], json!({"role": "tool", "tool_call_id": "t1", "content": "Error: contents"}));
    }

    #[test]
    fn deltas_become_events_and_calls_are_numbered() {
        let mut d = Deltas::default();
        assert_eq!(
            d.events(r#"{"reasoning_content":"why"}"#),
            vec![StreamEvent::ThinkingDelta("why".into())]
        );
        assert_eq!(d.events(r#"{"content":"Hi"}"#), vec![StreamEvent::TextDelta("Hi".into())]);
        let start = d.events(r#"{"tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"grep","arguments":"{\"pat"}}]}"#);
        let StreamEvent::ToolUseStart { index: 0, id, name } = &start[0] else { panic!("{start:?}") };
        assert_eq!(name, "grep");
        assert!(id.starts_with("call_local_"), "{id}");
        let mut again = Deltas::default();
        let other = again
            .events(r#"{"tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"grep"}}]}"#);
        assert!(
            matches!(&other[0], StreamEvent::ToolUseStart { id: o, .. } if o != id),
            "ids never repeat: {other:?}"
        );
        assert_eq!(start[1], StreamEvent::ToolUseInputDelta { index: 0, partial_json: "{\"pat".into() });
        let more = d.events(r#"{"tool_calls":[{"index":0,"function":{"arguments":"tern\":\"x\"}"}}]}"#);
        assert_eq!(
            more,
            vec![StreamEvent::ToolUseInputDelta { index: 0, partial_json: "tern\":\"x\"}".into() }]
        );
        let (closes, stop) = d.finish(StopReason::EndTurn);
        assert_eq!((closes, stop), (vec![StreamEvent::ToolUseStop { index: 0 }], StopReason::ToolUse));
        assert!(d.events("not json").is_empty());
    }
}

/// Tool calling for models whose chat template knows no tools: the tools are described in the
/// system message, and the answer is a JSON object a grammar enforces — `{"tool_call": {"name",
/// "arguments"}}` or, when the model may answer freely, `{"response": "..."}`.
pub mod generic {
    use super::{json, Deltas, StreamEvent, Value};

    /// `history` (OpenAI messages) with tool calls as JSON answers and tool results as user
    /// messages, consecutive messages of one role merged (templates without tools often insist
    /// that roles alternate).
    pub fn history(history: &Value) -> Value {
        let mut out: Vec<Value> = Vec::new();
        for m in history.as_array().into_iter().flatten() {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
            let (role, content) = match role {
                "tool" => (
                    "user",
                    format!(
                        "Result of tool call {}:\n{}",
                        m.get("tool_call_id").and_then(Value::as_str).unwrap_or(""),
                        m.get("content").and_then(Value::as_str).unwrap_or("")
                    ),
                ),
                "assistant" => {
                    let mut parts: Vec<String> = m
                        .get("content")
                        .and_then(Value::as_str)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                        .into_iter()
                        .collect();
                    for c in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                        let f = &c["function"];
                        let args: Value = f["arguments"]
                            .as_str()
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or(json!({}));
                        parts.push(json!({"tool_call": {"name": f["name"], "arguments": args}}).to_string());
                    }
                    ("assistant", parts.join("\n"))
                }
                other => (other, m.get("content").and_then(Value::as_str).unwrap_or("").to_owned()),
            };
            match out.last_mut() {
                Some(last) if last["role"] == role => {
                    let merged = format!("{}\n\n{content}", last["content"].as_str().unwrap_or(""));
                    last["content"] = json!(merged);
                }
                _ => out.push(json!({"role": role, "content": content})),
            }
        }
        Value::Array(out)
    }

    /// The tools a call may use: all, or the one the request names.
    fn chosen<'a>(tools: &'a Value, only: Option<&str>) -> Vec<&'a Value> {
        tools
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| only.is_none_or(|o| t["function"]["name"] == o))
            .collect()
    }

    /// The system message's note describing the tools and the answer's shape.
    pub fn note(tools: &Value, only: Option<&str>, required: bool) -> String {
        let mut s = String::from(
            "You can call tools. To call one, answer with only a JSON object {\"tool_call\": {\"name\": <tool name>, \"arguments\": <arguments object>}}.",
        );
        if !required {
            s.push_str(" To answer without a tool, answer with {\"response\": \"<your answer>\"}.");
        }
        s.push_str("\nThe tools:");
        let full = small(tools, only);
        for t in chosen(tools, only) {
            let f = &t["function"];
            let about = f["description"].as_str().unwrap_or("");
            // Small models have small windows: the first sentence, and the arguments by name
            // unless the schemas are short.
            let about = if full { about } else { about.split_inclusive(". ").next().unwrap_or(about).trim() };
            let args = if full {
                f["parameters"].to_string()
            } else {
                let props = f["parameters"]["properties"].as_object();
                let required: Vec<&str> = f["parameters"]["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                props
                    .map(|p| {
                        p.keys()
                            .map(|k| if required.contains(&k.as_str()) { k.clone() } else { format!("{k}?") })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default()
            };
            s.push_str(&format!("\n- {}: {about} Arguments: {args}", f["name"].as_str().unwrap_or("")));
        }
        s
    }

    /// Whether the tools' schemas are short enough to give (and enforce) in full; otherwise the
    /// names are enforced and the arguments only have to be a JSON object (the tool checks them).
    fn small(tools: &Value, only: Option<&str>) -> bool {
        chosen(tools, only).iter().map(|t| t["function"]["parameters"].to_string().len()).sum::<usize>()
            <= 2048
    }

    /// The JSON schema of the answer (a grammar is made from it).
    pub fn schema(tools: &Value, only: Option<&str>, required: bool) -> Value {
        let full = small(tools, only);
        let mut any: Vec<Value> = chosen(tools, only)
            .into_iter()
            .map(|t| {
                let f = &t["function"];
                let params = if full && f["parameters"].is_object() {
                    f["parameters"].clone()
                } else {
                    json!({"type": "object"})
                };
                json!({"type": "object", "properties": {"tool_call": {
                    "type": "object",
                    "properties": {"name": {"const": f["name"]}, "arguments": params},
                    "required": ["name", "arguments"]
                }}, "required": ["tool_call"]})
            })
            .collect();
        if !required {
            any.push(json!({"type": "object", "properties": {"response": {"type": "string"}}, "required": ["response"]}));
        }
        json!({"anyOf": any})
    }

    /// Adds `note` to the system message (making one when there is none).
    pub fn with_note(history: &Value, note: &str) -> Value {
        let mut msgs = history.as_array().cloned().unwrap_or_default();
        match msgs.first_mut() {
            Some(first) if first["role"] == "system" => {
                let merged = format!("{}\n\n{note}", first["content"].as_str().unwrap_or(""));
                first["content"] = json!(merged);
            }
            _ => msgs.insert(0, json!({"role": "system", "content": note})),
        }
        Value::Array(msgs)
    }

    /// The events for a whole generic answer: a call, an answer, or (when it is not the JSON
    /// asked for, say cut short) the text itself.
    pub fn events(text: &str, deltas: &mut Deltas) -> Vec<StreamEvent> {
        // The object itself, whatever a template's markers put around it.
        let object = match (text.find('{'), text.rfind('}')) {
            (Some(a), Some(b)) if a < b => &text[a..=b],
            _ => text.trim(),
        };
        let parsed: Option<Value> = serde_json::from_str(object).ok();
        match parsed {
            Some(v) if v.get("tool_call").is_some() => {
                let call = &v["tool_call"];
                let delta = json!({"tool_calls": [{"index": 0, "id": "", "function": {
                    "name": call["name"], "arguments": call.get("arguments").cloned().unwrap_or(json!({})).to_string()
                }}]});
                deltas.events(&delta.to_string())
            }
            Some(v) if v.get("response").is_some() => {
                vec![StreamEvent::TextDelta(v["response"].as_str().unwrap_or("").to_owned())]
            }
            _ if text.is_empty() => Vec::new(),
            _ => vec![StreamEvent::TextDelta(text.to_owned())],
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn tools() -> Value {
            json!([{"type": "function", "function": {"name": "grep", "description": "Search.", "parameters": {"type": "object"}}}])
        }

        #[test]
        fn history_merges_roles_and_spells_calls_as_json() {
            let h = json!([
                {"role": "user", "content": "find x"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{\"p\":\"x\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "a.rs:1:x"},
                {"role": "user", "content": "and?"}
            ]);
            let g = history(&h);
            assert_eq!(g.as_array().unwrap().len(), 3);
            let call: Value = serde_json::from_str(g[1]["content"].as_str().unwrap()).unwrap();
            assert_eq!(call, json!({"tool_call": {"arguments": {"p": "x"}, "name": "grep"}}));
            assert_eq!(g[2]["content"], "Result of tool call c1:\na.rs:1:x\n\nand?");
        }

        #[test]
        fn answers_become_calls_or_text() {
            let mut d = Deltas::default();
            let ev = events("{\"tool_call\": {\"name\": \"grep\", \"arguments\": {\"p\": \"x\"}}}", &mut d);
            assert!(matches!(&ev[0], StreamEvent::ToolUseStart { name, .. } if name == "grep"));
            assert_eq!(
                events("{\"response\": \"hi\"}", &mut Deltas::default()),
                vec![StreamEvent::TextDelta("hi".into())]
            );
            let marked = events(
                "<|im_start|>assistant\n{\"tool_call\": {\"name\": \"grep\", \"arguments\": {}}}\n",
                &mut Deltas::default(),
            );
            assert!(matches!(&marked[0], StreamEvent::ToolUseStart { name, .. } if name == "grep"));
            assert_eq!(
                events("{\"tool_ca", &mut Deltas::default()),
                vec![StreamEvent::TextDelta("{\"tool_ca".into())]
            );
            let s = schema(&tools(), None, true);
            assert_eq!(s["anyOf"].as_array().unwrap().len(), 1);
            assert!(note(&tools(), None, false).contains("{\"response\""));
        }
    }
}
