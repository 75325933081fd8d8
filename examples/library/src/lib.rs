//! octo as a library: an agent that reads files, on the Anthropic Messages API, in a few lines.
//!
//! [`ask`] builds an [`Agent`] from the core crate with the Anthropic adapter as its model and
//! `read_file` from the built-in tools, runs one turn, prints each tool call as it starts and
//! returns the answer. Nothing of octo's application (configuration, sessions, the permission
//! engine) is involved: the caller decides what the agent may do by the tools it is given.

use futures_util::StreamExt;
use octo_agent::{Agent, AgentEvent, Message, ToolRegistry};
use octo_provider_anthropic::{AnthropicConfig, AnthropicSender};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Asks `model` at `base_url` (with `api_key`) about the files under `workspace`; returns the
/// answer.
pub async fn ask(
    base_url: &str,
    api_key: Option<String>,
    model: &str,
    workspace: &Path,
    prompt: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let config = AnthropicConfig::new(model, api_key).with_base_url(base_url);
    let sender = AnthropicSender::new(config)?;
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(octo_tools::fs::ReadFile::new(200)));
    let mut agent = Agent::builder(Arc::new(sender))
        .system_prompt("You answer questions about the files of the current directory.")
        .cwd(workspace)
        .tools(tools)
        .build();
    let mut events = agent.turn_stream(Message::user(prompt), CancellationToken::new());
    let mut answer = String::new();
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::RequestStart { continues: false, .. } => answer.clear(),
            AgentEvent::TextDelta { text } => answer.push_str(&text),
            AgentEvent::ToolCallStart { name, summary, .. } => eprintln!("● {name} {summary}"),
            AgentEvent::Error { message, .. } => return Err(message.into()),
            _ => {}
        }
    }
    Ok(answer)
}
