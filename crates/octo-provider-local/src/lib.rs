//! # octo-provider-local
//!
//! A model inside the octo process: a GGUF file run by llama.cpp (through `llama-cpp-2`),
//! behind the same [`octo_agent::Sender`] stack as the HTTP providers, streaming and with tools.
//!
//! - The prompt is rendered with the model's own chat template (from the GGUF), tools passed the
//!   way the template expects; tool calls are parsed back by llama.cpp's chat layer, and a grammar
//!   that wakes on the tool-call marker keeps them well-formed, so a small model cannot emit a
//!   broken call. Reasoning (`<think>`) streams as thinking.
//! - A model is loaded once per process (memory-mapped) and shared; each [`LocalSender`] keeps
//!   its own context on a worker thread and reuses its KV cache: only the part of the prompt that
//!   changed since the last request is evaluated (reported as cache reads in the usage).
//! - The model runs in this process ([`LocalSender::new`], feature `engine`, on by default) or
//!   in a separate engine program ([`LocalSender::spawn`]) whose `main` calls [`serve`]: the
//!   caller then links neither llama.cpp nor its C++ runtime, starts none of it when the model is
//!   not used, and survives a crash of the engine. octo does the latter.
//! - [`models`] keeps downloaded models in a folder (`~/.octo/models` for octo) and [`pull`]
//!   fetches one with resume and a SHA-256 check.
//!
//! **Layer:** adapter (a provider). Depends on `octo-agent` and `octo-provider` only.
//! Without the `engine` feature: no llama.cpp (only `spawn`, the model list and downloads).
//!
//! ```no_run
//! use octo_agent::{Message, Request, Sender};
//! use octo_provider_local::{LocalConfig, LocalSender};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let sender = LocalSender::new(LocalConfig::new("models/SmolLM2-135M-Instruct.Q4_1.gguf"))?;
//! let history = [Message::user("Say hello.")];
//! let reply = sender.send(Request::new(&history)).await?;
//! println!("{}", reply.message.text());
//! # Ok(())
//! # }
//! ```

mod chat;
mod cores;
#[cfg(feature = "engine")]
mod degenerate;
#[cfg(feature = "engine")]
mod engine;
mod error;
mod gguf;
pub mod hub;
#[cfg(feature = "engine")]
mod inproc;
mod limits;
pub mod models;
mod process;
pub mod pull;
mod sender;
#[cfg(feature = "engine")]
mod serve;
mod stats;
#[cfg(feature = "engine")]
mod template;
mod wire;
#[cfg(feature = "engine")]
mod worker;

pub use cores::physical_cores;
pub use error::LocalError;
pub use gguf::check_gguf;
pub use limits::{DEFAULT_CONTEXT, SMALL_ANSWER, TOOL_PARAMS};
pub use sender::{LocalConfig, LocalSender};
#[cfg(feature = "engine")]
pub use serve::serve;
pub use stats::Stats;
