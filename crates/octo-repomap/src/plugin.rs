//! The conversation's files for the ranking, at the agent's after-tool seat: every path a
//! tool read or wrote is remembered (inside the workspace only) and weighs in the next map.

use crate::map::RepoMap;
use octo_agent::plugin::ToolCallInfo;
use octo_agent::{async_trait, AfterTool, Plugin, Subject, ToolOutput};
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

    async fn after_tool(&self, call: ToolCallInfo<'_>, output: &ToolOutput) -> AfterTool {
        if let Subject::Path { field, .. } = &call.meta.subject {
            if let Some(path) = call.input.get(field).and_then(|v| v.as_str()).filter(|_| !output.is_error) {
                self.0.note_seen(Path::new(path));
            }
        }
        AfterTool::Keep
    }
}
