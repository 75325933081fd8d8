//! What can go wrong talking to a language server.

use std::time::Duration;

/// An error from a language server or the connection to it.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// Reading from or writing to the server failed.
    #[error("i/o with the server failed: {0}")]
    Io(String),
    /// The server sent something that is not the protocol.
    #[error("the server broke the protocol: {0}")]
    Protocol(String),
    /// The connection is gone (the server exited, or its output ended).
    #[error("the server is gone ({0})")]
    Closed(String),
    /// No answer in time.
    #[error("no answer to `{what}` within {} ms", after.as_millis())]
    Timeout {
        /// The request.
        what: String,
        /// How long we waited.
        after: Duration,
    },
    /// The server answered with an error.
    #[error("the server answered: {0}")]
    Server(String),
    /// The server could not be started.
    #[error("could not start it: {0}")]
    Start(String),
}

impl LspError {
    pub(crate) fn io(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}
