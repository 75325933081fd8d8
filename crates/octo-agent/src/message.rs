//! Messages and content blocks: the conversation as the agent stores it.
//!
//! The serialized shapes here are what session files contain, so they are stable: fields are only
//! ever added (with defaults), never renamed or removed. Older shapes keep loading — a message
//! whose `content` is a plain string, or a tool result whose `content` is a plain string, still
//! deserializes.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Who wrote a message. The system prompt is not a message; it travels beside the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user, including tool results sent back to the model.
    User,
    /// The model.
    Assistant,
}

/// One message: a role and its content blocks, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Author of the message.
    pub role: Role,
    /// The blocks, in the order the model or user produced them. A plain string deserializes as
    /// one text block.
    #[serde(deserialize_with = "de_blocks")]
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self { role: Role::User, content: vec![ContentBlock::text(text)] }
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self { role: Role::Assistant, content: vec![ContentBlock::text(text)] }
    }

    /// A message with the given role and blocks.
    pub fn new(role: Role, content: Vec<ContentBlock>) -> Self {
        Self { role, content }
    }

    /// All text blocks joined, without thinking or tool blocks.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls this message makes, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = ToolUse<'_>> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some(ToolUse { id, name, input }),
            _ => None,
        })
    }

    /// Whether the message contains at least one tool call.
    pub fn has_tool_use(&self) -> bool {
        self.content.iter().any(|b| matches!(b, ContentBlock::ToolUse { .. }))
    }

    /// The ids of the tool results this message carries.
    pub fn tool_result_ids(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
            _ => None,
        })
    }
}

/// A borrowed view of one `tool_use` block.
#[derive(Debug, Clone, Copy)]
pub struct ToolUse<'a> {
    /// Id the result must echo.
    pub id: &'a str,
    /// Tool name.
    pub name: &'a str,
    /// Arguments as JSON.
    pub input: &'a Value,
}

/// One block of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's visible reasoning. The signature lets a provider verify it when it is sent
    /// back; it must round-trip unchanged.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// Provider signature over the reasoning, when the provider gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted; kept opaque and sent back as it came.
    RedactedThinking {
        /// Opaque payload.
        data: String,
    },
    /// Reasoning a provider returned as an item of its own (OpenAI's Responses API): sent back on
    /// the next request to the same endpoint and model so the model goes on from it, never shown
    /// as answer text, and never sent anywhere else.
    Reasoning {
        /// The provider's id of the item.
        id: String,
        /// Its readable summary (may be empty).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        summary: String,
        /// The reasoning itself, encrypted by the provider (when nothing is stored on its side).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
        /// `endpoint:model` it came from; only that endpoint and model are sent it.
        #[serde(default)]
        source: String,
    },
    /// A tool call made by the model.
    ToolUse {
        /// Id that the matching result echoes.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments; always a JSON object when it came from a well-formed call.
        input: Value,
    },
    /// The answer to a tool call.
    ToolResult {
        /// Id of the `tool_use` this answers.
        tool_use_id: String,
        /// What the tool returned. A plain string deserializes as one text part.
        #[serde(deserialize_with = "de_parts")]
        content: Vec<ToolResultPart>,
        /// Whether the tool failed; the model sees the content either way.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image, inline.
    Image {
        /// The image bytes and type.
        source: ImageSource,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A tool result holding one text part.
    pub fn tool_result(tool_use_id: impl Into<String>, text: impl Into<String>, is_error: bool) -> Self {
        Self::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: vec![ToolResultPart::Text { text: text.into() }],
            is_error,
        }
    }
}

/// One part of a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultPart {
    /// Text output.
    Text {
        /// The text.
        text: String,
    },
    /// An image (a screenshot, a read image file).
    Image {
        /// The image bytes and type.
        source: ImageSource,
    },
}

impl ToolResultPart {
    /// The text of a text part, `None` for an image.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::Image { .. } => None,
        }
    }
}

/// Image data carried inline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSource {
    /// MIME type, such as `image/png`.
    pub media_type: String,
    /// Base64-encoded bytes.
    pub data: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum BlocksOrString {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

fn de_blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContentBlock>, D::Error> {
    Ok(match BlocksOrString::deserialize(d)? {
        BlocksOrString::Text(text) => vec![ContentBlock::Text { text }],
        BlocksOrString::Blocks(blocks) => blocks,
    })
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PartsOrString {
    Text(String),
    Parts(Vec<ToolResultPart>),
}

fn de_parts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ToolResultPart>, D::Error> {
    Ok(match PartsOrString::deserialize(d)? {
        PartsOrString::Text(text) => vec![ToolResultPart::Text { text }],
        PartsOrString::Parts(parts) => parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(m: &Message) -> Message {
        let s = serde_json::to_string(m).unwrap();
        serde_json::from_str(&s).unwrap()
    }

    #[test]
    fn every_block_type_round_trips() {
        let m = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking { thinking: "hmm".into(), signature: Some("sig==".into()) },
                ContentBlock::RedactedThinking { data: "opaque".into() },
                ContentBlock::text("hello"),
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "grep".into(),
                    input: json!({"pattern": "x"}),
                },
                ContentBlock::Image {
                    source: ImageSource { media_type: "image/png".into(), data: "AAAA".into() },
                },
            ],
        );
        assert_eq!(round_trip(&m), m);
        let r = Message::new(
            Role::User,
            vec![
                ContentBlock::tool_result("t1", "found", false),
                ContentBlock::ToolResult {
                    tool_use_id: "t2".into(),
                    content: vec![
                        ToolResultPart::Text { text: "shot".into() },
                        ToolResultPart::Image {
                            source: ImageSource { media_type: "image/jpeg".into(), data: "BBBB".into() },
                        },
                    ],
                    is_error: true,
                },
            ],
        );
        assert_eq!(round_trip(&r), r);
    }

    #[test]
    fn serialized_shape_is_stable() {
        let m = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("a"),
                ContentBlock::ToolUse { id: "1".into(), name: "n".into(), input: json!({}) },
            ],
        );
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "1", "name": "n", "input": {}}
            ]})
        );
        // is_error is omitted when false, present when true
        let ok = serde_json::to_value(ContentBlock::tool_result("1", "x", false)).unwrap();
        assert_eq!(
            ok,
            json!({"type": "tool_result", "tool_use_id": "1", "content": [{"type": "text", "text": "x"}]})
        );
        let err = serde_json::to_value(ContentBlock::tool_result("1", "x", true)).unwrap();
        assert_eq!(err["is_error"], json!(true));
    }

    #[test]
    fn plain_string_content_still_loads() {
        let m: Message = serde_json::from_str(r#"{"role":"user","content":"hi there"}"#).unwrap();
        assert_eq!(m, Message::user("hi there"));
        let r: Message = serde_json::from_str(
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"out"}]}"#,
        )
        .unwrap();
        assert_eq!(r.content, vec![ContentBlock::tool_result("a", "out", false)]);
        let t: Message =
            serde_json::from_str(r#"{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}"#)
                .unwrap();
        assert_eq!(t.content, vec![ContentBlock::Thinking { thinking: "x".into(), signature: None }]);
    }

    #[test]
    fn unknown_role_or_block_is_an_error_not_a_panic() {
        assert!(serde_json::from_str::<Message>(r#"{"role":"system","content":"x"}"#).is_err());
        assert!(serde_json::from_str::<Message>(r#"{"role":"user","content":[{"type":"video"}]}"#).is_err());
    }

    #[test]
    fn helpers() {
        let m = Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text("a"),
                ContentBlock::ToolUse { id: "1".into(), name: "n".into(), input: json!({}) },
                ContentBlock::text("b"),
            ],
        );
        assert_eq!(m.text(), "ab");
        assert!(m.has_tool_use());
        assert_eq!(m.tool_uses().map(|t| t.id).collect::<Vec<_>>(), vec!["1"]);
        assert!(!Message::user("x").has_tool_use());
    }
}
