//! Typed errors: what a provider can fail with, and what a turn can fail with.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use thiserror::Error;

/// Why a request to a model failed. Adapters classify their protocol's errors into these kinds so
/// the loop, the retry policy and the front ends never parse provider messages themselves.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The key is missing, wrong or lacks access. The message names the endpoint and where the
    /// key comes from.
    #[error("authentication failed: {message}")]
    Auth {
        /// What failed and how to fix it.
        message: String,
    },
    /// Too many requests; `retry_after` is the server's hint when it gave one.
    #[error("rate limited: {message}")]
    RateLimited {
        /// How long the server asked to wait.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// The provider is overloaded (HTTP 529, `overloaded_error`, 503).
    #[error("provider overloaded: {message}")]
    Overloaded {
        /// How long the server asked to wait.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// The prompt does not fit in the model's context window.
    #[error("context too long: {message}")]
    ContextTooLong {
        /// By how many tokens the prompt exceeds the limit, when the message says.
        deficit: Option<u64>,
        /// The server's message.
        message: String,
    },
    /// The server rejected the request itself (HTTP 400, 404, 422...).
    #[error("invalid request{}: {message}", status_suffix(*.status))]
    InvalidRequest {
        /// HTTP status, when there was one.
        status: Option<u16>,
        /// The server's message.
        message: String,
    },
    /// The server failed (HTTP 5xx other than overload).
    #[error("server error{}: {message}", status_suffix(*.status))]
    Server {
        /// HTTP status, when there was one.
        status: Option<u16>,
        /// The server's message.
        message: String,
    },
    /// The connection failed, timed out or stalled.
    #[error("transport error: {message}")]
    Transport {
        /// What happened on the wire.
        message: String,
    },
    /// The stream or body did not follow the protocol.
    #[error("malformed response: {message}")]
    MalformedStream {
        /// What was wrong.
        message: String,
    },
    /// The sender cannot do what was asked (for example tools on a sender without tool support).
    #[error("unsupported: {message}")]
    Unsupported {
        /// What is missing.
        message: String,
    },
    /// The endpoint answered, but not as the model API does (an HTML page, plain text, an
    /// empty body): the configuration points somewhere else. The message names the URL, what
    /// came back and the likely fix. Not retried.
    #[error("the endpoint did not answer as a model API: {message}")]
    BadEndpoint {
        /// What came back and what to change.
        message: String,
    },
    /// The request was cancelled by the caller.
    #[error("cancelled")]
    Cancelled,
}

fn status_suffix(status: Option<u16>) -> String {
    status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
}

impl ProviderError {
    /// Whether trying the same request again later may succeed.
    pub fn is_retryable(&self) -> bool {
        // A garbled stream is most often a proxy or connection hiccup: worth another try.
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Overloaded { .. }
                | Self::Server { .. }
                | Self::Transport { .. }
                | Self::MalformedStream { .. }
        )
    }

    /// The server's requested delay before a retry, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Overloaded { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The kind as a stable lowercase name, for events and machine-readable output.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Auth { .. } => ErrorKind::Auth,
            Self::RateLimited { .. } => ErrorKind::RateLimited,
            Self::Overloaded { .. } => ErrorKind::Overloaded,
            Self::ContextTooLong { .. } => ErrorKind::ContextTooLong,
            Self::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            Self::Server { .. } => ErrorKind::Server,
            Self::Transport { .. } => ErrorKind::Transport,
            Self::MalformedStream { .. } => ErrorKind::MalformedStream,
            Self::Unsupported { .. } => ErrorKind::Unsupported,
            Self::BadEndpoint { .. } => ErrorKind::BadEndpoint,
            Self::Cancelled => ErrorKind::Cancelled,
        }
    }
}

/// Error kinds as they appear in events and JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// See [`ProviderError::Auth`].
    Auth,
    /// See [`ProviderError::RateLimited`].
    RateLimited,
    /// See [`ProviderError::Overloaded`].
    Overloaded,
    /// See [`ProviderError::ContextTooLong`].
    ContextTooLong,
    /// See [`ProviderError::InvalidRequest`].
    InvalidRequest,
    /// See [`ProviderError::Server`].
    Server,
    /// See [`ProviderError::Transport`].
    Transport,
    /// See [`ProviderError::MalformedStream`].
    MalformedStream,
    /// See [`ProviderError::Unsupported`].
    Unsupported,
    /// See [`ProviderError::BadEndpoint`].
    BadEndpoint,
    /// The turn was cancelled.
    Cancelled,
    /// The agent was misused (for example a second turn while one runs).
    Agent,
}

/// Why a turn failed. The history is already rolled back to its last consistent point when this
/// is returned.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model request failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The caller cancelled the turn.
    #[error("turn cancelled")]
    Cancelled,
    /// The input cannot start a turn (for example an empty message).
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

impl AgentError {
    /// The kind as a stable name for events and machine-readable output.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Provider(p) => p.kind(),
            Self::Cancelled => ErrorKind::Cancelled,
            Self::InvalidInput(_) => ErrorKind::Agent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_kinds() {
        let rl =
            ProviderError::RateLimited { retry_after: Some(Duration::from_secs(3)), message: "slow".into() };
        assert!(rl.is_retryable());
        assert_eq!(rl.retry_after(), Some(Duration::from_secs(3)));
        assert!(!ProviderError::Auth { message: "no".into() }.is_retryable());
        assert!(!ProviderError::ContextTooLong { deficit: Some(10), message: "x".into() }.is_retryable());
        assert!(!ProviderError::Cancelled.is_retryable());
    }

    #[test]
    fn messages_name_the_status() {
        let e = ProviderError::InvalidRequest { status: Some(404), message: "model `x` not found".into() };
        assert_eq!(e.to_string(), "invalid request (HTTP 404): model `x` not found");
        let e = ProviderError::Server { status: None, message: "boom".into() };
        assert_eq!(e.to_string(), "server error: boom");
        assert_eq!(AgentError::from(e).kind(), ErrorKind::Server);
    }
}
