//! A real MCP server for tests, written with `rmcp`'s server side: served on stdio by the
//! `octo-test-mcp` binary (a child process, as users' servers are), or over streamable HTTP on
//! loopback in-process. Its behaviour is chosen by flags, so tests can make it misbehave.
//!
//! Tools: `echo` (read-only), `add`, `image` (a PNG), `fail` (an error result), `slow` (waits
//! until cancelled, writing `cancelled` to `$MCP_MARK` when it is), `crash` (the process exits
//! mid-call), `big` (a 50 MB result), `grow` (adds the tool `late` and says the list changed),
//! `pid` (the server's pid), `spawn` (starts a `sleep` grandchild and returns its pid); a text
//! resource `mem://notes`; a prompt `review` with a required argument `file`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: fail loudly

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// How the test server behaves.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Offer a tool whose input schema is not an object schema.
    pub bad_schema: bool,
    /// Offer tools whose names providers reject or that collide once cleaned.
    pub weird_names: bool,
    /// Offer, instead of the test tools, ten tools the size of a real server's (a git
    /// server's), with generated schemas: for measuring what a request costs.
    pub catalog: bool,
}

/// The test server.
#[derive(Clone, Default)]
pub struct TestServer {
    options: Options,
    grown: Arc<AtomicBool>,
    peer: Arc<Mutex<Option<rmcp::Peer<RoleServer>>>>,
}

/// A 1×1 PNG, base64.
pub const PNG_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn schema(v: serde_json::Value) -> Arc<JsonObject> {
    Arc::new(serde_json::from_value(v).unwrap())
}

fn object(props: serde_json::Value) -> Arc<JsonObject> {
    schema(json!({"type": "object", "properties": props}))
}

impl TestServer {
    /// A server with these options.
    pub fn new(options: Options) -> Self {
        Self { options, ..Self::default() }
    }

    fn tools(&self) -> Vec<Tool> {
        if self.options.catalog {
            return catalog();
        }
        let mut t = vec![
            Tool::new("echo", "Echoes `text`.", object(json!({"text": {"type": "string"}})))
                .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "add",
                "Adds a and b.",
                object(json!({"a": {"type": "number"}, "b": {"type": "number"}})),
            ),
            Tool::new("image", "Returns a picture.", object(json!({}))),
            Tool::new("fail", "Always fails.", object(json!({}))),
            Tool::new("slow", "Waits until cancelled.", object(json!({}))),
            Tool::new("crash", "Exits the server.", object(json!({}))),
            Tool::new("big", "Returns 50 MB of text.", object(json!({}))),
            Tool::new("grow", "Adds a tool.", object(json!({}))),
            Tool::new("pid", "The server's process id.", object(json!({}))),
            Tool::new("spawn", "Starts a grandchild process.", object(json!({}))),
            Tool::new("ask", "Asks the user for a name and an age (elicitation).", object(json!({}))),
            Tool::new(
                "getenv",
                "The value of environment variable `name`.",
                object(json!({"name": {"type": "string"}})),
            ),
        ];
        if self.grown.load(Ordering::SeqCst) {
            t.push(Tool::new("late", "Added later.", object(json!({}))));
        }
        if self.options.bad_schema {
            t.push(Tool::new(
                "odd",
                "Has an odd schema.",
                schema(json!({"type": "string", "required": "x"})),
            ));
        }
        if self.options.weird_names {
            t.push(Tool::new("files/read.all", "A slash and a dot.", object(json!({}))));
            t.push(Tool::new("files_read_all", "Collides once cleaned.", object(json!({}))));
        }
        t
    }
}

/// Ten tools of a version-control server, described and typed as such servers usually are: a
/// sentence each, parameters named but not described, and a generated schema (a dialect, titles,
/// `additionalProperties: false`), as the reference git server has.
pub fn catalog() -> Vec<Tool> {
    let tool = |name: &str, description: &str, params: &[(&str, &str)], required: &[&str]| {
        let properties: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .map(|(p, ty)| {
                let title: String =
                    p.split('_').map(|w| w[..1].to_uppercase() + &w[1..]).collect::<Vec<_>>().join(" ");
                ((*p).to_owned(), json!({"type": ty, "title": title}))
            })
            .collect();
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            schema(json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "title": format!("{name}Arguments"),
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false
            })),
        )
    };
    let repo = ("repo_path", "string");
    vec![
        tool("status", "Shows the working tree status.", &[repo], &["repo_path"]),
        tool(
            "diff_unstaged",
            "Shows changes in the working tree not yet staged.",
            &[repo, ("context_lines", "integer")],
            &["repo_path"],
        ),
        tool(
            "diff_staged",
            "Shows changes that are staged for commit.",
            &[repo, ("context_lines", "integer")],
            &["repo_path"],
        ),
        tool(
            "diff",
            "Shows differences between branches or commits.",
            &[repo, ("target", "string")],
            &["repo_path", "target"],
        ),
        tool(
            "commit",
            "Records the staged changes with a message.",
            &[repo, ("message", "string")],
            &["repo_path", "message"],
        ),
        tool(
            "add",
            "Adds file contents to the staging area.",
            &[repo, ("files", "array")],
            &["repo_path", "files"],
        ),
        tool("reset", "Unstages all staged changes.", &[repo], &["repo_path"]),
        tool(
            "log",
            "Shows the commit logs, newest first.",
            &[repo, ("max_count", "integer")],
            &["repo_path"],
        ),
        tool(
            "create_branch",
            "Creates a branch from an optional base.",
            &[repo, ("branch_name", "string"), ("base_branch", "string")],
            &["repo_path", "branch_name"],
        ),
        tool(
            "show",
            "Shows the contents of a commit.",
            &[repo, ("revision", "string")],
            &["repo_path", "revision"],
        ),
    ]
}

fn text(t: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(t)]).into())
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        if self.options.catalog {
            // As a git server: tools only.
            return ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
                .with_server_info(Implementation::new("octo-test-mcp", "1.0"));
        }
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("octo-test-mcp", "1.0"))
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        *self.peer.lock().unwrap() = Some(cx.peer);
    }

    async fn list_tools(
        &self,
        _page: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = req.arguments.clone().unwrap_or_default();
        match req.name.as_ref() {
            "echo" => text(args.get("text").and_then(|v| v.as_str()).unwrap_or("")),
            "add" => {
                let n = |k: &str| args.get(k).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
                text(format!("{}", n("a") + n("b")))
            }
            "image" => Ok(CallToolResult::success(vec![
                ContentBlock::text("a pixel"),
                ContentBlock::image(PNG_B64, "image/png"),
            ])
            .into()),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("it failed on purpose")]).into()),
            "slow" => {
                cx.ct.cancelled().await;
                if let Ok(mark) = std::env::var("MCP_MARK") {
                    let _ = std::fs::write(mark, "cancelled");
                }
                text("cancelled")
            }
            "crash" => std::process::exit(3),
            "big" => text("x".repeat(50 * 1024 * 1024)),
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let peer = self.peer.lock().unwrap().clone();
                if let Some(p) = peer {
                    let _ = p.notify_tool_list_changed().await;
                }
                text("grown")
            }
            "pid" => text(std::process::id().to_string()),
            "ask" => {
                let params: rmcp::model::ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form",
                    "message": "Who are you?",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string", "title": "Name"},
                        "age": {"type": "integer", "default": 30}},
                        "required": ["name"]}
                }))
                .unwrap();
                match cx.peer.create_elicitation(params).await {
                    Ok(r) => text(serde_json::to_string(&r).unwrap()),
                    Err(e) => text(format!("elicitation failed: {e}")),
                }
            }
            "getenv" => {
                let name = args.get("name").and_then(|v| v.as_str()).unwrap_or("");
                // Over HTTP, `http:<header>` is a header of the request instead (what the
                // client sent: its token, for the key-store test).
                if let Some(h) = name.strip_prefix("http:") {
                    let parts = cx.extensions.get::<axum::http::request::Parts>();
                    let v = parts.and_then(|p| p.headers.get(h)).and_then(|v| v.to_str().ok());
                    return text(v.unwrap_or("(none)").to_owned());
                }
                text(std::env::var(name).unwrap_or_else(|_| "(unset)".into()))
            }
            "spawn" => {
                let mut child = std::process::Command::new("sleep").arg("1000").spawn().unwrap();
                let pid = child.id();
                // Reaped if it ever ends while the server lives.
                std::thread::spawn(move || child.wait());
                text(pid.to_string())
            }
            "late" => text("late tool"),
            "odd" | "files/read.all" | "files_read_all" => text(req.name.to_string()),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }

    async fn list_resources(
        &self,
        _page: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let r = Resource::new("mem://notes", "notes");
        Ok(ListResourcesResult::with_all_items(vec![r]))
    }

    async fn read_resource(
        &self,
        req: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        if req.uri == "mem://notes" {
            Ok(ReadResourceResult::new(vec![ResourceContents::text("remember the milk", "mem://notes")])
                .into())
        } else {
            Err(ErrorData::resource_not_found(format!("no resource {}", req.uri), None))
        }
    }

    async fn list_prompts(
        &self,
        _page: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let p = Prompt::new(
            "review",
            Some("Review a file"),
            Some(vec![PromptArgument::new("file").with_required(true)]),
        );
        Ok(ListPromptsResult::with_all_items(vec![p]))
    }

    async fn get_prompt(
        &self,
        req: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        let file = req.arguments.as_ref().and_then(|a| a.get("file")).and_then(|v| v.as_str()).unwrap_or("?");
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("Please review {file} carefully."),
        )])
        .into())
    }
}

/// Serves the test server over streamable HTTP on a loopback port; returns the URL and the
/// token that stops it.
pub async fn serve_http(options: Options) -> (String, tokio_util::sync::CancellationToken) {
    let ct = tokio_util::sync::CancellationToken::new();
    let app = axum::Router::new().nest_service("/mcp", service(options, &ct));
    (serve_app(app, &ct).await, ct)
}

/// The test server as a streamable HTTP service that stops with `ct`.
pub(crate) fn service(
    options: Options,
    ct: &tokio_util::sync::CancellationToken,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    TestServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    StreamableHttpService::new(
        move || Ok(TestServer::new(options.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token()),
    )
}

/// Serves `app` on a loopback port until `ct` is cancelled; its `/mcp` URL.
async fn serve_app(app: axum::Router, ct: &tokio_util::sync::CancellationToken) -> String {
    format!("{}/mcp", serve_router(app, ct).await)
}

/// Serves `app` on a loopback port until `ct` is cancelled; its base URL.
pub(crate) async fn serve_router(app: axum::Router, ct: &tokio_util::sync::CancellationToken) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = ct.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await;
    });
    url
}

/// [`serve_http`], but the server can be made to forget its sessions (as one restarted does) and
/// then answers each forgotten session id with HTTP 400 and a JSON-RPC error without an id, as
/// the TypeScript SDK's servers do (the spec asks for 404). Set the flag to forget.
pub async fn serve_http_forgetful(
    options: Options,
) -> (String, tokio_util::sync::CancellationToken, Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::AtomicBool;
    let ct = tokio_util::sync::CancellationToken::new();
    let svc = service(options, &ct);
    let forget = Arc::new(AtomicBool::new(false));
    let issued: Arc<Mutex<std::collections::HashSet<String>>> = Arc::default();
    let (flag, ids) = (Arc::clone(&forget), Arc::clone(&issued));
    let gate = axum::middleware::from_fn(move |req: axum::extract::Request, next: axum::middleware::Next| {
        let (flag, ids) = (Arc::clone(&flag), Arc::clone(&ids));
        async move {
            let sid = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
            if let Some(sid) = &sid {
                if flag.load(Ordering::SeqCst) && ids.lock().unwrap().contains(sid) {
                    let body = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
                    return axum::response::Response::builder()
                        .status(400)
                        .header("content-type", "application/json")
                        .body(axum::body::Body::from(body))
                        .unwrap();
                }
            }
            let resp = next.run(req).await;
            if !flag.load(Ordering::SeqCst) {
                if let Some(new) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
                    ids.lock().unwrap().insert(new.to_owned());
                }
            }
            resp
        }
    });
    let app = axum::Router::new().nest_service("/mcp", svc).layer(gate);
    let url = serve_app(app, &ct).await;
    (url, ct, forget)
}

/// The path of the `octo-test-mcp` binary. `make test` builds it with the workspace's binaries;
/// when a narrower run did not, it is built here into a target directory of its own (so this
/// never waits on the lock of the build that runs the tests).
pub fn server_bin() -> std::path::PathBuf {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            // target/<profile>/deps/<test> → target/<profile>/octo-test-mcp
            let profile_dir = exe.parent().and_then(|d| d.parent()).unwrap().to_path_buf();
            let name = format!("octo-test-mcp{}", std::env::consts::EXE_SUFFIX);
            let bin = profile_dir.join(&name);
            if bin.is_file() {
                return bin;
            }
            let own = profile_dir.join("octo-test-mcp-build");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = std::process::Command::new(cargo)
                .args(["build", "--quiet", "-p", "octo-testkit", "--bin", "octo-test-mcp", "--target-dir"])
                .arg(&own)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo runs");
            let built = own.join("debug").join(&name);
            assert!(status.success() && built.is_file(), "could not build {}", built.display());
            built
        })
        .clone()
}
