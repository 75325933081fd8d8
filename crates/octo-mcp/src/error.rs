//! What can go wrong with an MCP server's configuration, its prompts, and `octo mcp serve`.

use thiserror::Error;

/// A server's configuration that cannot be used as written; the message names the key to fix.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// `${VAR}` names a variable that is not set and has no `:-default`.
    #[error("it uses ${{{0}}}, which is not set")]
    Unset(String),
    /// Both `command` and `url`.
    #[error("give either `command` (stdio) or `url` (http), not both")]
    Both,
    /// Neither `command` nor `url`.
    #[error("it needs `command` (stdio) or `url` (http)")]
    Neither,
    /// A `url` that is not http(s).
    #[error("`url` must be http(s), not `{0}`")]
    NotHttp(String),
    /// `bearer_token_env` names a variable that is not set.
    #[error("its token variable {0} is not set")]
    NoToken(String),
    /// An unknown `type`.
    #[error("unknown `type` `{0}`: stdio or http")]
    UnknownType(String),
    /// A `type` that needs `url` was given `command`.
    #[error("`type = {0}` needs `url`, not `command`")]
    WantsUrl(String),
    /// A `type` that needs `command` was given `url`.
    #[error("`type = {0}` needs `command`, not `url`")]
    WantsCommand(String),
}

/// Why an MCP prompt could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PromptError {
    /// Required arguments were not given.
    #[error("{command} needs {missing}")]
    MissingArguments {
        /// The slash command (`/mcp__server__prompt`).
        command: String,
        /// The missing arguments, comma-separated.
        missing: String,
    },
    /// No server of that name.
    #[error("no MCP server `{0}`")]
    UnknownServer(String),
    /// The server could not be reached (it failed to start, or exited too often).
    #[error("{0}")]
    Unavailable(String),
    /// The server answered with an error.
    #[error("the server refused the prompt: {0}")]
    Refused(String),
}

/// Why `octo mcp serve` stopped.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client never completed the MCP handshake.
    #[error("the MCP client did not connect: {0}")]
    Connect(String),
    /// The connection ended with an error.
    #[error("the MCP connection failed: {0}")]
    Connection(String),
}
