//! # octo-provider-responses
//!
//! The OpenAI Responses API adapter for octo: [`ResponsesSender`] implements the whole Sender
//! capability stack against `POST {base}/responses` — OpenAI's own API (its current models are
//! built for it), Azure OpenAI's v1 API, OpenRouter, and the servers that copy it (vLLM,
//! LiteLLM, llama.cpp's server).
//!
//! What sets it apart from Chat Completions is **reasoning carried across requests**: a
//! reasoning model's reasoning comes back as items of its own, encrypted when nothing is stored
//! on the vendor's side (`store: false`, `include: ["reasoning.encrypted_content"]`, the
//! default). They are kept in the history as `ContentBlock::Reasoning` (tagged with the
//! `endpoint:model` they came from) and sent back on the next request to the same endpoint and
//! model, so the model goes on from its reasoning after a tool call instead of starting over;
//! other endpoints and models never see them.
//!
//! Wire mapping: the system prompt as `instructions`; messages as input items (`message` with
//! `input_text`/`input_image`, `function_call`, `function_call_output`, `reasoning`); function
//! tools with their schemas; `tool_choice`, `parallel_tool_calls`, `max_output_tokens`,
//! `reasoning: {effort, summary: "auto"}` for reasoning models; `prompt_cache_key` per
//! conversation. The stream's semantic events (`response.output_item.added`/`.done`,
//! `response.output_text.delta`, `response.function_call_arguments.delta`/`.done`,
//! `response.reasoning_summary_text.delta`, `response.completed`/`.incomplete`/`.failed`,
//! `error`) become octo's stream events; unknown event types are ignored; usage is normalised
//! (`cached_tokens` is a part of `input_tokens`, so it becomes its own bucket).
//!
//! **Layer:** adapter. Depends on `octo-agent` and `octo-provider` only.
//!
//! ```no_run
//! use octo_agent::{Agent, CancellationToken, Message};
//! use octo_provider_responses::{preset_by_id, ResponsesConfig, ResponsesSender};
//! use std::sync::Arc;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let openai = preset_by_id("openai").ok_or("no such preset")?;
//! let key = std::env::var(openai.key_env).ok();
//! let sender = ResponsesSender::new(ResponsesConfig::from_preset(openai, None, key))?;
//! let mut agent = Agent::builder(Arc::new(sender)).build();
//! let outcome = agent.turn(Message::user("Say hi"), CancellationToken::new()).await?;
//! println!("{}", outcome.text);
//! # Ok(())
//! # }
//! ```

mod body;
mod config;
mod parse;
mod sender;
mod wire;

pub use body::is_reasoning_model;
pub use config::{preset_by_id, Auth, Preset, ResponsesConfig, PRESETS};
pub use parse::ResponsesParser;
pub use sender::{ResponsesSender, ResponsesWire};
