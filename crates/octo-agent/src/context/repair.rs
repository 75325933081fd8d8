//! Giving every `tool_use` a `tool_result` before a request, and dropping results that answer no
//! call, whatever happened before (a crash, an abort, an old or hand-edited session file), so
//! providers never reject the history.

use crate::message::{ContentBlock, Message, Role};

const DANGLING: &str =
    "no result was recorded for this call (octo was interrupted or crashed before it finished)";

/// Inserts error results for tool calls that have none and drops results whose call is not in
/// the message before. Returns how many blocks were added or dropped.
pub fn repair_dangling(history: &mut Vec<Message>) -> usize {
    let mut added = drop_orphan_results(history);
    let mut i = 0;
    while i < history.len() {
        let ids: Vec<String> = history[i].tool_uses().map(|t| t.id.to_owned()).collect();
        if history[i].role != Role::Assistant || ids.is_empty() {
            i += 1;
            continue;
        }
        let answered: Vec<String> = match history.get(i + 1) {
            Some(next) if next.role == Role::User => next.tool_result_ids().map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let missing: Vec<ContentBlock> = ids
            .iter()
            .filter(|id| !answered.contains(id))
            .map(|id| ContentBlock::tool_result(id.clone(), DANGLING, true))
            .collect();
        if !missing.is_empty() {
            added += missing.len();
            match history.get_mut(i + 1) {
                Some(next) if next.role == Role::User => {
                    // Results go first in the message, before any text.
                    let rest = std::mem::take(&mut next.content);
                    next.content = missing;
                    next.content.extend(rest);
                }
                _ => history.insert(i + 1, Message::new(Role::User, missing)),
            }
        }
        i += 1;
    }
    added
}

/// Removes `tool_result` blocks that answer no call of the assistant message right before them;
/// a message left empty by that goes too.
fn drop_orphan_results(history: &mut Vec<Message>) -> usize {
    let mut dropped = 0;
    let mut i = 0;
    while i < history.len() {
        if history[i].role != Role::User || history[i].tool_result_ids().next().is_none() {
            i += 1;
            continue;
        }
        let calls: Vec<String> = match i.checked_sub(1).map(|p| &history[p]) {
            Some(prev) if prev.role == Role::Assistant => prev.tool_uses().map(|t| t.id.to_owned()).collect(),
            _ => Vec::new(),
        };
        let before = history[i].content.len();
        history[i].content.retain(|b| match b {
            ContentBlock::ToolResult { tool_use_id, .. } => calls.contains(tool_use_id),
            _ => true,
        });
        dropped += before - history[i].content.len();
        if history[i].content.is_empty() {
            history.remove(i);
        } else {
            i += 1;
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolUse { id: id.into(), name: "x".into(), input: json!({}) }],
        )
    }

    #[test]
    fn dangling_calls_get_error_results() {
        let mut h = vec![Message::user("go"), call("a"), Message::user("next prompt"), call("b")];
        assert_eq!(repair_dangling(&mut h), 2);
        assert_eq!(h[2].tool_result_ids().collect::<Vec<_>>(), ["a"]);
        assert_eq!(h[2].text(), "next prompt", "the prompt text stays, after the results");
        assert_eq!(h[4].tool_result_ids().collect::<Vec<_>>(), ["b"]);
        assert_eq!(repair_dangling(&mut h), 0, "idempotent");
    }

    #[test]
    fn results_without_their_call_are_dropped() {
        let orphan = |id: &str| Message::new(Role::User, vec![ContentBlock::tool_result(id, "out", false)]);
        let mut mixed = orphan("zz");
        mixed.content.push(ContentBlock::text("and a prompt"));
        let mut h =
            vec![Message::user("go"), orphan("x"), Message::assistant("hi"), mixed, call("a"), orphan("a")];
        assert_eq!(repair_dangling(&mut h), 2);
        assert_eq!(h.len(), 5, "the message holding only an orphan is gone");
        assert_eq!(h[2].text(), "and a prompt", "other content stays");
        assert_eq!(h[2].tool_result_ids().count(), 0);
        assert_eq!(h[4].tool_result_ids().collect::<Vec<_>>(), ["a"], "a matched result stays");
        assert_eq!(repair_dangling(&mut h), 0, "idempotent");
    }
}
