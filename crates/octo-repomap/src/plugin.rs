//! The conversation's files for the ranking: at the agent's after-tool seat every path a tool
//! read or wrote is remembered (inside the workspace only) and weighs in the next map; before a
//! turn's first request, the files the user's prompt names become the map's focus.

use crate::map::RepoMap;
use octo_agent::plugin::{RequestInfo, ToolCallInfo};
use octo_agent::{async_trait, AfterTool, Plugin, Role, Subject, ToolOutput};
use std::path::Path;
use std::sync::Arc;

/// The plugin over a workspace's map.
#[derive(Debug, Clone)]
pub struct SeenFilesPlugin(pub Arc<RepoMap>);

#[async_trait]
impl Plugin for SeenFilesPlugin {
    fn name(&self) -> &str {
        "repo_map"
    }

    async fn before_request(&self, request: RequestInfo<'_>) -> Option<String> {
        if request.request == 1 {
            if let Some(prompt) = request.messages.iter().rev().find(|m| m.role == Role::User) {
                self.0.note_prompt(&prompt.text());
            }
        }
        None
    }

    async fn after_tool(&self, call: ToolCallInfo<'_>, output: &ToolOutput) -> AfterTool {
        if let Subject::Path { field, .. } = &call.meta.subject {
            if let Some(path) = call.input.get(field).and_then(|v| v.as_str()).filter(|_| !output.is_error) {
                self.0.note_seen(Path::new(path));
            }
        }
        AfterTool::Keep
    }
}
