//! Diagnostics after edits, at the agent's after-tool seat: when a call that writes a file
//! (its subject is a written path) succeeded, the file goes to its language server and the
//! problems it reports in time are appended to the result. A read starts the server early.

use crate::manager::Lsp;
use octo_agent::plugin::ToolCallInfo;
use octo_agent::{async_trait, Access, AfterTool, Plugin, Subject, ToolOutput};
use std::path::Path;
use std::sync::Arc;

/// The plugin over a session's servers.
#[derive(Debug, Clone)]
pub struct DiagnosticsPlugin(pub Arc<Lsp>);

#[async_trait]
impl Plugin for DiagnosticsPlugin {
    fn name(&self) -> &str {
        "lsp"
    }

    async fn after_tool(&self, call: ToolCallInfo<'_>, output: &ToolOutput) -> AfterTool {
        let Subject::Path { field, access } = &call.meta.subject else {
            return AfterTool::Keep;
        };
        let Some(path) = call.input.get(field).and_then(|v| v.as_str()) else {
            return AfterTool::Keep;
        };
        match access {
            Access::Read => {
                self.0.touch(Path::new(path));
                AfterTool::Keep
            }
            Access::Write if !output.is_error => match self.0.after_edit(Path::new(path)).await {
                Some(text) => AfterTool::AddContext(text),
                None => AfterTool::Keep,
            },
            Access::Write => AfterTool::Keep,
        }
    }
}
