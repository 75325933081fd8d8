//! How many tokens a conversation occupies: estimates, and the last size a provider reported.

use crate::message::{ContentBlock, Message, ToolResultPart};

/// Rough token count: about four characters a token, 1,600 per image.
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    let mut chars = 0usize;
    let mut images = 0u64;
    for m in messages {
        for b in &m.content {
            match b {
                ContentBlock::Text { text } => chars += text.len(),
                ContentBlock::Thinking { thinking, .. } => chars += thinking.len(),
                ContentBlock::RedactedThinking { data } => chars += data.len() / 2,
                // Encrypted reasoning is base64 of about as many tokens as its summary and more.
                ContentBlock::Reasoning { summary, encrypted_content, .. } => {
                    chars += summary.len() + encrypted_content.as_ref().map_or(0, |e| e.len() / 2);
                }
                ContentBlock::ToolUse { name, input, .. } => chars += name.len() + input.to_string().len(),
                ContentBlock::ToolResult { content, .. } => {
                    for p in content {
                        match p {
                            ToolResultPart::Text { text } => chars += text.len(),
                            ToolResultPart::Image { .. } => images += 1,
                        }
                    }
                }
                ContentBlock::Image { .. } => images += 1,
            }
        }
        chars += 16; // role and framing
    }
    chars as u64 / 4 + images * 1_600
}

/// Rough token count of a system prompt and tool definitions (sent with every request).
pub fn estimate_fixed_tokens(system: Option<&str>, tools: &[crate::spec::ToolDefinition]) -> u64 {
    let system = system.map_or(0, str::len);
    let tools: usize =
        tools.iter().map(|d| d.name.len() + d.description.len() + d.input_schema.to_string().len()).sum();
    ((system + tools) / 4) as u64
}

/// What the history occupies: the last reported prompt size plus an estimate of what was added
/// since, or an estimate of everything before the first report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Prompt tokens of the last response (input + cache read + cache write).
    pub reported: Option<u64>,
    /// History length when it was reported.
    pub at_len: usize,
}

impl Occupancy {
    /// The current estimate for `history` with `fixed` tokens of system prompt and tools.
    pub fn tokens(&self, history: &[Message], fixed: u64) -> u64 {
        match self.reported {
            Some(r) if self.at_len <= history.len() => r + estimate_tokens(&history[self.at_len..]),
            _ => fixed + estimate_tokens(history),
        }
    }
}
