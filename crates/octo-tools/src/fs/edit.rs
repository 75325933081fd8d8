//! `edit_file` and `multi_edit`: exact string replacement with helpful failures.

use super::sink::Sink;
use crate::atomic::unified_diff;
use crate::error::ToolError;
use crate::path::{check_writable, display_relative, resolve};
use octo_agent::{
    async_trait, parse_input, Access, OutputKind, Preview, Subject, ToolContext, ToolDefinition,
    ToolExecutor, ToolMeta, ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One replacement.
#[derive(Debug, Clone, Deserialize)]
pub struct Edit {
    /// The exact text to find.
    pub old_string: String,
    /// What replaces it.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

fn line_of(content: &str, byte: usize) -> usize {
    content[..byte].bytes().filter(|&b| b == b'\n').count() + 1
}

/// Applies one edit to `content`, or explains why it cannot.
pub fn apply_edit(content: &str, edit: &Edit) -> Result<String, ToolError> {
    if edit.old_string.is_empty() {
        return Err(ToolError::Invalid("old_string is empty: give the exact text to replace (use write_file to create or overwrite a whole file)".into()));
    }
    if edit.old_string == edit.new_string {
        return Err(ToolError::Invalid(
            "old_string and new_string are the same; there is nothing to change".into(),
        ));
    }
    // A file with CRLF endings still matches text the model wrote with LF.
    let crlf = content.contains("\r\n") && !edit.old_string.contains('\r');
    let (old, new) = if crlf {
        (edit.old_string.replace('\n', "\r\n"), edit.new_string.replace('\n', "\r\n"))
    } else {
        (edit.old_string.clone(), edit.new_string.clone())
    };
    let hits: Vec<usize> = content.match_indices(&old).map(|(i, _)| i).collect();
    match hits.len() {
        0 => Err(ToolError::Invalid(not_found(content, &edit.old_string))),
        1 => Ok(content.replacen(&old, &new, 1)),
        n if edit.replace_all => {
            let _ = n;
            Ok(content.replace(&old, &new))
        }
        n => {
            let lines: Vec<String> = hits.iter().take(20).map(|&i| line_of(content, i).to_string()).collect();
            Err(ToolError::Invalid(format!(
                "old_string appears {n} times (at lines {}); include more surrounding text to make it unique, \
                 or set replace_all to change every occurrence",
                lines.join(", ")
            )))
        }
    }
}

/// Explains a miss: a whitespace-only difference, or the closest similar passage.
fn not_found(content: &str, old: &str) -> String {
    let file_lines: Vec<&str> = content.lines().collect();
    let old_lines: Vec<&str> = old.lines().collect();
    let n = old_lines.len().max(1);
    if file_lines.len() >= n {
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let want: Vec<String> = old_lines.iter().map(|l| squash(l)).collect();
        for start in 0..=file_lines.len() - n {
            if file_lines[start..start + n].iter().map(|l| squash(l)).eq(want.iter().cloned()) {
                return format!(
                    "old_string was not found exactly, but lines {}-{} match it except for whitespace or \
                     indentation. Copy the exact text (read_file shows it) and try again.",
                    start + 1,
                    start + n
                );
            }
        }
        // The passage most like old_string, picked by its first line, then compared whole.
        let first = old_lines.first().map(|l| l.trim()).unwrap_or_default();
        let mut candidates: Vec<(f32, usize)> = (0..=file_lines.len() - n)
            .map(|i| (similar::TextDiff::from_chars(file_lines[i].trim(), first).ratio(), i))
            .collect();
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        let best = candidates
            .iter()
            .take(5)
            .map(|&(_, i)| {
                let window = file_lines[i..i + n].join("\n");
                (similar::TextDiff::from_chars(window.as_str(), old).ratio(), i, window)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((ratio, i, window)) = best.filter(|b| b.0 >= 0.5) {
            let shown: String = window.chars().take(1500).collect();
            return format!(
                "old_string was not found. The closest match ({:.0}% similar) is at lines {}-{}:\n{shown}\n\
                 Use the exact current text as old_string.",
                ratio * 100.0,
                i + 1,
                i + n
            );
        }
    }
    "old_string was not found in the file, and nothing similar is there. Read the file first and copy \
     the exact text to replace."
        .into()
}

/// Shared by both tools: applies `edits` in order to the file, all or nothing.
async fn edit_file(
    ctx: &ToolContext,
    tool: &str,
    raw: &Value,
    path_arg: &str,
    edits: &[Edit],
    sink: &Sink,
) -> ToolOutput {
    let path = resolve(ctx.cwd(), path_arg);
    if let Err(refusal) = check_writable(ctx, tool, raw, &path, &sink.writable_roots).await {
        return refusal.into_output();
    }
    let label = display_relative(&path, ctx.cwd());
    let result = match sink.current(&path).await {
        Ok(Some(bytes)) => match edited(bytes, &label, edits) {
            Ok((original, content)) => sink
                .store(
                    ctx.cwd(),
                    &path,
                    Some(original.clone().into_bytes()),
                    &content,
                    ctx.tool_use_id(),
                    &label,
                )
                .await
                .map(|()| format!("edited {label}\n{}", unified_diff(&label, &original, &content))),
            Err(e) => Err(e),
        },
        Ok(None) => Err(ToolError::NotFound(format!("{label} does not exist; use write_file to create it"))),
        Err(e) => Err(ToolError::Io(format!("cannot read {label}: {e}"))),
    };
    match result {
        Ok(text) => ToolOutput::text(text),
        Err(e) => e.into_output(),
    }
}

/// The file's text before and after `edits`.
fn edited(bytes: Vec<u8>, label: &str, edits: &[Edit]) -> Result<(String, String), ToolError> {
    let original = String::from_utf8(bytes).map_err(|_| {
        ToolError::Invalid(format!(
            "{label} is not valid UTF-8 text; edit_file only changes text files (use write_file or a command)"
        ))
    })?;
    let mut content = original.clone();
    for (i, edit) in edits.iter().enumerate() {
        content = apply_edit(&content, edit).map_err(|e| {
            if edits.len() > 1 {
                ToolError::Invalid(format!(
                    "edit #{} of {} failed, so no edit was applied: {e}",
                    i + 1,
                    edits.len()
                ))
            } else {
                e
            }
        })?;
    }
    Ok((original, content))
}

/// The diff `edits` would make to the file at `path_arg` (nothing is written); `None` when the
/// file cannot be read or an edit would not apply (running the call says why).
fn preview_edits(cwd: &Path, path_arg: &str, edits: &[Edit]) -> Option<Preview> {
    let path = resolve(cwd, path_arg);
    let original = std::fs::read_to_string(&path).ok()?;
    let mut content = original.clone();
    for edit in edits {
        content = apply_edit(&content, edit).ok()?;
    }
    Some(Preview::diff(unified_diff(&display_relative(&path, cwd), &original, &content)))
}

/// What both edit tools declare: a write at `path`, whose replaced and replacing text may be
/// shortened in old history, with a diff as output.
fn edit_meta() -> ToolMeta {
    ToolMeta::writes()
        .action("edit")
        .subject(Subject::path("path", Access::Write))
        .reclaimable(&["old_string", "new_string"])
        .output(OutputKind::Diff)
}

/// Replaces one exact string in a file.
#[derive(Debug, Clone, Default)]
pub struct EditFile {
    sink: Sink,
}

impl EditFile {
    /// `trash_dir` receives previous contents; `writable_roots` are extra writable directories.
    pub fn new(trash_dir: Option<PathBuf>, writable_roots: Vec<PathBuf>) -> Self {
        Self { sink: Sink::new(trash_dir, writable_roots) }
    }

    /// Reads and edits through an editor's buffers (see [`crate::Buffers`]).
    #[must_use]
    pub fn with_buffers(mut self, buffers: Option<std::sync::Arc<dyn crate::config::Buffers>>) -> Self {
        self.sink.editor = buffers;
        self
    }
}

#[derive(Deserialize)]
struct EditInput {
    path: String,
    #[serde(default)]
    old_string: Option<String>,
    #[serde(default)]
    new_string: Option<String>,
    #[serde(default)]
    replace_all: bool,
    /// Several replacements at once, in order, all or none (what `multi_edit` did on its own).
    #[serde(default)]
    edits: Vec<Edit>,
}

impl EditInput {
    /// The replacements asked for: the one given by `old_string`/`new_string`, or `edits`.
    fn edits(self) -> Result<(String, Vec<Edit>), ToolOutput> {
        match (self.old_string, self.new_string, self.edits.is_empty()) {
            (Some(old_string), Some(new_string), true) => {
                Ok((self.path, vec![Edit { old_string, new_string, replace_all: self.replace_all }]))
            }
            (None, None, false) => Ok((self.path, self.edits)),
            (Some(_), Some(_), false) => Err(ToolOutput::error(
                "give either `old_string` and `new_string` or `edits`, not both: put every change in `edits`",
            )),
            (Some(_), None, _) => {
                Err(ToolOutput::error("`new_string` is missing: give the replacement text"))
            }
            (None, Some(_), _) => {
                Err(ToolOutput::error("`old_string` is missing: give the exact text to replace"))
            }
            (None, None, true) => Err(ToolOutput::error(
                "nothing to change: give `old_string` and `new_string`, or several changes in `edits`",
            )),
        }
    }
}

#[async_trait]
impl ToolExecutor for EditFile {
    fn definition(&self) -> ToolDefinition {
        let change = json!({
            "type": "object",
            "properties": {
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}
            },
            "required": ["old_string", "new_string"]
        });
        ToolDefinition::new(
            "edit_file",
            "Replace exact text in a file you have read: `old_string` must match exactly (indentation too) \
             and once, unless `replace_all` (add lines around it to make it unique). Several changes: \
             `edits`, in order, all or none. Returns a diff, or the closest match.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean"},
                    "edits": {"type": "array", "items": change}
                },
                "required": ["path"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        edit_meta()
            .aliases(&["Edit", "MultiEdit", "NotebookEdit", "multi_edit"])
            .renamed_args(&[("path", "file_path")])
    }

    fn preview(&self, input: &Value, cwd: &Path) -> Option<Preview> {
        let i: EditInput = serde_json::from_value(input.clone()).ok()?;
        let (path, edits) = i.edits().ok()?;
        preview_edits(cwd, &path, &edits)
    }

    async fn execute(&self, raw: Value, ctx: &ToolContext) -> ToolOutput {
        let input: EditInput = match parse_input("edit_file", raw.clone()) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let (path, edits) = match input.edits() {
            Ok(e) => e,
            Err(e) => return e,
        };
        edit_file(ctx, "edit_file", &raw, &path, &edits, &self.sink).await
    }
}

/// Applies several replacements to one file, all or nothing. Not among the default tools (`edit_file`
/// takes several changes in its `edits`); kept for agents built from the parts.
#[derive(Debug, Clone, Default)]
pub struct MultiEdit {
    sink: Sink,
}

impl MultiEdit {
    /// `trash_dir` receives previous contents; `writable_roots` are extra writable directories.
    pub fn new(trash_dir: Option<PathBuf>, writable_roots: Vec<PathBuf>) -> Self {
        Self { sink: Sink::new(trash_dir, writable_roots) }
    }

    /// Reads and edits through an editor's buffers (see [`crate::Buffers`]).
    #[must_use]
    pub fn with_buffers(mut self, buffers: Option<std::sync::Arc<dyn crate::config::Buffers>>) -> Self {
        self.sink.editor = buffers;
        self
    }
}

#[derive(Deserialize)]
struct MultiInput {
    path: String,
    edits: Vec<Edit>,
}

#[async_trait]
impl ToolExecutor for MultiEdit {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "multi_edit",
            "Several `edit_file` replacements in one file, in order; each sees the ones before. All or none are \
             applied. Returns one diff.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "edits": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {
                                "old_string": {"type": "string"},
                                "new_string": {"type": "string"},
                                "replace_all": {"type": "boolean"}
                            },
                            "required": ["old_string", "new_string"]
                        }
                    }
                },
                "required": ["path", "edits"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        edit_meta().aliases(&["MultiEdit", "Edit", "NotebookEdit"]).renamed_args(&[("path", "file_path")])
    }

    fn preview(&self, input: &Value, cwd: &Path) -> Option<Preview> {
        let i: MultiInput = serde_json::from_value(input.clone()).ok()?;
        preview_edits(cwd, &i.path, &i.edits)
    }

    async fn execute(&self, raw: Value, ctx: &ToolContext) -> ToolOutput {
        let input: MultiInput = match parse_input("multi_edit", raw.clone()) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if input.edits.is_empty() {
            return ToolOutput::error("`edits` is empty; give at least one edit");
        }
        edit_file(ctx, "multi_edit", &raw, &input.path, &input.edits, &self.sink).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(old: &str, new: &str) -> Edit {
        Edit { old_string: old.into(), new_string: new.into(), replace_all: false }
    }

    #[test]
    fn unique_match_is_replaced() {
        assert_eq!(apply_edit("a\nb\nc\n", &e("b", "B")).unwrap(), "a\nB\nc\n");
    }

    #[test]
    fn several_matches_name_their_lines() {
        let err = apply_edit("x\ny\nx\n", &e("x", "z")).unwrap_err().to_string();
        assert!(err.contains("2 times") && err.contains("lines 1, 3"), "{err}");
        let all = apply_edit("x\ny\nx\n", &Edit { replace_all: true, ..e("x", "z") }).unwrap();
        assert_eq!(all, "z\ny\nz\n");
    }

    #[test]
    fn whitespace_differences_are_pointed_out() {
        let err = apply_edit("fn main() {\n    let x = 1;\n}\n", &e("fn main() {\n  let x = 1;", ""))
            .unwrap_err()
            .to_string();
        assert!(err.contains("lines 1-2") && err.contains("whitespace"), "{err}");
    }

    #[test]
    fn the_closest_match_is_shown() {
        let content = "fn alpha() {}\nfn compute_total(items: &[u32]) -> u32 {\n    items.iter().sum()\n}\n";
        let err =
            apply_edit(content, &e("fn compute_totals(items: &[u32]) -> u32 {\n    items.iter().sum()", ""))
                .unwrap_err()
                .to_string();
        assert!(err.contains("closest match") && err.contains("lines 2-3"), "{err}");
        let err = apply_edit(content, &e("completely unrelated text here", "")).unwrap_err().to_string();
        assert!(err.contains("nothing similar"), "{err}");
    }

    #[test]
    fn crlf_files_match_lf_text_and_stay_crlf() {
        let out = apply_edit("a\r\nb\r\nc\r\n", &e("a\nb", "A\nB")).unwrap();
        assert_eq!(out, "A\r\nB\r\nc\r\n");
    }

    #[test]
    fn empty_or_identical_strings_are_refused() {
        assert!(apply_edit("a", &e("", "b")).unwrap_err().to_string().contains("empty"));
        assert!(apply_edit("a", &e("a", "a")).unwrap_err().to_string().contains("same"));
    }
}
