//! The `repo_map` tool: the workspace's files with their most referenced definitions, ranked
//! towards the paths and symbols given as `focus`, within a token budget. Read-only.

use crate::map::{RepoMap, Request, DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET};
use octo_agent::{async_trait, parse_input, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutput};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The `repo_map` tool over a workspace's map.
#[derive(Debug, Clone)]
pub struct RepoMapTool(pub Arc<RepoMap>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    focus: Vec<String>,
    #[serde(default)]
    budget: Option<usize>,
}

#[async_trait]
impl ToolExecutor for RepoMapTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "repo_map",
            format!(
                "A map of the repository: its source files with their key definitions (line and \
                 signature), the most referenced first. Give `focus` — the files, directories or \
                 symbol names the task is about — to rank what they use first; `budget` is the \
                 map's size in tokens ({MIN_BUDGET}–{MAX_BUDGET}, default {DEFAULT_BUDGET}). Use it \
                 to find where things are before searching."
            ),
            json!({
                "type": "object",
                "properties": {
                    "focus": {"type": "array", "items": {"type": "string"}},
                    "budget": {"type": "integer", "minimum": MIN_BUDGET, "maximum": MAX_BUDGET}
                }
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("repo_map", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let map = Arc::clone(&self.0);
        let request = Request { focus: input.focus, budget: input.budget };
        match tokio::task::spawn_blocking(move || map.build(&request).text).await {
            Ok(text) => ToolOutput::text(text),
            Err(e) => ToolOutput::error(format!("repo_map: the map's build failed: {e}")),
        }
    }
}
