//! An approval shown with buttons in a chat, kept from before its message is sent: the owner may
//! press before the platform has answered the send.

use crate::Sent;
use std::collections::HashMap;
use std::sync::Mutex;

/// An approval shown with buttons: its message once the platform has answered the send, what it
/// asked, and the answer when the owner pressed before that.
pub(super) struct Shown {
    pub(super) sent: Option<Sent>,
    pub(super) asked: String,
    pub(super) answer: Option<String>,
}

impl Shown {
    /// Waiting, its message on its way.
    pub(super) fn new(asked: String) -> Self {
        Self { sent: None, asked, answer: None }
    }
}

/// The platform answered the send of approval `id`'s message `m`: kept to be marked at the
/// press, or, when it was pressed already, the message and its marked text to show now.
pub(super) fn sent(approvals: &Mutex<HashMap<String, Shown>>, id: &str, m: Sent) -> Option<(Sent, String)> {
    let mut approvals = approvals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let shown = approvals.get_mut(id)?;
    match shown.answer.take() {
        None => {
            shown.sent = Some(m);
            None
        }
        Some(note) => {
            let asked = approvals.remove(id).map(|s| s.asked).unwrap_or_default();
            Some((m, format!("{asked}\n→ {note}")))
        }
    }
}
