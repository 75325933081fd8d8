//! `/export [file]`: the conversation as Markdown — what the user and the model said, with each
//! tool call and its result folded under a `<details>` block — written to a new file (never over
//! an existing one).

use octo_agent::{ContentBlock, Message, Role, ToolResultPart};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why the conversation was not exported.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ExportError {
    /// There is nothing to export yet.
    #[error("there is no conversation to export yet")]
    Empty,
    /// The file exists.
    #[error("{0} already exists; name another file: /export FILE")]
    Exists(PathBuf),
    /// Writing failed.
    #[error("could not write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The session ended.
    #[error(transparent)]
    Session(#[from] super::SessionError),
}

/// Longest tool output kept in the export, per call.
const MAX_RESULT: usize = 4_000;

/// `history` as Markdown, headed with `title`.
pub(crate) fn to_markdown(history: &[Message], title: &str) -> String {
    let mut out = format!("# {title}\n");
    let mut calls = std::collections::HashMap::new();
    for m in history {
        for b in &m.content {
            match b {
                ContentBlock::Text { text } if !text.trim().is_empty() => {
                    let who = if m.role == Role::User { "You" } else { "octo" };
                    out.push_str(&format!("\n## {who}\n\n{}\n", text.trim_end()));
                }
                ContentBlock::ToolUse { id, name, input } => {
                    calls.insert(id.clone(), (name.clone(), input.clone()));
                }
                ContentBlock::ToolResult { tool_use_id, content, is_error } => {
                    let (name, input) =
                        calls.remove(tool_use_id).unwrap_or_else(|| ("tool".into(), Default::default()));
                    out.push_str(&folded(&name, &input, content, *is_error));
                }
                ContentBlock::Image { .. } => out.push_str("\n_(an image)_\n"),
                _ => {}
            }
        }
    }
    out
}

fn folded(name: &str, input: &serde_json::Value, content: &[ToolResultPart], is_error: bool) -> String {
    let mut text: String = content
        .iter()
        .filter_map(|p| match p {
            ToolResultPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.len() > MAX_RESULT {
        let mut cut = MAX_RESULT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n… (cut)");
    }
    let failed = if is_error { " (failed)" } else { "" };
    let args = serde_json::to_string_pretty(input).unwrap_or_default();
    let fence = fence_for(&format!("{args}{text}"));
    format!(
        "\n<details><summary>{name}{failed}</summary>\n\n{fence}json\n{args}\n{fence}\n\n{fence}\n{}\n{fence}\n\n</details>\n",
        text.trim_end()
    )
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// Writes `markdown` to `path` (relative to `workspace`), refusing to replace a file.
pub(super) fn write(workspace: &Path, path: &Path, markdown: &str) -> Result<PathBuf, ExportError> {
    let full = if path.is_absolute() { path.to_path_buf() } else { workspace.join(path) };
    let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&full) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(ExportError::Exists(full)),
        Err(source) => return Err(ExportError::Io { path: full, source }),
    };
    std::io::Write::write_all(&mut file, markdown.as_bytes())
        .map_err(|source| ExportError::Io { path: full.clone(), source })?;
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_calls_are_folded_under_their_results() {
        let history = vec![
            Message::user("list the files"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Looking."),
                    ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "list_dir".into(),
                        input: json!({"path": "."}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::tool_result("t1", "a.rs\n```b```", false)],
            },
            Message::assistant("Two files."),
        ];
        let md = to_markdown(&history, "Files");
        assert!(md.starts_with("# Files\n\n## You\n\nlist the files\n\n## octo\n\nLooking.\n"), "{md}");
        assert!(md.contains("<details><summary>list_dir</summary>"), "{md}");
        assert!(md.contains("````\na.rs\n```b```\n````"), "a fence longer than the output's: {md}");
        assert!(md.trim_end().ends_with("## octo\n\nTwo files."), "{md}");
    }

    #[test]
    fn an_existing_file_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.md"), "mine").unwrap();
        assert!(matches!(write(dir.path(), Path::new("x.md"), "new"), Err(ExportError::Exists(_))));
        assert_eq!(std::fs::read_to_string(dir.path().join("x.md")).unwrap(), "mine");
        let p = write(dir.path(), Path::new("y.md"), "new").unwrap();
        assert_eq!(std::fs::read_to_string(p).unwrap(), "new");
    }
}
