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
mod engine;
mod error;
mod gguf;
pub mod models;
pub mod pull;
mod sender;
mod worker;

pub use error::LocalError;
pub use gguf::check_gguf;
pub use sender::{LocalConfig, LocalSender, Stats, DEFAULT_CONTEXT};

/// Physical CPU cores (the default thread count): distinct (package, core) pairs on Linux, else
/// half the logical processors.
pub fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    #[cfg(target_os = "linux")]
    if let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") {
        let mut cores = std::collections::HashSet::new();
        let (mut package, mut core) = (None, None);
        for line in info.lines().chain(std::iter::once("")) {
            let value = |l: &str| l.split(':').nth(1).map(|v| v.trim().to_owned());
            if line.starts_with("physical id") {
                package = value(line);
            } else if line.starts_with("core id") {
                core = value(line);
            } else if line.trim().is_empty() {
                if let (Some(p), Some(c)) = (package.take(), core.take()) {
                    cores.insert((p, c));
                }
            }
        }
        if !cores.is_empty() {
            return cores.len().min(logical);
        }
    }
    (logical / 2).max(1)
}
