//! Between ACP's content and octo's: a prompt's blocks become the user message (or a `/command`
//! line), and a tool call becomes what an editor can show — its kind from the tool's metadata,
//! the files it touches as locations, an edit as a diff.

use agent_client_protocol::v1::schema::{
    ContentBlock as AcpBlock, Diff, EmbeddedResourceResource, ToolCallContent, ToolCallLocation, ToolKind,
};
use octo_app::{Access, ContentBlock, ImageSource, Message, OutputKind, Role, Subject, ToolMeta};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a prompt asks for.
pub(super) enum Input {
    /// A line starting with `/`: a shared command, a skill or a custom command.
    Line(String),
    /// A message for the model.
    Message(Message),
}

/// A prompt's blocks as octo's input: text, images, linked and embedded files.
pub(super) fn prompt(blocks: &[AcpBlock]) -> Input {
    let mut content = Vec::new();
    for b in blocks {
        match b {
            AcpBlock::Text(t) => content.push(ContentBlock::text(t.text.clone())),
            AcpBlock::Image(i) => content.push(ContentBlock::Image {
                source: ImageSource { media_type: i.mime_type.clone(), data: i.data.clone() },
            }),
            AcpBlock::ResourceLink(l) => {
                content.push(ContentBlock::text(format!(
                    "[attached: {}]",
                    file_path(&l.uri).unwrap_or_else(|| l.uri.clone())
                )));
            }
            AcpBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    let name = file_path(&t.uri).unwrap_or_else(|| t.uri.clone());
                    content.push(ContentBlock::text(format!("<file path=\"{name}\">\n{}\n</file>", t.text)));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    content.push(ContentBlock::text(format!("[attached binary: {}]", b.uri)));
                }
                _ => {}
            },
            _ => {}
        }
    }
    if let [ContentBlock::Text { text }] = content.as_slice() {
        if text.trim_start().starts_with('/') && !text.trim_start().starts_with("//") {
            return Input::Line(text.trim().to_owned());
        }
    }
    Input::Message(Message::new(Role::User, content))
}

/// The path of a `file://` URI.
fn file_path(uri: &str) -> Option<String> {
    uri.strip_prefix("file://").map(|p| p.replace("%20", " "))
}

/// The kind of a call, from how its tool describes itself.
pub(super) fn kind(meta: Option<&ToolMeta>) -> ToolKind {
    let Some(m) = meta else { return ToolKind::Other };
    if m.output == OutputKind::Todos {
        return ToolKind::Think;
    }
    match &m.subject {
        Subject::Command { .. } => ToolKind::Execute,
        Subject::Url { .. } => ToolKind::Fetch,
        Subject::Path { access: Access::Write, .. } => ToolKind::Edit,
        Subject::Path { access: Access::Read, .. } => ToolKind::Read,
        _ => ToolKind::Other,
    }
}

/// Where a call touches the workspace and, for an edit, the change as a diff.
pub(super) fn call_view(
    tool: &str,
    input: &Value,
    workspace: &Path,
) -> (Vec<ToolCallLocation>, Vec<ToolCallContent>) {
    let Some((name, claude)) = octo_app::claude_tool_call(tool, input) else {
        return (Vec::new(), Vec::new());
    };
    let path = claude
        .get("file_path")
        .or_else(|| claude.get("path"))
        .and_then(Value::as_str)
        .map(|p| absolute(workspace, p));
    let Some(path) = path else { return (Vec::new(), Vec::new()) };
    let line = claude.get("offset").and_then(Value::as_u64).and_then(|l| u32::try_from(l).ok());
    let location = match line {
        Some(l) => ToolCallLocation::new(path.clone()).line(l),
        None => ToolCallLocation::new(path.clone()),
    };
    let text = |k: &str| claude.get(k).and_then(Value::as_str).map(str::to_owned);
    let diffs = match name.as_str() {
        "Edit" => match (text("old_string"), text("new_string")) {
            (Some(old), Some(new)) => vec![Diff::new(path, new).old_text(old)],
            _ => Vec::new(),
        },
        "MultiEdit" => claude
            .get("edits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let old = e.get("old_string")?.as_str()?.to_owned();
                let new = e.get("new_string")?.as_str()?.to_owned();
                Some(Diff::new(path.clone(), new).old_text(old))
            })
            .collect(),
        "Write" => match text("content") {
            Some(new) => vec![Diff::new(path.clone(), new).old_text(std::fs::read_to_string(&path).ok())],
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    (vec![location], diffs.into_iter().map(ToolCallContent::from).collect())
}

fn absolute(workspace: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    }
}

/// A tool's output as the editor shows it, cut to a readable size.
pub(super) fn output(text: &str) -> ToolCallContent {
    const MAX: usize = 20_000;
    let shown = if text.len() > MAX {
        let cut = (0..=MAX).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        format!("{}\n… ({} more bytes)", &text[..cut], text.len() - cut)
    } else {
        text.to_owned()
    };
    ToolCallContent::from(shown)
}
