//! `list_dir`: what is in a directory, with types and sizes, ignore rules respected.

use crate::path::resolve;
use crate::sniff::human_size;
use octo_agent::{
    async_trait, parse_input, Access, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta,
    ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};

/// Most entries listed.
const MAX_ENTRIES: usize = 500;

/// Lists directories.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListDir;

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    all: bool,
}

#[async_trait]
impl ToolExecutor for ListDir {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "list_dir",
            format!(
                "List a directory: subdirectories, then files with sizes (at most {MAX_ENTRIES}); hidden and \
                 ignored ones only with `all`."
            ),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "all": {"type": "boolean"}
                }
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().subject(Subject::path("path", Access::Read)).aliases(&["LS"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("list_dir", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let shown = input.path.clone().unwrap_or_else(|| ".".into());
        let dir = resolve(ctx.cwd(), input.path.as_deref().unwrap_or("."));
        let result = tokio::task::spawn_blocking(move || list(&dir, &shown, input.all)).await;
        result.unwrap_or_else(|e| ToolOutput::error(format!("listing failed: {e}")))
    }
}

fn list(dir: &std::path::Path, shown: &str, all: bool) -> ToolOutput {
    if !dir.is_dir() {
        return ToolOutput::error(if dir.exists() {
            format!("{shown} is a file, not a directory; use read_file to read it")
        } else {
            format!("{shown} does not exist")
        });
    }
    let walker = ignore::WalkBuilder::new(dir)
        .max_depth(Some(1))
        .hidden(!all)
        .ignore(!all)
        .git_ignore(!all)
        .git_global(!all)
        .git_exclude(!all)
        .parents(!all)
        .require_git(false)
        .build();
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        match entry.file_type() {
            Some(t) if t.is_dir() => dirs.push(format!("{name}/")),
            Some(t) if t.is_symlink() => {
                let target =
                    std::fs::read_link(entry.path()).map(|p| p.display().to_string()).unwrap_or_default();
                files.push(format!("{name} -> {target}"));
            }
            _ => {
                let size = entry.metadata().map(|m| human_size(m.len())).unwrap_or_default();
                files.push(format!("{name}  ({size})"));
            }
        }
    }
    dirs.sort();
    files.sort();
    let total = dirs.len() + files.len();
    if total == 0 {
        return ToolOutput::text(format!(
            "{shown} is empty{}",
            if all { "" } else { " (hidden and ignored entries not shown)" }
        ));
    }
    let mut out = format!("{shown}: {} directories, {} files\n", dirs.len(), files.len());
    for line in dirs.iter().chain(files.iter()).take(MAX_ENTRIES) {
        out.push_str(line);
        out.push('\n');
    }
    if total > MAX_ENTRIES {
        out.push_str(&format!("[... {} more entries not shown]\n", total - MAX_ENTRIES));
    }
    ToolOutput::text(out)
}
