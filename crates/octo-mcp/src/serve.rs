//! octo's tools over MCP (`octo mcp serve`): another agent or an IDE calls them through the same
//! permission gate octo uses. Nobody can be asked from here, so a call the gate would ask about
//! is refused with the reason; what is offered at all is chosen by the caller of [`OctoServer::new`].

use crate::error::ServeError;
use octo_agent::{
    PermissionDecision, PermissionGate, PermissionQuery, ToolContext, ToolRegistry, ToolResultPart,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use std::path::PathBuf;
use std::sync::Arc;

/// The MCP server side of octo.
#[derive(Clone)]
pub struct OctoServer {
    tools: Arc<ToolRegistry>,
    gate: Arc<dyn PermissionGate>,
    cwd: PathBuf,
}

impl std::fmt::Debug for OctoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OctoServer").field("tools", &self.tools.len()).finish()
    }
}

impl OctoServer {
    /// Serves `tools` (already chosen: read-only ones unless writes are allowed) in `cwd`, each
    /// call checked by `gate`.
    pub fn new(tools: ToolRegistry, gate: Arc<dyn PermissionGate>, cwd: PathBuf) -> Self {
        Self { tools: Arc::new(tools), gate, cwd }
    }

    /// Serves on stdin and stdout until the client goes away.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running =
            self.serve(rmcp::transport::stdio()).await.map_err(|e| ServeError::Connect(e.to_string()))?;
        running.waiting().await.map_err(|e| ServeError::Connection(e.to_string()))?;
        Ok(())
    }
}

fn as_result(output: octo_agent::ToolOutput) -> CallToolResult {
    let blocks: Vec<ContentBlock> = output
        .content
        .into_iter()
        .map(|p| match p {
            ToolResultPart::Text { text } => ContentBlock::text(text),
            ToolResultPart::Image { source } => ContentBlock::image(source.data, source.media_type),
        })
        .collect();
    if output.is_error {
        CallToolResult::error(blocks)
    } else {
        CallToolResult::success(blocks)
    }
}

impl ServerHandler for OctoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("octo", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _page: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .definitions()
            .iter()
            .map(|d| {
                let schema: JsonObject = match &d.input_schema {
                    serde_json::Value::Object(m) => m.clone(),
                    _ => JsonObject::new(),
                };
                let read_only = self.tools.meta(&d.name).is_some_and(|m| m.read_only);
                Tool::new(d.name.clone(), d.description.clone(), Arc::new(schema))
                    .with_annotations(ToolAnnotations::new().read_only(read_only))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = req.name.to_string();
        let (Some(tool), Some(meta)) = (self.tools.get(&name).cloned(), self.tools.meta(&name).cloned())
        else {
            return Err(ErrorData::invalid_params(format!("octo serves no tool `{name}`"), None));
        };
        let input = serde_json::Value::Object(req.arguments.unwrap_or_default());
        let query =
            PermissionQuery { tool_use_id: "mcp", tool: &name, input: &input, meta: &meta, cwd: &self.cwd };
        let refused = |why: String| Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into());
        match self.gate.check(&query) {
            PermissionDecision::Allow => {}
            PermissionDecision::Deny { message, .. } => return refused(message),
            PermissionDecision::Ask { reason, .. } => {
                let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
                return refused(format!(
                    "`{name}` needs the user's approval{why}, and `octo mcp serve` cannot ask anyone; start it with --allow-writes or add an allow rule"
                ));
            }
        }
        let ctx = ToolContext::detached(self.cwd.clone()).with_cancel(cx.ct.clone());
        Ok(as_result(tool.execute(input, &ctx).await).into())
    }
}
