//! What a chat platform does for a bridge: deliver what users send, and send, edit, attach and
//! offer buttons back.

use std::collections::{HashSet, VecDeque};

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
        /// The platform's handle for the press (to acknowledge it).
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
    /// The credentials were refused: the channel cannot run.
    #[error("the platform refused the bot's credentials: {0}")]
    Unauthorized(String),
    /// The platform asked to slow down (already waited once).
    #[error("rate limited: {0}")]
    RateLimited(String),
    /// Anything else (network, 5xx, a dropped connection, a malformed answer).
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
    /// The largest file it takes, in bytes.
    fn file_limit(&self) -> u64;
    /// Checks the credentials; who the bot is, for the log ("@octo_bot on Telegram").
    async fn check(&self) -> Result<String, PlatformError>;
    /// Waits for what users did next (never the same event twice, none skipped when the
    /// platform keeps them across a reconnect).
    async fn poll(&self) -> Result<Vec<Incoming>, PlatformError>;
    /// Sends a message, with buttons (label, data) when given.
    async fn send(&self, chat: &str, text: &str, buttons: &[(String, String)])
        -> Result<Sent, PlatformError>;
    /// Replaces a sent message's text (and removes its buttons).
    async fn edit(&self, sent: &Sent, text: &str) -> Result<(), PlatformError>;
    /// Acknowledges a button press, with a short note to the presser.
    async fn acknowledge(&self, press: &str, note: &str) -> Result<(), PlatformError>;
    /// Sends a file as an attachment.
    async fn send_file(&self, chat: &str, name: &str, bytes: Vec<u8>) -> Result<(), PlatformError>;
}

/// Locks `m`, a poisoned lock taken as it is (its data stays consistent between statements).
/// A token unique to one message this process sends (at most 25 characters), for platforms that
/// drop a repeated send carrying the same one (Discord's `nonce`, Feishu's `uuid`): a send
/// retried after a failure whose first try did arrive is not posted twice.
pub(crate) fn send_token() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let started =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{:x}{:x}{n:x}", started & 0xff_ffff, std::process::id() & 0xffff)
}

pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A JSON string or number as text (platforms give ids as either); anything else as "".
pub(crate) fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The ids of the last events seen, to drop one a platform delivers again (a retry after a
/// reconnect, a replay on resume).
#[derive(Debug, Default)]
pub(crate) struct Seen {
    order: VecDeque<String>,
    set: HashSet<String>,
}

impl Seen {
    const KEEP: usize = 2048;

    /// Whether `id` is new (and remembers it).
    pub(crate) fn first(&mut self, id: &str) -> bool {
        if id.is_empty() {
            return true;
        }
        if !self.set.insert(id.to_owned()) {
            return false;
        }
        self.order.push_back(id.to_owned());
        if self.order.len() > Self::KEEP {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seen_drops_repeats_and_forgets_the_oldest() {
        let mut s = super::Seen::default();
        assert!(s.first("a"));
        assert!(!s.first("a"));
        for i in 0..super::Seen::KEEP {
            s.first(&i.to_string());
        }
        assert!(s.first("a"), "the oldest id is forgotten");
        assert!(s.first("") && s.first(""), "no id is never a repeat");
    }
}
