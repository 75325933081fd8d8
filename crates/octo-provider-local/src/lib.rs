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
//! - [`models`] keeps downloaded models in a folder (`~/.octo/models` for octo) and [`pull`]
//!   fetches one with resume and a SHA-256 check.
//!
//! **Layer:** adapter (a provider). Depends on `octo-agent` and `octo-provider` only.
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
mod degenerate;
mod engine;
mod error;
mod gguf;
pub mod models;
pub mod pull;
mod sender;
mod stats;
mod worker;

pub use cores::physical_cores;
pub use error::LocalError;
pub use gguf::check_gguf;
pub use sender::{LocalConfig, LocalSender, DEFAULT_CONTEXT};
pub use stats::Stats;
