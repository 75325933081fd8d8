//! The `lsp` tool: what the language servers know, asked by a file, a line and a symbol's name.
//! Read-only; a rename is previewed, never applied.

use crate::locate::{location, position};
use crate::manager::Lsp;
use octo_agent::{
    async_trait, parse_input, Access, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta,
    ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Locations listed at most.
const MAX_LOCATIONS: usize = 100;

/// The longest hover text returned.
const MAX_HOVER: usize = 4_000;

/// The `lsp` tool over a session's servers.
#[derive(Debug, Clone)]
pub struct LspTool(pub Arc<Lsp>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    operation: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    symbol: Option<String>,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    new_name: Option<String>,
}

#[async_trait]
impl ToolExecutor for LspTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "lsp",
            "Ask the language server: `definition`, `references`, `hover` or `rename_preview` (with \
             `new_name`; shows the edits, applies nothing) of `symbol` on `line` (from 1) of `path`; \
             `document_symbols` of `path`; `workspace_symbols` matching `query`; `diagnostics` of `path` \
             (or of every open file).",
            json!({
                "type": "object",
                "properties": {
                    "operation": {"type": "string", "enum": ["definition", "references", "hover", "document_symbols", "workspace_symbols", "diagnostics", "rename_preview"]},
                    "path": {"type": "string"},
                    "line": {"type": "integer", "minimum": 1},
                    "symbol": {"type": "string"},
                    "query": {"type": "string"},
                    "new_name": {"type": "string"}
                },
                "required": ["operation"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().subject(Subject::path("path", Access::Read))
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("lsp", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        match self.run(&input).await {
            Ok(text) => ToolOutput::text(text),
            Err(e) => ToolOutput::error(e),
        }
    }
}

impl LspTool {
    async fn run(&self, input: &Input) -> Result<String, String> {
        let lsp = &self.0;
        if input.operation == "workspace_symbols" && input.path.is_none() {
            return Err("give `path`: a file of the language whose symbols to search".into());
        }
        if input.operation == "diagnostics" && input.path.is_none() {
            return Ok(crate::report::all_diagnostics(lsp));
        }
        let path = input.path.as_deref().ok_or("give `path`")?;
        let file =
            lsp.inside(Path::new(path)).ok_or_else(|| format!("{path} is not a file in the workspace"))?;
        if std::fs::metadata(&file).map_err(|e| e.to_string())?.len() > lsp.settings.max_file {
            return Err(format!("{path} is too large to send to a language server"));
        }
        let deadline = Instant::now() + lsp.settings.request_timeout;
        let (name, server) = lsp.server(&file, deadline).await?;
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let (uri, _) = server.sync(&file, &text).await.map_err(|e| e.to_string())?;
        let timeout = lsp.settings.request_timeout;
        let doc = json!({"uri": uri});
        let at = |symbol_needed: bool| -> Result<Value, String> {
            let line = input.line.ok_or("give `line` (counted from 1)")?;
            if symbol_needed && input.symbol.is_none() {
                return Err("give `symbol`: the name on that line".into());
            }
            let (l, c) = position(&text, line, input.symbol.as_deref(), server.utf8)?;
            Ok(json!({"textDocument": doc, "position": {"line": l, "character": c}}))
        };
        let ask = |method: &'static str, params: Value| {
            let server = Arc::clone(&server);
            async move { server.request(method, params, timeout).await.map_err(|e| format!("`{name}`: {e}")) }
        };
        let ws = lsp.workspace();
        match input.operation.as_str() {
            "definition" => Ok(locations(
                &ask("textDocument/definition", at(true)?).await?,
                ws,
                server.utf8,
                "definition",
            )),
            "references" => {
                let mut params = at(true)?;
                params["context"] = json!({"includeDeclaration": true});
                Ok(locations(&ask("textDocument/references", params).await?, ws, server.utf8, "reference"))
            }
            "hover" => Ok(hover(&ask("textDocument/hover", at(false)?).await?)),
            "document_symbols" => {
                let answer = ask("textDocument/documentSymbol", json!({"textDocument": doc})).await?;
                Ok(crate::report::symbols(&answer, ws, server.utf8))
            }
            "workspace_symbols" => {
                let query = input.query.clone().unwrap_or_default();
                let answer = ask("workspace/symbol", json!({"query": query})).await?;
                Ok(crate::report::symbols(&answer, ws, server.utf8))
            }
            "diagnostics" => Ok(crate::report::file_diagnostics(lsp, &server, &uri, &file).await),
            "rename_preview" => {
                let new_name = input.new_name.as_deref().ok_or("give `new_name`")?;
                let mut params = at(true)?;
                params["newName"] = json!(new_name);
                let answer = ask("textDocument/rename", params).await?;
                Ok(crate::report::rename(&answer, ws, server.utf8, new_name))
            }
            other => Err(format!("`{other}` is not an operation of the lsp tool")),
        }
    }
}

/// Locations (one, a list, or links) as lines.
fn locations(answer: &Value, workspace: &Path, utf8: bool, what: &str) -> String {
    let list: Vec<&Value> = match answer {
        Value::Array(a) => a.iter().collect(),
        Value::Null => Vec::new(),
        one => vec![one],
    };
    if list.is_empty() {
        return format!("No {what} found.");
    }
    let mut out = String::new();
    for v in list.iter().take(MAX_LOCATIONS) {
        if let Some(l) = location(v, workspace, utf8) {
            let _ = writeln!(out, "{l}");
        }
    }
    if list.len() > MAX_LOCATIONS {
        let _ = writeln!(out, "… and {} more", list.len() - MAX_LOCATIONS);
    }
    out
}

/// A hover's text (markup, a string, or marked strings).
fn hover(answer: &Value) -> String {
    let contents = answer.get("contents").unwrap_or(&Value::Null);
    let text = match contents {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| {
                p.as_str()
                    .map(str::to_owned)
                    .or_else(|| p.get("value").and_then(Value::as_str).map(str::to_owned))
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        other => other.get("value").and_then(Value::as_str).unwrap_or_default().to_owned(),
    };
    if text.trim().is_empty() {
        return "Nothing is known about it.".into();
    }
    let mut text: String = text.chars().take(MAX_HOVER).collect();
    if text.len() < contents.to_string().len() && text.chars().count() == MAX_HOVER {
        text.push('…');
    }
    text
}
