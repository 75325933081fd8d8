//! Saving a session as it goes: each committed round is appended (and synced) to the session
//! file, which is created at the first round so idle starts leave no empty files.

use octo_agent::{Message, Role};
use octo_session::{title_from_prompt, Record, SessionStore, SessionWriter};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The persistence state owned by a session's task.
pub(crate) struct Persist {
    pub store: SessionStore,
    pub writer: Option<SessionWriter>,
    pub cwd: PathBuf,
    pub endpoint: String,
    pub model: String,
    pub failed: bool,
    pub titled: bool,
    pub id: Arc<Mutex<Option<String>>>,
    /// The id the session file is created under, when a front end chose it.
    pub want_id: Option<String>,
}

impl Persist {
    fn set_id(&self, id: Option<String>) {
        *self.id.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = id;
    }

    /// Opens the session file if there is none yet; `false` (with a notice, once) when saving
    /// has stopped working.
    fn ensure_writer(&mut self) -> Result<(), Option<String>> {
        if self.failed {
            return Err(None);
        }
        if self.writer.is_some() {
            return Ok(());
        }
        let created = match self.want_id.take() {
            Some(id) => self.store.create_with_id(&id, &self.cwd, &self.endpoint, &self.model, None),
            None => self.store.create(&self.cwd, &self.endpoint, &self.model, None),
        };
        match created {
            Ok(w) => {
                self.set_id(Some(w.id().to_owned()));
                self.writer = Some(w);
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(Some(format!("could not save this session ({e}); the conversation goes on unsaved")))
            }
        }
    }

    /// Records the message a turn starts on, before anything of the turn is committed, so a crash
    /// cannot lose it. Returns a notice when saving stops working.
    pub(crate) fn pending(&mut self, message: &Message) -> Option<String> {
        if let Err(notice) = self.ensure_writer() {
            return notice;
        }
        let w = self.writer.as_mut()?;
        if !self.titled {
            // Until a round is committed (and titles it for good), the prompt names the session.
            let _ = w.record(&Record::Title {
                title: title_from_prompt(&typed_text(message).unwrap_or_default()),
            });
        }
        w.pending(message).err().map(|e| {
            self.failed = true;
            format!("could not save this session any more ({e}); the conversation goes on unsaved")
        })
    }

    /// Records the end of a turn: what the session has spent so far, and, when the turn failed
    /// or was cancelled before its input was committed, that it rolled back.
    pub(crate) fn turn_ended(
        &mut self,
        (usage, cost_usd): (octo_agent::Usage, Option<f64>),
        reason: octo_agent::TurnEndReason,
        input_committed: bool,
    ) {
        self.spent(usage, cost_usd);
        let why = match reason {
            octo_agent::TurnEndReason::Cancelled => "cancelled",
            octo_agent::TurnEndReason::Failed => "failed",
            _ => return,
        };
        if !input_committed {
            self.rolled_back(why);
        }
    }

    /// Records that the pending message's turn ended without a committed round.
    pub(crate) fn rolled_back(&mut self, reason: &str) {
        if let (Some(w), false) = (self.writer.as_mut(), self.failed) {
            let _ = w.rolled_back(reason);
        }
    }

    /// Saves a committed round. Returns a notice for the user when saving stops working (once),
    /// and the first prompt when the session just got its first one (for a title).
    pub(crate) fn committed(&mut self, messages: &[Message]) -> (Option<String>, Option<String>) {
        if let Err(notice) = self.ensure_writer() {
            return (notice, None);
        }
        let Some(w) = self.writer.as_mut() else { return (None, None) };
        if let Err(e) = w.append(messages) {
            self.failed = true;
            return (
                Some(format!("could not save this session any more ({e}); the conversation goes on unsaved")),
                None,
            );
        }
        if self.titled {
            return (None, None);
        }
        let prompt = messages.iter().filter(|m| m.role == Role::User).find_map(typed_text);
        match prompt {
            Some(p) => {
                self.titled = true;
                let _ = w.record(&Record::Title { title: title_from_prompt(&p) });
                (None, Some(p))
            }
            None => (None, None),
        }
    }

    /// Records a rewritten history (compaction) as the new base.
    pub(crate) fn replaced(&mut self, messages: &[Message]) {
        if let Some(w) = self.writer.as_mut() {
            let _ = w.record(&Record::Reset { messages: messages.to_vec() });
        }
    }

    /// Records a better title (from the model).
    pub(crate) fn set_title(&mut self, title: &str) {
        if let Some(w) = self.writer.as_mut() {
            let _ = w.record(&Record::Title { title: title.to_owned() });
        }
    }

    /// Records what the session has spent so far (after a turn).
    pub(crate) fn spent(&mut self, usage: octo_agent::Usage, cost_usd: Option<f64>) {
        if let Some(w) = self.writer.as_mut() {
            let _ = w.record(&Record::Spent { usage, cost_usd });
        }
    }

    /// Records a model switch.
    pub(crate) fn model_changed(&mut self, label: &str) {
        let (endpoint, model) = label.split_once(':').unwrap_or((label, ""));
        self.endpoint = endpoint.to_owned();
        self.model = model.to_owned();
        if let Some(w) = self.writer.as_mut() {
            let _ = w.record(&Record::Model { endpoint: self.endpoint.clone(), model: self.model.clone() });
        }
    }

    /// Starts a fresh session file at the next round.
    pub(crate) fn reset(&mut self) {
        self.writer = None;
        self.titled = false;
        self.set_id(None);
    }
}

/// What the user typed in a message: its first text block. The blocks octo adds after it
/// (memory updates, hook context) are not the user's words and stay out of titles.
fn typed_text(m: &Message) -> Option<String> {
    m.content.iter().find_map(|b| match b {
        octo_agent::ContentBlock::Text { text } if !text.trim().is_empty() => Some(text.clone()),
        _ => None,
    })
}

/// The prompt that asks the model for a title.
pub(crate) fn title_request(first_prompt: &str) -> String {
    let excerpt: String = first_prompt.chars().take(1_000).collect();
    format!(
        "Write a title of at most six words for a coding conversation that starts with the request below. \
         Reply with the title only, no quotes.\n\n{excerpt}"
    )
}

/// Cleans a model's title answer: first line, no quotes, at most 60 characters.
pub(crate) fn clean_title(answer: &str) -> Option<String> {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
    let t = line.trim_matches(|c| c == '"' || c == '\'' || c == '*' || c == '#').trim();
    (!t.is_empty()).then(|| t.chars().take(60).collect())
}

/// Keeps folded messages as a Markdown transcript in `dir`, so the summary can point at them.
pub(crate) struct FileArchiver {
    pub dir: PathBuf,
}

impl octo_agent::context::Archiver for FileArchiver {
    fn archive(&self, folded: &[Message]) -> Option<PathBuf> {
        octo_session::private::create_dir(&self.dir).ok()?;
        use std::io::Write;
        let text = format!("# Folded conversation\n\n{}", octo_agent::context::transcript(folded));
        // Two compactions within a second get their own files: never overwrite an archive.
        let stamp = octo_session::now();
        let name =
            |n: u32| if n == 0 { format!("{stamp}-folded.md") } else { format!("{stamp}-{n}-folded.md") };
        let (path, mut f) = octo_session::private::create_first_free(&self.dir, name, 100)?;
        f.write_all(text.as_bytes()).ok().map(|()| path)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use octo_agent::context::Archiver;

    #[test]
    fn archives_in_the_same_second_do_not_overwrite_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileArchiver { dir: dir.path().join("archive") };
        let first = a.archive(&[Message::user("first fold")]).unwrap();
        let second = a.archive(&[Message::user("second fold")]).unwrap();
        assert_ne!(first, second);
        assert!(std::fs::read_to_string(first).unwrap().contains("first fold"));
        assert!(std::fs::read_to_string(second).unwrap().contains("second fold"));
    }

    #[test]
    fn a_title_comes_from_what_the_user_typed_not_what_octo_added() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = Persist {
            store: SessionStore::new(dir.path().join("sessions")),
            writer: None,
            cwd: dir.path().to_path_buf(),
            endpoint: "e".into(),
            model: "m".into(),
            failed: false,
            titled: false,
            id: Arc::default(),
            want_id: Some("chosen-by-the-front-end".into()),
        };
        let mut prompt = Message::user("fix the parser");
        prompt
            .content
            .push(octo_agent::ContentBlock::text("<memory-update>\nthe user likes tabs\n</memory-update>"));
        prompt.content.push(octo_agent::ContentBlock::text(
            "<user-prompt-submit-hook>\nbranch main\n</user-prompt-submit-hook>",
        ));
        let (_, first) = p.committed(&[prompt, Message::assistant("Done.")]);
        assert_eq!(first.as_deref(), Some("fix the parser"));
        assert_eq!(p.writer.as_ref().map(|w| w.id().to_owned()).as_deref(), Some("chosen-by-the-front-end"));
    }

    #[test]
    fn titles_are_cleaned() {
        assert_eq!(clean_title("\n\"Fix the parser\"\nmore").as_deref(), Some("Fix the parser"));
        assert_eq!(clean_title("  \n "), None);
    }
}
