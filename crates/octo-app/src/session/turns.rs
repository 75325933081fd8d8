//! Where a conversation's turns start, as rewinds and checkpoints count them.

use octo_agent::{ContentBlock, Message, Role};

/// Whether `m` starts a turn: a user message with something the user wrote (not only tool
/// results).
pub(super) fn starts_turn(m: &Message) -> bool {
    m.role == Role::User && m.content.iter().any(|b| !matches!(b, ContentBlock::ToolResult { .. }))
}

/// A prompt's first line as checkpoints keep it.
pub(super) fn first_line(m: &Message) -> String {
    m.text().lines().next().unwrap_or_default().chars().take(200).collect()
}

/// Where each turn starts in `history`.
pub(super) fn starts(history: &[Message]) -> Vec<usize> {
    history.iter().enumerate().filter(|(_, m)| starts_turn(m)).map(|(i, _)| i).collect()
}
