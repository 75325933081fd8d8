//! `read_file`: a text file with line numbers, in pages; images as images; binaries described.

use crate::path::resolve;
use crate::sniff::{binary_kind, human_size, image_type, looks_binary};
use base64::Engine;
use octo_agent::{
    async_trait, parse_input, Access, ImageSource, Subject, ToolContext, ToolDefinition, ToolExecutor,
    ToolMeta, ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};

/// Lines longer than this are cut, so one minified line cannot flood the context.
const MAX_LINE_CHARS: usize = 2_000;

/// Reads files for the model.
#[derive(Debug, Clone)]
pub struct ReadFile {
    default_lines: usize,
    buffers: Option<std::sync::Arc<dyn crate::config::Buffers>>,
}

impl ReadFile {
    /// `default_lines` is the page size when the model gives no `limit`.
    pub fn new(default_lines: usize) -> Self {
        Self { default_lines: default_lines.max(1), buffers: None }
    }

    /// Reads through an editor's buffers first (what the user sees there, unsaved or not).
    #[must_use]
    pub fn with_buffers(mut self, buffers: Option<std::sync::Arc<dyn crate::config::Buffers>>) -> Self {
        self.buffers = buffers;
        self
    }
}

#[derive(Deserialize)]
struct Input {
    path: String,
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

#[async_trait]
impl ToolExecutor for ReadFile {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "read_file",
            format!(
                "Read a file as numbered lines (`N<tab>line`), {} at a time (page with `offset` and `limit`); lines \
                 over {MAX_LINE_CHARS} characters are cut. Images come back as images, other binaries described.",
                self.default_lines
            ),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line."},
                    "limit": {"type": "integer", "minimum": 1}
                },
                "required": ["path"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
            .subject(Subject::path("path", Access::Read))
            .aliases(&["Read", "NotebookRead"])
            .renamed_args(&[("path", "file_path")])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("read_file", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let path = resolve(ctx.cwd(), &input.path);
        let default_lines = self.default_lines;
        let shown = input.path.clone();
        if let Some(b) = &self.buffers {
            if let Some(text) = b.text(&path).await {
                let start = input.offset.unwrap_or(1).max(1);
                let want = input.limit.unwrap_or(default_lines).max(1);
                return page(std::io::Cursor::new(text.into_bytes()), &shown, start, want);
            }
        }
        let result = tokio::task::spawn_blocking(move || {
            read(&path, &shown, input.offset, input.limit, default_lines)
        })
        .await;
        result.unwrap_or_else(|e| ToolOutput::error(format!("reading failed: {e}")))
    }
}

fn read(
    path: &std::path::Path,
    shown: &str,
    offset: Option<usize>,
    limit: Option<usize>,
    default_lines: usize,
) -> ToolOutput {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolOutput::error(format!(
                "{shown} does not exist. Use `glob` or `list_dir` to find the right path."
            ))
        }
        Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
    };
    if meta.is_dir() {
        return ToolOutput::error(format!("{shown} is a directory; use `list_dir` to see what is in it."));
    }
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return ToolOutput::error(format!("cannot open {shown}: {e}")),
    };
    let mut head = vec![0u8; 8192];
    let n = read_fully(&mut file, &mut head);
    head.truncate(n);
    if let Some(media_type) = image_type(&head) {
        if meta.len() > crate::image::MAX_INPUT as u64 {
            return ToolOutput::error(format!(
                "{shown} is a {media_type} image of {}, too large to attach (limit {}).",
                human_size(meta.len()),
                human_size(crate::image::MAX_INPUT as u64)
            ));
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return ToolOutput::error(format!("cannot read {shown}: {e}")),
        };
        return match crate::image::prepare(&bytes) {
            Ok(img) => {
                let note = img.note.as_deref().map(|n| format!(", {n}")).unwrap_or_default();
                ToolOutput::text(format!("{shown}: {media_type} image, {}{note}", human_size(meta.len())))
                    .with_image(ImageSource {
                        media_type: img.media_type.into(),
                        data: base64::engine::general_purpose::STANDARD.encode(img.data),
                    })
            }
            Err(e) => ToolOutput::error(format!("{shown} cannot be attached: {e}")),
        };
    }
    if looks_binary(&head) {
        return ToolOutput::error(format!(
            "{shown} is a binary file ({}, {}); it cannot be shown as text. Use a command that understands \
             the format (for example `file`, `unzip -l`, `pdftotext`) through `terminal`.",
            binary_kind(&head),
            human_size(meta.len())
        ));
    }
    let start = offset.unwrap_or(1).max(1);
    let want = limit.unwrap_or(default_lines).max(1);
    let reader = BufReader::new(std::io::Cursor::new(head).chain(file));
    page(reader, shown, start, want)
}

fn read_fully(file: &mut std::fs::File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

fn page(mut reader: impl BufRead, shown: &str, start: usize, want: usize) -> ToolOutput {
    let mut out = String::new();
    let mut line = Vec::new();
    let (mut total, mut crlf, mut lossy, mut cut_lines) = (0usize, false, false, 0usize);
    let end = start.saturating_add(want);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return ToolOutput::error(format!("reading {shown} failed after line {total}: {e}")),
        }
        total += 1;
        if total < start || total >= end {
            continue;
        }
        if line.ends_with(b"\n") {
            line.pop();
        }
        if line.ends_with(b"\r") {
            line.pop();
            crlf = true;
        }
        let text = match std::str::from_utf8(&line) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                lossy = true;
                String::from_utf8_lossy(&line)
            }
        };
        let text: std::borrow::Cow<'_, str> = if text.chars().count() > MAX_LINE_CHARS {
            cut_lines += 1;
            let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
            format!("{kept}… [line cut]").into()
        } else {
            text
        };
        out.push_str(&format!("{total:>6}\t{text}\n"));
    }
    if total == 0 {
        return ToolOutput::text(format!("{shown} is empty."));
    }
    if start > total {
        return ToolOutput::error(format!("{shown} has {total} lines; offset {start} is past the end."));
    }
    let last = (end - 1).min(total);
    let mut notes = Vec::new();
    if last < total {
        notes.push(format!(
            "showing lines {start}-{last} of {total}; call read_file with offset={} to read more",
            last + 1
        ));
    }
    if crlf {
        notes.push("the file uses CRLF line endings (shown without the CR)".to_owned());
    }
    if lossy {
        notes.push("the file is not valid UTF-8; invalid bytes are shown as �".to_owned());
    }
    if cut_lines > 0 {
        notes.push(format!("{cut_lines} long line(s) were cut at {MAX_LINE_CHARS} characters"));
    }
    for n in notes {
        out.push_str(&format!("[{n}]\n"));
    }
    ToolOutput::text(out)
}
