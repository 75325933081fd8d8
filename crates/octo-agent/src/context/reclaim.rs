//! Tier 1: replacing old, large tool output (and old arguments that tools declare reclaimable)
//! with placeholders.

use crate::message::{ContentBlock, Message, ToolResultPart};
use crate::tool::ToolRegistry;
use serde_json::Value;

/// Replaces tool results older than the `keep_recent` newest ones, when larger than `min_bytes`,
/// by a placeholder naming the call; shortens the old calls' arguments that their tool declares
/// reclaimable ([`crate::ToolMeta::reclaimable`]) the same way. Returns how many blocks changed.
pub fn reclaim(history: &mut [Message], keep_recent: usize, min_bytes: usize, tools: &ToolRegistry) -> usize {
    // Which tool produced each result, for the placeholder.
    let mut calls: std::collections::HashMap<String, (String, String)> = std::collections::HashMap::new();
    for m in history.iter() {
        for t in m.tool_uses() {
            let summary: String = t.input.to_string().chars().take(120).collect();
            calls.insert(t.id.to_owned(), (t.name.to_owned(), summary));
        }
    }
    let total_results: usize = history.iter().map(|m| m.tool_result_ids().count()).sum();
    let reclaimable = total_results.saturating_sub(keep_recent);
    let mut seen = 0usize;
    let mut changed = 0usize;
    let total_uses: usize = history.iter().map(|m| m.tool_uses().count()).sum();
    let old_uses = total_uses.saturating_sub(keep_recent);
    let mut uses_seen = 0usize;
    for m in history.iter_mut() {
        for block in &mut m.content {
            match block {
                ContentBlock::ToolResult { tool_use_id, content, .. } => {
                    seen += 1;
                    if seen > reclaimable {
                        continue;
                    }
                    let size: usize = content.iter().filter_map(ToolResultPart::as_text).map(str::len).sum();
                    let already = content
                        .iter()
                        .filter_map(ToolResultPart::as_text)
                        .any(|t| t.starts_with("[old result of"));
                    if size <= min_bytes || already {
                        continue;
                    }
                    let (name, args) = calls.get(tool_use_id.as_str()).cloned().unwrap_or_default();
                    *content = vec![ToolResultPart::Text {
                        text: format!(
                            "[old result of `{name}` {args} ({size} bytes) removed to save context; call the tool again if you need it]"
                        ),
                    }];
                    changed += 1;
                }
                ContentBlock::ToolUse { name, input, .. } => {
                    uses_seen += 1;
                    if uses_seen > old_uses {
                        continue;
                    }
                    if let Some(fields) = tools.meta(name).map(|m| &m.reclaimable).filter(|f| !f.is_empty()) {
                        changed += shorten_args(input, fields, min_bytes);
                    }
                }
                _ => {}
            }
        }
    }
    changed
}

/// Shortens long string values of `fields`, wherever they are in the arguments (inside arrays
/// of edits too). Returns how many changed.
fn shorten_args(input: &mut Value, fields: &[String], min_bytes: usize) -> usize {
    match input {
        Value::Object(map) => {
            let mut n = 0;
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if fields.iter().any(|f| f == key) && s.len() > min_bytes => {
                        *s = format!("[{} bytes of text omitted: already applied]", s.len());
                        n += 1;
                    }
                    Value::Object(_) | Value::Array(_) => n += shorten_args(v, fields, min_bytes),
                    _ => {}
                }
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(|v| shorten_args(v, fields, min_bytes)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use crate::spec::{ToolDefinition, ToolMeta, ToolOutput};
    use crate::tool::{ToolContext, ToolExecutor};
    use serde_json::json;
    use std::sync::Arc;

    /// A tool that exists only here: what it declares is all reclaiming knows.
    struct Declared(&'static str, &'static [&'static str]);

    #[async_trait::async_trait]
    impl ToolExecutor for Declared {
        fn definition(&self) -> ToolDefinition {
            ToolDefinition::new(self.0, "", json!({}))
        }
        fn meta(&self) -> ToolMeta {
            ToolMeta::writes().reclaimable(self.1)
        }
        async fn execute(&self, _input: Value, _ctx: &ToolContext) -> ToolOutput {
            ToolOutput::text("")
        }
    }

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(Arc::new(Declared("put", &["content"])))
            .register(Arc::new(Declared("patch", &["old_string", "new_string"])))
            .register(Arc::new(Declared("look", &[])));
        r
    }

    fn edit_round(id: &str, tool: &str, input: Value) -> [Message; 2] {
        [
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolUse { id: id.into(), name: tool.into(), input }],
            ),
            Message::new(Role::User, vec![ContentBlock::tool_result(id, "ok", false)]),
        ]
    }

    #[test]
    fn old_edit_arguments_are_shortened_and_recent_ones_kept() {
        let big = "x".repeat(5_000);
        let mut h: Vec<Message> = Vec::new();
        h.extend(edit_round("w", "put", json!({"path": "a.rs", "content": big})));
        h.extend(edit_round(
            "m",
            "patch",
            json!({"path": "b.rs", "edits": [{"old_string": big, "new_string": "y"}]}),
        ));
        h.extend(edit_round("r", "look", json!({"path": "c.rs", "content": big})));
        h.extend(edit_round("e", "patch", json!({"path": "d.rs", "new_string": big})));
        let tools = registry();
        // The newest call is kept whole.
        assert_eq!(reclaim(&mut h, 1, 4_096, &tools), 2);
        let input = |i: usize| h[i].tool_uses().next().map(|t| t.input.clone()).unwrap_or_default();
        assert_eq!(input(0)["content"], "[5000 bytes of text omitted: already applied]");
        assert_eq!(input(0)["path"], "a.rs", "the path stays, so the model knows what was written");
        assert_eq!(input(2)["edits"][0]["old_string"], "[5000 bytes of text omitted: already applied]");
        assert_eq!(input(2)["edits"][0]["new_string"], "y", "small fields stay");
        assert_eq!(input(4)["content"].as_str().map(str::len), Some(5_000), "declares nothing reclaimable");
        assert_eq!(input(6)["new_string"].as_str().map(str::len), Some(5_000), "the newest call is kept");
        assert_eq!(reclaim(&mut h, 1, 4_096, &tools), 0, "idempotent");
    }
}
