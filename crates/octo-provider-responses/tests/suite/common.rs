//! Helpers shared by the adapter's tests.

#![allow(dead_code)]

use octo_agent::*;
use octo_provider::RetryPolicy;
use octo_provider_responses::{preset_by_id, ResponsesConfig, ResponsesSender};
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

pub const KEY: &str = "sk-responses-test-key-123";

/// A config for `preset` pointed at the mock server.
pub fn config(preset: &str, base: &str) -> ResponsesConfig {
    let p = preset_by_id(preset).unwrap();
    let mut cfg = ResponsesConfig::from_preset(p, None, Some(KEY.into()));
    cfg.settings.base_url = format!("{base}/v1");
    cfg.settings.http.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    cfg.settings.http.stall_timeout = Duration::from_secs(3);
    cfg
}

pub fn sender(preset: &str, base: &str) -> ResponsesSender {
    ResponsesSender::new(config(preset, base)).unwrap()
}

pub async fn start(replies: Vec<Scripted>) -> MockLlm {
    let llm = MockLlm::start().await;
    llm.script_responses(replies).await;
    llm
}

/// Streams one request and assembles it (the kit's, for this sender).
pub async fn stream_once(
    s: &ResponsesSender,
    req: Request<'_>,
) -> (Vec<StreamEvent>, Result<Assembled, ProviderError>) {
    octo_testkit::sender::stream_once(s, req).await
}

pub struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "echo",
            "Echoes text.",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
    }
    fn meta(&self) -> ToolMeta {
        ToolMeta::reads()
    }
    async fn execute(&self, input: Value, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!("echo: {}", input["text"].as_str().unwrap_or("?")))
    }
}

pub fn agent(s: ResponsesSender) -> Agent {
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Echo));
    Agent::builder(Arc::new(s)).tools(tools).system_prompt("Be terse.").build()
}
