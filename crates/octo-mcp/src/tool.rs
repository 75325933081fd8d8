//! A server's tools as octo tools, the resource tools, and the tool source that offers them.
//! A result's text, images, embedded resources and structured content all reach the model; a
//! huge result is cut here (the agent caps text again); a call runs within the server's call
//! timeout and stops when the turn is cancelled (the SDK then tells the server the call was
//! cancelled).

use crate::hub::{McpHub, Server, State};
use octo_agent::{
    async_trait, ImageSource, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutcome,
    ToolOutput, ToolResultPart, ToolSource,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ReadResourceRequestParams, ResourceContents,
};
use serde_json::{json, Value};
use std::sync::Arc;

/// Most text kept from one result (the agent cuts further to its own cap).
const MAX_TEXT: usize = 1024 * 1024;
/// Images larger than this (base64) are described instead of attached.
const MAX_IMAGE: usize = 5 * 1024 * 1024;

/// One tool of one server.
pub struct McpTool {
    hub: Arc<McpHub>,
    server: Arc<Server>,
    /// Its name on the server.
    remote: String,
    definition: ToolDefinition,
    meta: ToolMeta,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("name", &self.definition.name).finish()
    }
}

/// The parts of a call's result, as the model sees them.
pub(crate) fn convert(result: CallToolResult) -> ToolOutput {
    let mut parts: Vec<ToolResultPart> = Vec::new();
    let mut text_len = 0;
    let mut push_text = |parts: &mut Vec<ToolResultPart>, t: String| {
        let room = MAX_TEXT.saturating_sub(text_len);
        if room == 0 {
            return;
        }
        let t = if t.len() > room {
            let mut cut = room;
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}\n[... the rest of this result ({} bytes) was cut]", &t[..cut], t.len() - cut)
        } else {
            t
        };
        text_len += t.len();
        parts.push(ToolResultPart::Text { text: t });
    };
    for block in result.content {
        match block {
            ContentBlock::Text(t) => push_text(&mut parts, t.text),
            ContentBlock::Image(i) if i.data.len() <= MAX_IMAGE => parts.push(ToolResultPart::Image {
                source: ImageSource { media_type: i.mime_type, data: i.data },
            }),
            ContentBlock::Image(i) => push_text(
                &mut parts,
                format!("[an image ({}) of {} bytes, too large to show]", i.mime_type, i.data.len() * 3 / 4),
            ),
            ContentBlock::Audio(a) => push_text(&mut parts, format!("[audio ({}), not shown]", a.mime_type)),
            ContentBlock::Resource(r) => match r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    push_text(&mut parts, format!("<resource uri=\"{uri}\">\n{text}\n</resource>"));
                }
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => push_text(
                    &mut parts,
                    format!(
                        "[resource {uri}: {} bytes of {}]",
                        blob.len() * 3 / 4,
                        mime_type.unwrap_or_else(|| "binary data".into())
                    ),
                ),
                _ => push_text(&mut parts, "[a resource of a kind octo does not show]".into()),
            },
            ContentBlock::ResourceLink(l) => {
                push_text(&mut parts, format!("[resource {} ({})]", l.uri, l.name));
            }
            _ => push_text(&mut parts, "[content of a kind octo does not show]".into()),
        }
    }
    // Structured content speaks for itself when the server sent nothing else to read.
    if let Some(sc) = result.structured_content {
        if !parts.iter().any(|p| matches!(p, ToolResultPart::Text { .. })) {
            push_text(&mut parts, sc.to_string());
        }
    }
    if parts.is_empty() {
        parts.push(ToolResultPart::Text { text: "(no content)".into() });
    }
    let is_error = result.is_error.unwrap_or(false);
    ToolOutput { content: parts, is_error, outcome: is_error.then_some(ToolOutcome::Failed) }
}

#[async_trait]
impl ToolExecutor for McpTool {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn meta(&self) -> ToolMeta {
        self.meta.clone()
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let name = &self.server.config.name;
        let conn = match self.hub.connection(&self.server).await {
            Ok(c) => c,
            Err(why) => return ToolOutput::error(format!("the MCP server `{name}` is not available: {why}")),
        };
        let args = match input {
            Value::Object(m) => m,
            Value::Null => serde_json::Map::new(),
            other => return ToolOutput::error(format!("the arguments must be an object, not {other}")),
        };
        let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(args);
        // While it runs, the server's questions (elicitation) go to this call's front end.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _asking = self.server.signals.asking.askers.during(id, ctx);
        let timeout = self.server.config.spec.call_timeout();
        let call = tokio::time::timeout(timeout, conn.service.call_tool(params));
        tokio::select! {
            // Dropping the call tells the server it was cancelled.
            () = ctx.cancel().cancelled() => ToolOutput::refused("interrupted by the user; the MCP server was told to stop", ToolOutcome::Interrupted),
            r = call => match r {
                Ok(Ok(result)) => convert(result),
                Ok(Err(e)) => {
                    if let (Some(c), Some(store), Ok(crate::config::Transport::Http { url, .. })) =
                        (crate::explain::scope_challenge(&e), self.hub.secrets(), &self.server.transport)
                    {
                        // The next login asks for the larger scope.
                        let _ = store.set(&crate::oauth::challenge_entry(name, url), &c);
                    }
                    let e = crate::explain::call_failure(name, &e);
                    let closed = conn.service.is_closed() || conn.service.peer().is_transport_closed();
                    if closed {
                        self.server_exited();
                        ToolOutput::error(format!("the MCP server `{name}` stopped during the call ({e}){}; it is started again on the next call", self.server.stderr.describe()))
                    } else {
                        ToolOutput::error(format!("the MCP server `{name}` answered with an error: {e}"))
                    }
                }
                Err(_) => ToolOutput::error(format!("the MCP server `{name}` did not answer within {}s", timeout.as_secs())),
            }
        }
    }
}

impl McpTool {
    fn server_exited(&self) {
        *self.server.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            State::Exited(format!("it exited{}", self.server.stderr.describe()));
    }
}

/// `mcp_list_resources` and `mcp_read_resource`: what the servers offer to read.
struct Resources {
    hub: Arc<McpHub>,
    read: bool,
}

#[async_trait]
impl ToolExecutor for Resources {
    fn definition(&self) -> ToolDefinition {
        if self.read {
            ToolDefinition::new(
                "mcp_read_resource",
                "Read an MCP server's resource by its URI.",
                json!({"type": "object", "properties": {
                    "server": {"type": "string"},
                    "uri": {"type": "string"}
                }, "required": ["server", "uri"]}),
            )
        } else {
            ToolDefinition::new(
                "mcp_list_resources",
                "The resources MCP servers offer (files, records, documents), with their URIs.",
                json!({"type": "object", "properties": {
                    "server": {"type": "string", "description": "Only this one's."}
                }}),
            )
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }

    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        let only = input.get("server").and_then(Value::as_str);
        let servers: Vec<Arc<Server>> = self
            .hub
            .servers
            .iter()
            .filter(|s| only.is_none_or(|o| o == s.config.name))
            .filter(|s| matches!(s.state(), State::Ready(ref c) if c.resources))
            .cloned()
            .collect();
        if servers.is_empty() {
            return ToolOutput::error(match only {
                Some(o) => format!("no running MCP server `{o}` offers resources"),
                None => "no running MCP server offers resources".into(),
            });
        }
        if self.read {
            let Some(uri) = input.get("uri").and_then(Value::as_str) else {
                return ToolOutput::error("`uri` is required");
            };
            let Some(server) = servers.first() else { return ToolOutput::error("no such server") };
            let conn = match self.hub.connection(server).await {
                Ok(c) => c,
                Err(why) => return ToolOutput::error(why),
            };
            return match conn.service.read_resource(ReadResourceRequestParams::new(uri)).await {
                Ok(r) => {
                    let blocks = r
                        .contents
                        .into_iter()
                        .map(|c| ContentBlock::Resource(rmcp::model::EmbeddedResource::new(c)))
                        .collect();
                    convert(CallToolResult::success(blocks))
                }
                Err(e) => ToolOutput::error(format!("reading {uri} failed: {e}")),
            };
        }
        let mut out = String::new();
        for s in servers {
            let Ok(conn) = self.hub.connection(&s).await else { continue };
            match conn.service.list_all_resources().await {
                Ok(list) => {
                    for r in list {
                        out.push_str(&format!("{}\t{}\t{}\n", s.config.name, r.uri, r.name));
                    }
                }
                Err(e) => out.push_str(&format!("{}: listing failed: {e}\n", s.config.name)),
            }
        }
        if out.is_empty() {
            out.push_str("(no resources)");
        }
        ToolOutput::text(out)
    }
}

/// The hub as a tool source: every ready server's tools, and the resource tools.
pub struct McpSource(pub Arc<McpHub>);

impl std::fmt::Debug for McpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("McpSource").finish()
    }
}

impl ToolSource for McpSource {
    fn id(&self) -> &str {
        "mcp"
    }

    fn tools(&self) -> Vec<Arc<dyn ToolExecutor>> {
        let hub = &self.0;
        let mut out: Vec<Arc<dyn ToolExecutor>> = Vec::new();
        let mut any_resources = false;
        for s in &hub.servers {
            // A server that exited keeps its tools: the next call starts it again.
            let tools = match s.state() {
                State::Ready(conn) => {
                    any_resources |= conn.resources;
                    conn.tools()
                }
                State::Exited(_) => {
                    s.known_tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
                }
                // Still starting, listed from the last session's list (its calls wait for it).
                State::Starting if s.cached.load(std::sync::atomic::Ordering::SeqCst) => {
                    any_resources |= s.cached_resources.load(std::sync::atomic::Ordering::SeqCst);
                    s.known_tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
                }
                _ => continue,
            };
            for t in tools {
                if !s.config.spec.offers(&t.name) {
                    continue;
                }
                let exposed = hub.exposed_name(&s.config.name, &t.name);
                let (schema, note) = crate::names::input_schema(&t.input_schema);
                let mut description = t.description.as_deref().unwrap_or("").to_owned();
                if let Some(n) = note {
                    description.push_str(&format!(" (octo mended its input schema: {n})"));
                }
                // The exposed name (`mcp__server__tool`) already says which server it is.
                let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false);
                let meta =
                    if read_only { ToolMeta::reads() } else { ToolMeta::writes() }.subject(Subject::None);
                out.push(Arc::new(McpTool {
                    hub: Arc::clone(hub),
                    server: Arc::clone(s),
                    remote: t.name.to_string(),
                    definition: ToolDefinition::new(exposed, description, schema),
                    meta,
                }));
            }
        }
        if any_resources {
            out.push(Arc::new(Resources { hub: Arc::clone(hub), read: false }));
            out.push(Arc::new(Resources { hub: Arc::clone(hub), read: true }));
        }
        out
    }

    fn generation(&self) -> u64 {
        self.0.generation()
    }

    fn ready(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(self.0.wait_listable(std::time::Duration::from_secs(60)))
    }
}
