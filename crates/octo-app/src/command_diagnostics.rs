//! Diagnostics after a command that changed files: the workspace is snapshotted (by the
//! checkpoints' store) before a foreground `terminal` call and compared after it; the changed
//! files a language server serves are synced to it and the problems it reports within the wait
//! are appended to the command's result, as after an edit. Without checkpoints or servers this
//! plugin is not installed; a background command is not followed (its changes come later).

use crate::checkpoints::Recorder;
use async_trait::async_trait;
use octo_agent::plugin::ToolCallInfo;
use octo_agent::{AfterTool, BeforeTool, Plugin, Subject, ToolOutput};
use octo_session::checkpoint::Snapshot;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// Snapshots kept for calls in flight, at most (a denied call never reaches `after_tool`).
const MAX_PENDING: usize = 32;

/// The plugin over a session's checkpoints and language servers.
pub(crate) struct CommandDiagnostics {
    recorder: Arc<Recorder>,
    lsp: Arc<octo_lsp::Lsp>,
    workspace: PathBuf,
    pending: Mutex<HashMap<String, Snapshot>>,
}

impl CommandDiagnostics {
    pub(crate) fn new(recorder: Arc<Recorder>, lsp: Arc<octo_lsp::Lsp>, workspace: PathBuf) -> Self {
        Self { recorder, lsp, workspace, pending: Mutex::default() }
    }
}

/// Whether the call runs a command in the foreground.
fn is_foreground_command(call: &ToolCallInfo<'_>) -> bool {
    matches!(call.meta.subject, Subject::Command { .. })
        && !call.meta.read_only
        && !call.input.get("run_in_background").and_then(serde_json::Value::as_bool).unwrap_or(false)
}

#[async_trait]
impl Plugin for CommandDiagnostics {
    fn name(&self) -> &str {
        "command-diagnostics"
    }

    async fn before_tool(&self, call: ToolCallInfo<'_>) -> BeforeTool {
        if is_foreground_command(&call) {
            if let Some(snapshot) = self.recorder.child_start().await {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                if pending.len() >= MAX_PENDING {
                    pending.clear();
                }
                pending.insert(call.id.to_owned(), snapshot);
            }
        }
        BeforeTool::proceed()
    }

    async fn after_tool(&self, call: ToolCallInfo<'_>, _output: &ToolOutput) -> AfterTool {
        let start = self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(call.id);
        let Some(start) = start else { return AfterTool::Keep };
        let changed: Vec<PathBuf> =
            self.recorder.changed_since(start).await.iter().map(|p| self.workspace.join(p)).collect();
        if changed.is_empty() {
            return AfterTool::Keep;
        }
        match self.lsp.after_changes(&changed).await {
            Some(text) => AfterTool::AddContext(format!("The command changed files.\n{text}")),
            None => AfterTool::Keep,
        }
    }
}
