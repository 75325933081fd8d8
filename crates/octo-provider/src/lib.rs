//! # octo-provider
//!
//! Shared plumbing for octo's model providers, so each adapter only deals with its wire format:
//!
//! - [`http`]: the reqwest client (rustls, connect timeout, proxies from the environment or
//!   config, custom headers per endpoint).
//! - [`tls`]: the one TLS setup of every client: the platform's trusted roots, loaded at the
//!   first `https` handshake (once per process), never when a client is built.
//! - [`sse`]: an incremental Server-Sent Events decoder that handles any chunking.
//! - [`retry`]: exponential backoff with jitter that honours `retry-after`.
//! - [`classify`]: HTTP and in-stream errors → the agent's typed [`octo_agent::ProviderError`],
//!   with messages that name the endpoint and the fix, and the API key redacted.
//! - [`transport`]: a [`Transport`] that sends with retries and turns an SSE body into an
//!   [`octo_agent::EventStream`] through a protocol [`StreamParser`], failing stalled streams.
//! - [`sender`]: [`HttpSender`], the whole Sender capability stack for any [`WireProtocol`].
//! - [`endpoint`]: [`EndpointSettings`], what every endpoint needs whatever its protocol.
//! - [`catalog`]: context windows, output caps and prices of common models.
//!
//! **Layer:** shared plumbing. Depends on `octo-agent` only (plus reqwest, serde, tokio). Provider
//! adapters (`octo-provider-anthropic`, `octo-provider-openai`) build on it.
//!
//! ```
//! use octo_provider::sse::SseDecoder;
//!
//! let mut decoder = SseDecoder::new();
//! let mut events = Vec::new();
//! decoder.feed(b"event: ping\ndata: {}\n", &mut events);
//! assert!(events.is_empty()); // the blank line that ends the record has not arrived yet
//! decoder.feed(b"\n", &mut events);
//! assert_eq!(events[0].event, "ping");
//! ```

pub mod catalog;
pub mod classify;
mod content;
pub mod endpoint;
pub mod http;
pub mod retry;
pub mod sender;
pub mod sse;
pub mod tls;
pub mod transport;
mod waits;

pub use catalog::{Catalog, ModelInfo, Price};
pub use classify::EndpointInfo;
pub use endpoint::EndpointSettings;
pub use http::{build_client, build_download_client, HttpConfig, SetupError};
pub use retry::RetryPolicy;
pub use sender::{secret_header, Connection, HttpSender, WireProtocol};
pub use transport::{response_events, secs, PreparedRequest, StreamParser, Transport};

/// A tool result as the text a protocol without structured results carries (OpenAI's Chat
/// Completions and Responses): `Error: ` first for a failure, its text parts a line each, a note
/// where an image was (the images are pushed onto `images`, for a user message after the
/// results), `(no output)` when empty.
pub fn tool_result_text<'a>(
    content: &'a [octo_agent::ToolResultPart],
    is_error: bool,
    images: &mut Vec<&'a octo_agent::ImageSource>,
) -> String {
    let mut text = String::from(if is_error { "Error: " } else { "" });
    for part in content {
        match part {
            octo_agent::ToolResultPart::Text { text: t } => {
                if !text.is_empty() && !text.ends_with(": ") {
                    text.push('\n');
                }
                text.push_str(t);
            }
            octo_agent::ToolResultPart::Image { source } => {
                images.push(source);
                text.push_str("\n(image attached in the next message)");
            }
        }
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    text
}

/// A unique id for a tool call whose server sent none (or an empty one). Ids must be unique
/// within a conversation, so this combines a process-wide counter with the clock.
pub fn synthetic_tool_id(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}_octo_{n}_{nanos:08x}")
}
