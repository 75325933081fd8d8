//! `grep`: regular-expression search with ripgrep's own libraries, ignore rules respected,
//! binary files skipped, files searched in parallel.

use crate::error::ToolError;
use crate::path::resolve;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::WalkState;
use octo_agent::{
    async_trait, parse_input, Access, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta,
    ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Default number of output lines (or files) returned.
pub const DEFAULT_LIMIT: usize = 200;
/// Lines longer than this are cut in content output.
const MAX_LINE: usize = 500;

/// What `grep` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines with their numbers (and context).
    Content,
    /// Only the paths of matching files.
    #[default]
    FilesWithMatches,
    /// Matches per file.
    Count,
}

/// A search request.
#[derive(Debug, Clone, Deserialize)]
pub struct GrepRequest {
    /// The regular expression (Rust regex syntax), or a literal with `fixed_strings`.
    pub pattern: String,
    /// File or directory to search (default: the workspace).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob (`*.rs`, `src/**/*.ts`).
    #[serde(default)]
    pub glob: Option<String>,
    /// Skip files matching this glob.
    #[serde(default)]
    pub exclude: Option<String>,
    /// Output mode.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Ignore case.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Treat the pattern as a literal string.
    #[serde(default)]
    pub fixed_strings: bool,
    /// Let `.` match newlines and patterns span lines.
    #[serde(default)]
    pub multiline: bool,
    /// Lines of context before and after each match (content mode).
    #[serde(default)]
    pub context: Option<usize>,
    /// Lines of context before each match.
    #[serde(default)]
    pub before: Option<usize>,
    /// Lines of context after each match.
    #[serde(default)]
    pub after: Option<usize>,
    /// Most output lines (content) or files returned.
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug)]
struct FileHits {
    path: PathBuf,
    count: u64,
    lines: Vec<String>,
}

struct Collect<'a> {
    mode: OutputMode,
    count: u64,
    lines: Vec<String>,
    max_lines: usize,
    shown_path: &'a str,
}

fn clip(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.chars().count() > MAX_LINE {
        let kept: String = text.chars().take(MAX_LINE).collect();
        format!("{kept}… [line cut]")
    } else {
        text.to_owned()
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.count += 1;
        if self.mode == OutputMode::FilesWithMatches {
            return Ok(false); // one match is enough
        }
        if self.mode == OutputMode::Content && self.lines.len() < self.max_lines {
            let n = m.line_number().unwrap_or(0);
            self.lines.push(format!("{}:{n}:{}", self.shown_path, clip(m.bytes())));
        }
        Ok(true)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        if self.lines.len() < self.max_lines {
            let n = c.line_number().unwrap_or(0);
            self.lines.push(format!("{}-{n}-{}", self.shown_path, clip(c.bytes())));
        }
        Ok(true)
    }

    fn context_break(&mut self, _s: &Searcher) -> Result<bool, std::io::Error> {
        if self.lines.len() < self.max_lines {
            self.lines.push("--".into());
        }
        Ok(true)
    }
}

/// Runs a search under `workspace`. Returns the rendered result, or an error for the model.
pub fn search(workspace: &Path, req: &GrepRequest) -> Result<String, ToolError> {
    search_skipping(workspace, req, None)
}

/// [`search`], never looking inside `secrets` (a `.env`, `~/.ssh`, …): a glob override would
/// otherwise reach files the permission engine refuses to read one by one.
pub fn search_skipping(
    workspace: &Path,
    req: &GrepRequest,
    secrets: Option<&crate::secrets::Secrets>,
) -> Result<String, ToolError> {
    let root = resolve(workspace, req.path.as_deref().unwrap_or("."));
    if !root.exists() {
        return Err(ToolError::NotFound(format!("{} does not exist", root.display())));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(req.case_insensitive)
        .fixed_strings(req.fixed_strings)
        .multi_line(req.multiline)
        .dot_matches_new_line(req.multiline)
        .build(&req.pattern)
        .map_err(|e| {
            ToolError::Invalid(format!(
                "invalid regular expression `{}`: {e}. Escape special characters or set fixed_strings.",
                req.pattern
            ))
        })?;
    let limit = req.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let (before, after) = if req.output_mode == OutputMode::Content {
        (req.before.or(req.context).unwrap_or(0), req.after.or(req.context).unwrap_or(0))
    } else {
        (0, 0)
    };
    let mut walk = ignore::WalkBuilder::new(&root);
    walk.require_git(false);
    if req.glob.is_some() || req.exclude.is_some() {
        let mut ov = OverrideBuilder::new(&root);
        if let Some(g) = &req.glob {
            ov.add(g).map_err(|e| ToolError::Invalid(format!("invalid glob `{g}`: {e}")))?;
        }
        if let Some(x) = &req.exclude {
            ov.add(&format!("!{x}"))
                .map_err(|e| ToolError::Invalid(format!("invalid exclude glob `{x}`: {e}")))?;
        }
        walk.overrides(ov.build().map_err(|e| ToolError::Invalid(format!("invalid glob: {e}")))?);
    }
    if let Some(secrets) = secrets.cloned() {
        walk.filter_entry(move |e| {
            secrets.check(e.path()).is_none()
                && (!e.path_is_symlink() || secrets.check(&crate::path::real_path(e.path())).is_none())
        });
    }
    let hits: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let lines_budget = AtomicUsize::new(0);
    let base = if root.is_dir() { root } else { root.parent().map(Path::to_path_buf).unwrap_or_default() };
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .before_context(before)
            .after_context(after)
            .multi_line(req.multiline)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build();
        let hits = &hits;
        let base = &base;
        let lines_budget = &lines_budget;
        let mode = req.output_mode;
        Box::new(move |entry| {
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let rel = entry.path().strip_prefix(base).unwrap_or(entry.path());
            let shown = if rel.as_os_str().is_empty() { entry.path() } else { rel };
            let shown = shown.display().to_string();
            let room = limit.saturating_sub(lines_budget.load(Ordering::Relaxed));
            let mut sink = Collect { mode, count: 0, lines: Vec::new(), max_lines: room, shown_path: &shown };
            if searcher.search_path(&matcher, entry.path(), &mut sink).is_err() || sink.count == 0 {
                return WalkState::Continue;
            }
            lines_budget.fetch_add(sink.lines.len(), Ordering::Relaxed);
            let hit = FileHits { path: rel.to_path_buf(), count: sink.count, lines: sink.lines };
            hits.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(hit);
            WalkState::Continue
        })
    });
    let mut hits = hits.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(render(&hits, req, limit))
}

fn render(hits: &[FileHits], req: &GrepRequest, limit: usize) -> String {
    if hits.is_empty() {
        return format!("no matches for `{}`", req.pattern);
    }
    let total_matches: u64 = hits.iter().map(|h| h.count).sum();
    let mut out = String::new();
    match req.output_mode {
        OutputMode::FilesWithMatches => {
            for h in hits.iter().take(limit) {
                out.push_str(&format!("{}\n", h.path.display()));
            }
            if hits.len() > limit {
                out.push_str(&format!(
                    "[... {} more files match; narrow the search or raise `limit`]\n",
                    hits.len() - limit
                ));
            }
        }
        OutputMode::Count => {
            for h in hits.iter().take(limit) {
                out.push_str(&format!("{}:{}\n", h.path.display(), h.count));
            }
            if hits.len() > limit {
                out.push_str(&format!("[... {} more files]\n", hits.len() - limit));
            }
            out.push_str(&format!("[{total_matches} matching lines in {} files]\n", hits.len()));
        }
        OutputMode::Content => {
            let mut shown = 0usize;
            for h in hits {
                for l in &h.lines {
                    if shown >= limit {
                        break;
                    }
                    out.push_str(l);
                    out.push('\n');
                    shown += 1;
                }
            }
            let all_lines: usize = hits.iter().map(|h| h.lines.len()).sum();
            if shown < all_lines || (total_matches as usize) > shown {
                out.push_str(&format!(
                    "[output limited to {limit} lines; {total_matches} matching lines in {} files in total. Narrow the \
                     search with `path`/`glob`, or raise `limit`]\n",
                    hits.len()
                ));
            }
        }
    }
    out
}

/// The `grep` tool.
#[derive(Debug, Clone, Default)]
pub struct Grep {
    secrets: Option<crate::secrets::Secrets>,
}

impl Grep {
    /// A grep that never searches inside `secrets`.
    pub fn new(secrets: crate::secrets::Secrets) -> Self {
        Self { secrets: Some(secrets) }
    }
}

#[async_trait]
impl ToolExecutor for Grep {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "grep",
            format!(
                "Search contents by regex (ripgrep syntax); skips hidden, ignored, binary and secret files. \
                 `output_mode`: files_with_matches (default), content (`path:line:text`, with context/before/after \
                 lines) or count. At most `limit` results ({DEFAULT_LIMIT})."
            ),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string"},
                    "glob": {"type": "string", "description": "Only these files (a glob)."},
                    "exclude": {"type": "string"},
                    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
                    "case_insensitive": {"type": "boolean"},
                    "fixed_strings": {"type": "boolean", "description": "Pattern is plain text."},
                    "multiline": {"type": "boolean"},
                    "context": {"type": "integer", "minimum": 0, "description": "Lines around matches."},
                    "before": {"type": "integer", "minimum": 0},
                    "after": {"type": "integer", "minimum": 0},
                    "limit": {"type": "integer", "minimum": 1}
                },
                "required": ["pattern"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().subject(Subject::path("path", Access::Read)).aliases(&["Grep"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let req: GrepRequest = match parse_input("grep", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let ws = ctx.cwd().to_path_buf();
        let secrets = self.secrets.clone();
        match tokio::task::spawn_blocking(move || search_skipping(&ws, &req, secrets.as_ref())).await {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(e)) => e.into_output(),
            Err(e) => ToolOutput::error(format!("grep failed: {e}")),
        }
    }
}
