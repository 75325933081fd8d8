//! Helpers shared by the suite: a log of what test tools did, and history checks. The scripted
//! sender is `octo_testkit::sender`.

#![allow(dead_code)]

use octo_agent::*;
pub use octo_testkit::sender::{text, tools, whole, Caps, ScriptedSender as Scripted, Seen, Step as Reply};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// A shared log of what tools did, in order.
#[derive(Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Every tool_use in `history` has exactly one tool_result in the next message.
pub fn assert_consistent(history: &[Message]) {
    for (i, m) in history.iter().enumerate() {
        let ids: Vec<&str> = m.tool_uses().map(|t| t.id).collect();
        if ids.is_empty() {
            continue;
        }
        let next = history.get(i + 1).unwrap_or_else(|| panic!("tool_use at {i} has no results after it"));
        let results: Vec<&str> = next.tool_result_ids().collect();
        assert_eq!(ids, results, "results at {} do not answer the calls at {i}", i + 1);
    }
}

pub fn result_text(block: &ContentBlock) -> (String, bool) {
    match block {
        ContentBlock::ToolResult { content, is_error, .. } => {
            (content.iter().filter_map(ToolResultPart::as_text).collect::<Vec<_>>().join("\n"), *is_error)
        }
        other => panic!("not a tool result: {other:?}"),
    }
}

pub fn input_str(input: &Value, key: &str) -> String {
    input.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}
