//! What a chat platform does for a bridge: deliver what users send, and send, edit and offer
//! buttons back.

/// Something a user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A message.
    Message {
        /// The chat (or thread) it came from.
        chat: String,
        /// The sender's user id.
        user: String,
        /// Its text.
        text: String,
    },
    /// A button pressed.
    Button {
        /// The chat the button's message is in.
        chat: String,
        /// Who pressed it.
        user: String,
        /// The data the button carries.
        data: String,
        /// The platform's id for the press (to acknowledge it).
        press: String,
    },
}

/// A message the bridge sent, to edit later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// Its chat.
    pub chat: String,
    /// Its id.
    pub id: String,
}

/// A failure talking to the platform.
#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// The token was refused: the channel cannot run.
    #[error("the platform refused the bot token: {0}")]
    Unauthorized(String),
    /// The platform asked to slow down (already waited once).
    #[error("rate limited: {0}")]
    RateLimited(String),
    /// Anything else (network, 5xx, a malformed answer).
    #[error("{0}")]
    Other(String),
}

/// One chat platform.
#[async_trait::async_trait]
pub trait Platform: Send + Sync + 'static {
    /// Its name, for logs.
    fn name(&self) -> &str;
    /// The longest message it takes, in characters.
    fn message_limit(&self) -> usize;
    /// Waits for what users did next (never the same update twice, none skipped).
    async fn poll(&self) -> Result<Vec<Incoming>, PlatformError>;
    /// Sends a message, with buttons (label, data) when given.
    async fn send(&self, chat: &str, text: &str, buttons: &[(String, String)])
        -> Result<Sent, PlatformError>;
    /// Replaces a sent message's text (and removes its buttons).
    async fn edit(&self, sent: &Sent, text: &str) -> Result<(), PlatformError>;
    /// Acknowledges a button press, with a short note to the presser.
    async fn acknowledge(&self, press: &str, note: &str) -> Result<(), PlatformError>;
}
