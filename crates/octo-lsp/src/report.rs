//! The `lsp` tool's answers as text: symbols, diagnostics, a rename's edits.

use crate::format::line;
use crate::manager::Lsp;
use crate::server::{uri_path, Server};
use lsp_types::Diagnostic;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// Symbols listed at most.
const MAX_SYMBOLS: usize = 200;

/// The protocol's symbol kinds, by number.
fn kind(n: u64) -> &'static str {
    const KINDS: [&str; 26] = [
        "symbol",
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
    ];
    KINDS.get(usize::try_from(n).unwrap_or(0)).copied().unwrap_or("symbol")
}

/// Document symbols (a tree) or symbol information (a flat list, with locations) as an outline.
pub(crate) fn symbols(answer: &Value, workspace: &Path, utf8: bool) -> String {
    let Some(list) = answer.as_array().filter(|l| !l.is_empty()) else {
        return "No symbols found.".into();
    };
    let mut out = String::new();
    let mut count = 0;
    for s in list {
        outline(s, 0, workspace, utf8, &mut out, &mut count);
    }
    if count > MAX_SYMBOLS {
        let _ = writeln!(out, "… and {} more", count - MAX_SYMBOLS);
    }
    out
}

fn outline(s: &Value, depth: usize, workspace: &Path, utf8: bool, out: &mut String, count: &mut usize) {
    *count += 1;
    if *count > MAX_SYMBOLS {
        return;
    }
    let name = s.get("name").and_then(Value::as_str).unwrap_or("?");
    let k = kind(s.get("kind").and_then(Value::as_u64).unwrap_or(0));
    let indent = "  ".repeat(depth);
    let at = match s.get("location") {
        Some(loc) => crate::locate::location(loc, workspace, utf8)
            .map(|l| l.split("  ").next().unwrap_or_default().to_owned())
            .unwrap_or_default(),
        None => s
            .pointer("/selectionRange/start/line")
            .or_else(|| s.pointer("/range/start/line"))
            .and_then(Value::as_u64)
            .map(|l| format!("line {}", l + 1))
            .unwrap_or_default(),
    };
    let _ = writeln!(out, "{indent}{k} {name}  {at}");
    for child in s.get("children").and_then(Value::as_array).into_iter().flatten() {
        outline(child, depth + 1, workspace, utf8, out, count);
    }
}

/// Every problem the running servers know of.
pub(crate) fn all_diagnostics(lsp: &Lsp) -> String {
    let mut out = String::new();
    for (name, server) in lsp.running() {
        for (uri, items) in server.diagnostics.all() {
            let Some(path) = uri_path(&uri) else { continue };
            let rel = path.strip_prefix(lsp.workspace()).unwrap_or(&path).to_path_buf();
            let _ = writeln!(out, "{name}:");
            for d in &items {
                let _ = writeln!(out, "  {}", line(&rel, d));
            }
        }
    }
    if out.is_empty() {
        "No problems reported by the running language servers.".into()
    } else {
        out
    }
}

/// The problems of one file: what the server published, after waiting a little for news.
pub(crate) async fn file_diagnostics(lsp: &Lsp, server: &Server, uri: &str, file: &Path) -> String {
    let wait = lsp.settings.wait;
    let _ = tokio::time::timeout(wait, async {
        loop {
            let changed = server.diagnostics.changed.notified();
            if server.diagnostics.get(uri).is_some() {
                return;
            }
            changed.await;
        }
    })
    .await;
    let rel = file.strip_prefix(lsp.workspace()).unwrap_or(file);
    let items: Vec<Diagnostic> = server.diagnostics.get(uri).map(|p| p.items).unwrap_or_default();
    if items.is_empty() {
        return format!("No problems reported for {}.", rel.display());
    }
    items.iter().map(|d| format!("{}\n", line(rel, d))).collect()
}

/// A rename's workspace edit as the lines it would change.
pub(crate) fn rename(answer: &Value, workspace: &Path, utf8: bool, new_name: &str) -> String {
    let mut edits: Vec<(String, &Value)> = Vec::new();
    if let Some(changes) = answer.get("changes").and_then(Value::as_object) {
        for (uri, list) in changes {
            for e in list.as_array().into_iter().flatten() {
                edits.push((uri.clone(), e));
            }
        }
    }
    for doc in answer.get("documentChanges").and_then(Value::as_array).into_iter().flatten() {
        let uri = doc.pointer("/textDocument/uri").and_then(Value::as_str).unwrap_or_default().to_owned();
        for e in doc.get("edits").and_then(Value::as_array).into_iter().flatten() {
            edits.push((uri.clone(), e));
        }
    }
    if edits.is_empty() {
        return "The server proposes no edits for this rename.".into();
    }
    let mut out =
        format!("Renaming to `{new_name}` would change {} places (nothing was changed):\n", edits.len());
    for (uri, e) in edits.iter().take(MAX_SYMBOLS) {
        let loc = serde_json::json!({"uri": uri, "range": e.get("range").cloned().unwrap_or(Value::Null)});
        if let Some(l) = crate::locate::location(&loc, workspace, utf8) {
            let _ = writeln!(out, "{l}");
        }
    }
    if edits.len() > MAX_SYMBOLS {
        let _ = writeln!(out, "… and {} more", edits.len() - MAX_SYMBOLS);
    }
    out
}
