//! # octo-provider-openai
//!
//! The OpenAI Chat Completions adapter for octo: [`OpenAiSender`] implements the whole Sender
//! capability stack against `POST {base}/chat/completions`, so octo works with OpenAI and with the
//! many servers that copy its API — DeepSeek, Kimi/Moonshot, Qwen (DashScope), GLM (Z.ai /
//! Zhipu), OpenRouter, xAI, Groq, Ollama, LM Studio, vLLM and llama.cpp's server. Each is a
//! [`Preset`] (base URL, key variable, default model, [`Quirks`]), not a separate adapter; `custom`
//! takes any base URL.
//!
//! Wire quirks handled here: the system prompt as `messages[0]`; tool calls as `tool_calls[]` and
//! results as `role: "tool"` messages; argument fragments joined **by `index`** (ids and names
//! only in the first fragment, or no index at all); reasoning from `delta.reasoning_content` or
//! `delta.reasoning`; usage from a final chunk with empty `choices` (`stream_options.include_usage`)
//! normalized so cached tokens (`prompt_tokens_details.cached_tokens` or DeepSeek's
//! `prompt_cache_hit_tokens`) are a separate bucket; `finish_reason` normalized; a missing
//! `[DONE]` tolerated; `max_tokens` vs `max_completion_tokens` and `reasoning_effort` per model
//! family. A local server (llama.cpp, Ollama, vLLM, LM Studio) is asked once for the model's
//! context window ([`discover`]), and the output cap is then kept inside it.
//!
//! **Layer:** adapter. Depends on `octo-agent` and `octo-provider` only.
//!
//! ```no_run
//! use octo_agent::{Agent, CancellationToken, Message};
//! use octo_provider_openai::{preset_by_id, OpenAiConfig, OpenAiSender};
//! use std::sync::Arc;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let deepseek = preset_by_id("deepseek").ok_or("no such preset")?;
//! let key = std::env::var(deepseek.key_env).ok();
//! let sender = OpenAiSender::new(OpenAiConfig::from_preset(deepseek, None, key))?;
//! let mut agent = Agent::builder(Arc::new(sender)).build();
//! let outcome = agent.turn(Message::user("Say hi"), CancellationToken::new()).await?;
//! println!("{}", outcome.text);
//! # Ok(())
//! # }
//! ```

mod body;
mod config;
pub mod discover;
mod parse;
mod preset;
mod sender;
mod wire;

pub use config::OpenAiConfig;
pub use discover::{is_local_url, LocalServer};
pub use parse::OpenAiParser;
pub use preset::{
    accepts_reasoning_effort, is_openai_reasoning_model, preset_by_id, MaxTokensField, Preset, Quirks,
    ReasoningStyle, PRESETS, STANDARD,
};
pub use sender::{OpenAiSender, OpenAiWire};
