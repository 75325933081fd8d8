//! # octo-provider-anthropic
//!
//! The Anthropic Messages API adapter for octo: [`AnthropicSender`] implements the whole Sender
//! capability stack (buffered, streaming, tools, streaming tools) against `POST /v1/messages`, so
//! octo works with api.anthropic.com and every Anthropic-compatible endpoint (DeepSeek's and
//! Kimi's `/anthropic` endpoints, gateways).
//!
//! All Anthropic wire quirks live here: the top-level `system` field, content blocks, tools as
//! `{name, description, input_schema}`, the event stream (`message_start`, `content_block_*`,
//! `message_delta`, `message_stop`, `ping`, `error`), thinking blocks with signatures (and
//! redacted thinking) that round-trip, `cache_control` breakpoints on the system prompt, the tools
//! and the latest messages, and usage mapped to octo's non-overlapping buckets.
//!
//! **Layer:** adapter. Depends on `octo-agent` and `octo-provider` only.
//!
//! ```no_run
//! use octo_agent::{Agent, CancellationToken, Message};
//! use octo_provider_anthropic::{AnthropicConfig, AnthropicSender};
//! use std::sync::Arc;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let key = std::env::var("ANTHROPIC_API_KEY").ok();
//! let sender = AnthropicSender::new(AnthropicConfig::new("claude-sonnet-4-5", key))?;
//! let mut agent = Agent::builder(Arc::new(sender)).system_prompt("Be brief.").build();
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

pub use body::thinking_budget;
pub use config::{AnthropicConfig, AuthStyle, API_VERSION, DEFAULT_BASE_URL};
pub use parse::AnthropicParser;
pub use sender::{AnthropicSender, AnthropicWire};
