//! `glob`: files by name pattern, newest first, ignore rules respected, walked in parallel.

use crate::error::ToolError;
use crate::path::resolve;
use globset::GlobBuilder;
use ignore::WalkState;
use octo_agent::{
    async_trait, parse_input, Access, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta,
    ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Most paths returned.
pub const MAX_RESULTS: usize = 100;

/// Finds files by glob pattern.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

#[derive(Deserialize)]
struct Input {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

/// Matching files under `base`, newest first: (path relative to `base`, modification time).
pub fn find(base: &Path, pattern: &str) -> Result<(Vec<PathBuf>, usize), ToolError> {
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::Invalid(format!("invalid glob pattern `{pattern}`: {e}")))?
        .compile_matcher();
    let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    ignore::WalkBuilder::new(base).require_git(false).build_parallel().run(|| {
        let glob = &glob;
        let found = &found;
        Box::new(move |entry| {
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file() || t.is_symlink()) {
                return WalkState::Continue;
            }
            let Ok(rel) = entry.path().strip_prefix(base) else { return WalkState::Continue };
            if glob.is_match(rel) {
                let mtime =
                    entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
                found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((mtime, rel.to_path_buf()));
            }
            WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    let total = found.len();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Ok((found.into_iter().take(MAX_RESULTS).map(|(_, p)| p).collect(), total))
}

#[async_trait]
impl ToolExecutor for Glob {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "glob",
            format!(
                "Find files by glob relative to `path` (`**/*.rs`), newest first; skips hidden and .gitignored \
                 files. At most {MAX_RESULTS}, then a count."
            ),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "e.g. src/**/test_*.py"},
                    "path": {"type": "string"}
                },
                "required": ["pattern"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().subject(Subject::path("path", Access::Read)).aliases(&["Glob"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("glob", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let base = resolve(ctx.cwd(), input.path.as_deref().unwrap_or("."));
        if !base.is_dir() {
            return ToolOutput::error(format!("{} is not a directory", base.display()));
        }
        let pattern = input.pattern.clone();
        let result = tokio::task::spawn_blocking(move || find(&base, &pattern)).await;
        match result {
            Ok(Ok((paths, total))) if paths.is_empty() => {
                let _ = total;
                ToolOutput::text(format!("no files match `{}`", input.pattern))
            }
            Ok(Ok((paths, total))) => {
                let mut out: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
                if total > paths.len() {
                    out.push_str(&format!(
                        "[... {} more files match; narrow the pattern or the path]\n",
                        total - paths.len()
                    ));
                }
                ToolOutput::text(out)
            }
            Ok(Err(e)) => e.into_output(),
            Err(e) => ToolOutput::error(format!("glob failed: {e}")),
        }
    }
}
