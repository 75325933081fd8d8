//! Button presses: approvals answered only by the session's owner, only for an approval of this
//! session that is still waiting.

use super::{lock, Bridge};
use crate::Sent;

impl Bridge {
    pub(super) async fn button(&self, chat: &str, user: &str, data: &str, press: &str) {
        // Acknowledged first: platforms want an answer to a press within seconds.
        let (note, answered) = self.press(chat, user, data);
        let _ = self.platform.acknowledge(press, &note).await;
        if let Some((m, asked)) = answered {
            let text = super::pump::fit(&format!("{asked}\n→ {note}"), self.platform.message_limit());
            let _ = self.platform.edit(&m, &text).await;
        }
    }

    /// The note for the presser, and the approval message to mark answered.
    fn press(&self, chat: &str, user: &str, data: &str) -> (String, Option<(Sent, String)>) {
        let Some(c) = lock(&self.chats).get(chat).cloned() else {
            return ("This session is gone.".into(), None);
        };
        if user != c.owner || !self.allowed(user) {
            eprintln!(
                "octo channels: {}: user {user} pressed a button of another user's session in chat {chat}",
                self.config.name
            );
            return ("Only the person who started this session can answer it.".into(), None);
        }
        let mut fields = data.splitn(3, ':');
        let (verdict, nonce, id) = (fields.next(), fields.next(), fields.next().unwrap_or(""));
        let verdict = match verdict {
            Some("ok") => true,
            Some("no") => false,
            _ => return ("Unknown button.".into(), None),
        };
        let gone = || ("This request is no longer waiting.".to_owned(), None);
        // A button of an earlier session (before /new, before a restart) answers nothing here.
        if nonce != Some(c.nonce.as_str()) {
            return gone();
        }
        // Answered under the lock, so the send's return sees either a waiting approval or its
        // answer.
        let mut approvals = lock(&c.approvals);
        let Some(shown) = approvals.get_mut(id).filter(|s| s.answer.is_none()) else { return gone() };
        let done =
            if verdict { c.session.approvals().approve(id) } else { c.session.approvals().reject(id, None) };
        if done.is_err() {
            approvals.remove(id);
            return gone();
        }
        let note = (if verdict { "Allowed" } else { "Denied" }).to_owned();
        match shown.sent.take() {
            Some(m) => {
                let asked = approvals.remove(id).map(|s| s.asked).unwrap_or_default();
                (note, Some((m, asked)))
            }
            // Its message is still on its way: marked when the send returns.
            None => {
                shown.answer = Some(note.clone());
                (note, None)
            }
        }
    }
}
