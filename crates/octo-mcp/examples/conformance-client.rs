//! octo's MCP client under the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, client mode): the suite starts a test server, runs this
//! program with the server's URL as the last argument and the scenario in
//! `MCP_CONFORMANCE_SCENARIO`. It does what octo does with a configured HTTP server: for an
//! `auth/…` scenario one `octo mcp login` first (the suite's authorization server approves at
//! once, so the "browser" only follows its redirect), then a session's hub — started,
//! its tools listed and each one called (arguments made from the schema), an elicitation
//! answered with the form's defaults. `.ci/run` runs the suite with it (see
//! `dev-docs/mcp.md`).

use octo_agent::{ToolContext, ToolSource};
use octo_mcp::oauth::{OAuthSpec, SecretStore};
use octo_mcp::{McpHub, McpSource, Origin, ServerConfig, ServerSpec};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct Secrets(Mutex<HashMap<String, String>>);

impl SecretStore for Secrets {
    fn get(&self, entry: &str) -> std::io::Result<Option<String>> {
        Ok(self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.get(entry).cloned())
    }
    fn set(&self, entry: &str, value: &str) -> std::io::Result<()> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.insert(entry.into(), value.into());
        Ok(())
    }
    fn remove(&self, entry: &str) -> std::io::Result<bool> {
        Ok(self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.remove(entry).is_some())
    }
}

/// Answers every question with the form's defaults.
struct Defaults;

#[octo_agent::async_trait]
impl octo_mcp::Elicitor for Defaults {
    async fn answer(&self, q: octo_mcp::Elicitation) -> octo_mcp::ElicitAnswer {
        octo_mcp::ElicitAnswer::Accept(octo_mcp::elicit::defaults(&q.schema))
    }
}

/// Arguments for a tool: a plausible value for every property.
fn arguments(schema: &Value) -> Value {
    let mut args = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            let v = match p.get("type").and_then(Value::as_str) {
                Some("number" | "integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("test"),
            };
            args.insert(name.clone(), v);
        }
    }
    Value::Object(args)
}

const SECRET_VAR: &str = "OCTO_CONFORMANCE_CLIENT_SECRET";

async fn run(url: String, scenario: String, context: Value) -> Result<(), String> {
    let secret = context.get("client_secret").and_then(Value::as_str).map(str::to_owned);
    let env = move |k: &str| if k == SECRET_VAR { secret.clone() } else { None };
    let mut spec = ServerSpec {
        url: Some(url.clone()),
        startup_timeout: Some(30.0),
        call_timeout: Some(30.0),
        ..ServerSpec::default()
    };
    if let Some(id) = context.get("client_id").and_then(Value::as_str) {
        let has_secret = context.get("client_secret").is_some();
        // The machine-to-machine scenarios configure the client-credentials grant.
        let grant = scenario.contains("client-credentials").then(|| "client_credentials".to_owned());
        spec.oauth = Some(OAuthSpec {
            client_id: Some(id.to_owned()),
            client_secret_env: has_secret.then(|| SECRET_VAR.to_owned()),
            grant,
            ..OAuthSpec::default()
        });
    }
    let config = ServerConfig { name: "conformance".into(), spec, origin: Origin::User };
    let store: Arc<dyn SecretStore> = Arc::new(Secrets::default());
    let auth = scenario.starts_with("auth/") && !scenario.contains("client-credentials");
    if auth {
        log_in(&config, &url, &store, &env).await?;
    }
    let refused = calls(&config, &store, &env).await;
    // A call refused for its token's scope: log in again (the login asks for the scope the
    // refusal named, as `octo mcp login` does) and try once more.
    if auth && refused {
        log_in(&config, &url, &store, &env).await?;
        calls(&config, &store, &env).await;
    }
    Ok(())
}

async fn log_in(
    config: &ServerConfig,
    url: &str,
    store: &Arc<dyn SecretStore>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<(), String> {
    let settings = match config.spec.transport(env).map_err(|e| e.to_string())? {
        octo_mcp::Transport::Http { oauth, .. } => oauth,
        octo_mcp::Transport::Stdio { .. } => return Err("not an HTTP server".into()),
    };
    let open = |address: &str| {
        let a = address.to_owned();
        std::thread::spawn(move || octo_testkit::oauth::browse(&a));
        true
    };
    octo_mcp::login(octo_mcp::Login {
        server: "conformance",
        url,
        settings: &settings,
        store: Arc::clone(store),
        open: &open,
        say: &|m: &str| eprintln!("{m}"),
        attended: false,
        wait: Duration::from_secs(30),
    })
    .await
    .map_err(|e| e.to_string())
}

/// A session: the hub started, every tool of the server called; whether a call was refused for
/// its token's scope.
async fn calls(
    config: &ServerConfig,
    store: &Arc<dyn SecretStore>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> bool {
    let hub = McpHub::new(vec![config.clone()], std::env::temp_dir(), env, &|_| true);
    hub.use_secrets(Arc::clone(store));
    hub.use_elicitor(Arc::new(Defaults));
    hub.start();
    hub.wait_ready(Duration::from_secs(30)).await;
    for n in hub.take_notices() {
        eprintln!("{n}");
    }
    let source = McpSource(Arc::clone(&hub));
    let ctx = ToolContext::detached(std::env::temp_dir());
    let mut refused = false;
    for tool in source.tools() {
        let def = tool.definition();
        if !def.name.starts_with("mcp__conformance__") {
            continue;
        }
        let out = tool.execute(arguments(&def.input_schema), &ctx).await;
        let text = out.text_content();
        refused |= out.is_error && text.contains("scope");
        eprintln!("{}: {text}", def.name);
    }
    hub.shutdown();
    refused
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(url, scenario, context)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance client: {e}");
            ExitCode::FAILURE
        }
    }
}
