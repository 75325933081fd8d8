//! One request to the model: sent with the best capability the sender has (streaming with
//! tools, streaming, tools, buffered), its deltas passed on as events, the reply assembled.

use super::state::Agent;
use crate::assemble::{Assembled, Assembler};
use crate::channel::TurnChannel;
use crate::error::ProviderError;
use crate::event::AgentEvent;
use crate::message::ContentBlock;
use crate::sender::{Capability, Request};
use futures_util::StreamExt;

/// A buffered response's tool calls must carry JSON objects. Adapters pass arguments they could
/// not parse as a string; those calls get an empty object in the history and are answered with an
/// error result, exactly like the streamed path.
fn check_buffered_inputs(mut response: crate::sender::Response) -> Assembled {
    let mut invalid_inputs = std::collections::HashMap::new();
    for block in &mut response.message.content {
        if let ContentBlock::ToolUse { id, input, .. } = block {
            if !input.is_object() {
                let why = match input {
                    serde_json::Value::String(raw) => {
                        let shown: String = raw.chars().take(200).collect();
                        format!("the arguments were not valid JSON: {shown}")
                    }
                    _ => "the arguments must be a JSON object".to_owned(),
                };
                invalid_inputs.insert(id.clone(), why);
                *input = serde_json::Value::Object(Default::default());
            }
        }
    }
    Assembled { response, invalid_inputs }
}

/// Sends one request with the best capability the sender has and assembles the response.
pub(super) async fn request(
    agent: &Agent,
    capability: Capability,
    ch: &TurnChannel,
    max_tokens: Option<u32>,
) -> Result<Assembled, ProviderError> {
    let cfg = &agent.config;
    let mut req = Request::new(&agent.history)
        .with_max_tokens(max_tokens.or(cfg.max_tokens))
        .with_reasoning(cfg.reasoning);
    if let Some(system) = cfg.system_prompt.as_deref() {
        req = req.with_system(system);
    }
    let sender = agent.sender.as_ref();
    let stream = match capability {
        Capability::ToolStreaming => match sender.as_tool_streaming() {
            Some(s) => Some(s.send_stream_with_tools(req.with_tools(agent.tools.definitions())).await?),
            None => None,
        },
        Capability::Streaming => match sender.as_streaming() {
            Some(s) => Some(s.send_stream(req).await?),
            None => None,
        },
        Capability::Tools | Capability::Buffered => None,
    };
    let mut assembler = Assembler::new();
    match stream {
        Some(mut stream) => {
            while let Some(item) = stream.next().await {
                let event = item?;
                match &event {
                    crate::sender::StreamEvent::TextDelta(t) => {
                        ch.emit(AgentEvent::TextDelta { text: t.clone() });
                    }
                    crate::sender::StreamEvent::ThinkingDelta(t) => {
                        ch.emit(AgentEvent::ThinkingDelta { text: t.clone() });
                    }
                    crate::sender::StreamEvent::Progress(message) => {
                        ch.emit(AgentEvent::Progress { message: message.clone() });
                    }
                    crate::sender::StreamEvent::Retry { attempt, max_attempts, delay, reason, restart } => {
                        ch.emit(AgentEvent::Retry {
                            restart: *restart,
                            attempt: *attempt,
                            max_attempts: *max_attempts,
                            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            reason: reason.clone(),
                        });
                    }
                    _ => {}
                }
                assembler.push(event)?;
            }
            Ok(assembler.finish())
        }
        None => {
            let response = match (capability, sender.as_tool()) {
                (Capability::Tools, Some(t)) => {
                    t.send_with_tools(req.with_tools(agent.tools.definitions())).await?
                }
                _ => sender.send(req).await?,
            };
            for block in &response.message.content {
                match block {
                    ContentBlock::Text { text } => ch.emit(AgentEvent::TextDelta { text: text.clone() }),
                    ContentBlock::Thinking { thinking, .. } => {
                        ch.emit(AgentEvent::ThinkingDelta { text: thinking.clone() });
                    }
                    _ => {}
                }
            }
            Ok(check_buffered_inputs(response))
        }
    }
}
