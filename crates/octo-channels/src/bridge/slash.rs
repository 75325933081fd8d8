//! What a chat message that starts with `/` turned out to be, once the chat's commands read it.

/// A `/word` message, read.
pub(super) enum Slash<'a> {
    /// A command, answered.
    Handled,
    /// Another `/word` and its argument: a skill or custom command, or unknown.
    Other(&'a str, &'a str),
    /// Not a command: a prompt.
    Message,
}
