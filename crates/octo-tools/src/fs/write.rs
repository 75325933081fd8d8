//! `write_file`: create or overwrite a file, atomically, with a diff of what changed.

use super::sink::Sink;
use crate::atomic::unified_diff;
use crate::path::{check_writable, display_relative, resolve};
use octo_agent::{
    async_trait, parse_input, Access, OutputKind, Preview, Subject, ToolContext, ToolDefinition,
    ToolExecutor, ToolMeta, ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Lines of a new file shown before it is written.
const PREVIEW_LINES: usize = 20;

/// Writes whole files.
#[derive(Debug, Clone, Default)]
pub struct WriteFile {
    sink: Sink,
}

impl WriteFile {
    /// `trash_dir` receives previous contents; `writable_roots` are extra writable directories.
    pub fn new(trash_dir: Option<PathBuf>, writable_roots: Vec<PathBuf>) -> Self {
        Self { sink: Sink::new(trash_dir, writable_roots) }
    }

    /// Replaces an existing file through an editor's buffers (see [`crate::Buffers`]).
    #[must_use]
    pub fn with_buffers(mut self, buffers: Option<std::sync::Arc<dyn crate::config::Buffers>>) -> Self {
        self.sink.editor = buffers;
        self
    }
}

#[derive(Deserialize)]
struct Input {
    path: String,
    content: String,
}

#[async_trait]
impl ToolExecutor for WriteFile {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "write_file",
            "Create a file or replace its whole content (the old one goes to octo's trash); returns a diff. For \
             part of a file use edit_file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"}
                },
                "required": ["path", "content"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::writes()
            .subject(Subject::path("path", Access::Write))
            .reclaimable(&["content"])
            .output(OutputKind::Diff)
            .aliases(&["Write"])
            .renamed_args(&[("path", "file_path")])
            .action("write")
    }

    fn preview(&self, input: &Value, cwd: &std::path::Path) -> Option<Preview> {
        let i: Input = serde_json::from_value(input.clone()).ok()?;
        let path = resolve(cwd, &i.path);
        let label = display_relative(&path, cwd);
        Some(match std::fs::read(&path) {
            Ok(old) => Preview::diff(unified_diff(&label, &String::from_utf8_lossy(&old), &i.content)),
            Err(_) => {
                let lines = i.content.lines().count();
                let head: Vec<&str> = i.content.lines().take(PREVIEW_LINES).collect();
                let more = lines.saturating_sub(PREVIEW_LINES);
                let rest = if more > 0 { format!("\n[... {more} more lines]") } else { String::new() };
                Preview::text(format!("new file {label}, {lines} lines:\n{}{rest}", head.join("\n")))
            }
        })
    }

    async fn execute(&self, raw: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("write_file", raw.clone()) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let path = resolve(ctx.cwd(), &input.path);
        if let Err(refusal) = check_writable(ctx, "write_file", &raw, &path, &self.sink.writable_roots).await
        {
            return refusal.into_output();
        }
        if path.is_dir() {
            return ToolOutput::error(format!("{} is a directory; give a file path.", input.path));
        }
        let label = display_relative(&path, ctx.cwd());
        let old = match self.sink.current(&path).await {
            Ok(old) => old,
            Err(e) => return ToolOutput::error(format!("cannot read {label}: {e}")),
        };
        if let Err(e) =
            self.sink.store(ctx.cwd(), &path, old.clone(), &input.content, ctx.tool_use_id(), &label).await
        {
            return e.into_output();
        }
        ToolOutput::text(match old {
            None => format!("created {label} ({} lines)", input.content.lines().count()),
            Some(old) if old == input.content.as_bytes() => format!("{label} unchanged (same content)"),
            Some(old) => {
                let old = String::from_utf8_lossy(&old);
                format!("updated {label}\n{}", unified_diff(&label, &old, &input.content))
            }
        })
    }
}
