//! One chat's event pump: the session's events rendered turn after turn — a message edited as
//! the answer streams, a line per tool call, buttons for approvals, the answer split at the end.

use super::{lock, Bridge, Chat};
use crate::Sent;
use octo_app::{AgentEvent, Change, TurnFold};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::broadcast;

/// The longest approval text sent with its buttons (Slack's section limit bounds it).
const APPROVAL_TEXT: usize = 2900;

/// `text` cut to `limit` characters, marked when cut.
pub(super) fn fit(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(limit.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A session's events moved to an unbounded queue as soon as they arrive (`Err(n)`: `n` were
/// missed anyway, the process being too busy to take them); the queue ends with the session.
fn drain(
    mut events: broadcast::Receiver<AgentEvent>,
) -> (tokio::sync::mpsc::UnboundedReceiver<Result<AgentEvent, u64>>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        loop {
            let item = match events.recv().await {
                Ok(ev) => Ok(ev),
                Err(broadcast::error::RecvError::Lagged(n)) => Err(n),
                Err(broadcast::error::RecvError::Closed) => break,
            };
            if tx.send(item).is_err() {
                break;
            }
        }
    });
    (rx, task)
}

/// The answer being streamed, read from the turn's fold (so a reply that restarts mid-stream
/// replaces what it said instead of adding to it).
struct Live {
    fold: TurnFold,
    /// How much of the fold's answer was already sent as finished text (before a tool call).
    done: usize,
    /// The message being edited (a placeholder until text arrives).
    message: Option<Sent>,
    shown: String,
    last_edit: Instant,
}

impl Live {
    fn new(message: Option<Sent>) -> Self {
        Self { fold: TurnFold::new(), done: 0, message, shown: String::new(), last_edit: Instant::now() }
    }

    /// The answer since the last finished part.
    fn current(&self) -> &str {
        self.fold.answer().get(self.done..).unwrap_or_default()
    }

    /// Takes in `ev`: a new response (not a continuation) starts the answer over.
    fn push<'a>(&mut self, ev: &'a AgentEvent) -> Vec<Change<'a>> {
        let changes = self.fold.push(ev);
        if changes.iter().any(|c| matches!(c, Change::Request { continues: false }))
            || self.fold.answer().len() < self.done
        {
            self.done = 0;
        }
        changes
    }
}

impl Bridge {
    pub(super) async fn pump(
        self: Arc<Self>,
        chat: String,
        c: Arc<Chat>,
        events: broadcast::Receiver<AgentEvent>,
    ) {
        // Sending to the platform waits (a rate limit, a slow API) while the model streams on:
        // the session's events are taken off its channel as they come, so none is lost however
        // long the chat takes, and rendered from this queue.
        let (mut queue, forwarder) = drain(events);
        let mut live = Live::new(None);
        loop {
            let item = tokio::select! {
                item = queue.recv() => item,
                () = c.closed.notified() => break,
            };
            match item {
                Some(Ok(ev)) => self.render(&chat, &c, &mut live, ev).await,
                Some(Err(n)) => {
                    self.say(&chat, &format!("({n} updates were skipped: the chat fell behind)")).await;
                }
                None => break,
            }
        }
        forwarder.abort();
    }

    async fn render(&self, chat: &str, c: &Chat, live: &mut Live, ev: AgentEvent) {
        for change in live.push(&ev) {
            match change {
                Change::Started => *live = Live::new(self.platform.send(chat, "…", &[]).await.ok()),
                Change::AnswerDelta(_) | Change::AnswerRestarted { .. } => self.stream(chat, live).await,
                Change::ToolStarted { name, summary, .. } => self.tool_line(chat, live, name, summary).await,
                Change::Approval { id, request } => {
                    self.approval(chat, c, id.to_owned(), request.clone()).await;
                }
                Change::Question { id, question, options, .. } => {
                    *lock(&c.question) = Some(id.to_owned());
                    let opts = if options.is_empty() {
                        String::new()
                    } else {
                        format!("\n({})", options.join(" / "))
                    };
                    self.say(chat, &format!("{question}{opts}")).await;
                }
                Change::Error(message) => self.say(chat, &format!("Error: {message}")).await,
                Change::Ended { .. } => self.turn_end(chat, c, live).await,
                _ => {}
            }
        }
    }

    /// The answer so far, shown by editing the live message (at most every `edit_every`).
    async fn stream(&self, chat: &str, live: &mut Live) {
        if live.current().is_empty() {
            return;
        }
        if live.message.is_none() {
            // The answer after a tool call goes to a message of its own.
            live.message = self.platform.send(chat, "…", &[]).await.ok();
        }
        if live.last_edit.elapsed() >= self.config.edit_every {
            if let Some(m) = &live.message {
                let preview = fit(live.current(), self.platform.message_limit());
                if preview != live.shown && self.platform.edit(m, &preview).await.is_ok() {
                    live.shown = preview;
                }
            }
            live.last_edit = Instant::now();
        }
    }

    /// A line for a tool call; what was said before it is finished first.
    async fn tool_line(&self, chat: &str, live: &mut Live, name: &str, summary: &str) {
        let line = fit(&format!("▸ {name} {summary}"), self.platform.message_limit());
        if live.current().is_empty() {
            // Nothing said yet: the placeholder becomes the tool's line.
            match live.message.take() {
                Some(m) if self.platform.edit(&m, &line).await.is_ok() => {}
                _ => self.say(chat, &line).await,
            }
        } else {
            // What was said so far is finished first; the answer after the tool goes to a new
            // message.
            let answer = live.current().to_owned();
            live.done = live.fold.answer().len();
            self.finish(chat, live.message.take(), &answer, &live.shown).await;
            live.shown.clear();
            self.say(chat, &line).await;
        }
    }

    /// An approval with Allow and Deny buttons; one that cannot be shown is denied.
    async fn approval(&self, chat: &str, c: &Chat, approval_id: String, request: octo_app::ApprovalRequest) {
        let limit = self.platform.message_limit();
        let why = request.reason.map(|r| format!("\n({r})")).unwrap_or_default();
        let full = format!("Allow {}?\n{}{why}", request.tool, request.summary);
        let text = if full.chars().count() <= limit.min(APPROVAL_TEXT) {
            full
        } else {
            // Too long to go with the buttons: shown whole first.
            self.say(chat, &format!("{} asks to run:\n{}{why}", request.tool, request.summary)).await;
            format!("Allow {} (above)?", request.tool)
        };
        let buttons = vec![
            ("Allow".to_owned(), format!("ok:{}:{approval_id}", c.nonce)),
            ("Deny".to_owned(), format!("no:{}:{approval_id}", c.nonce)),
        ];
        // Waiting from before the send: the owner may press before the platform answers it.
        lock(&c.approvals).insert(approval_id.clone(), super::shown::Shown::new(text.clone()));
        let sent = self.platform.send(chat, &text, &buttons).await;
        match sent {
            Ok(m) => {
                // Answered already: marked here, as the press had no message to mark.
                if let Some((m, marked)) = super::shown::sent(&c.approvals, &approval_id, m) {
                    let _ = self.platform.edit(&m, &fit(&marked, limit)).await;
                }
            }
            Err(e) => {
                lock(&c.approvals).remove(&approval_id);
                // Nobody could answer it: refused rather than left waiting.
                let why = format!("the chat could not show the approval ({e})");
                let _ = c.session.approvals().reject(&approval_id, Some(why));
                self.say(
                    chat,
                    &format!("Could not show an approval for {}, so it was denied: {e}", request.tool),
                )
                .await;
            }
        }
    }

    /// The turn is over: the answer finished (or `(done)` when it ended on a tool call).
    async fn turn_end(&self, chat: &str, c: &Chat, live: &mut Live) {
        let _ = c.pending.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        // A question the turn left unanswered is gone with it.
        lock(&c.question).take();
        lock(&c.approvals).clear();
        let answer = live.current().to_owned();
        if !answer.is_empty() || live.message.is_some() {
            let text = if answer.trim().is_empty() { "(done)".to_owned() } else { answer };
            self.finish(chat, live.message.take(), &text, &live.shown).await;
        } else {
            // The turn ended on a tool call: say it is over.
            self.say(chat, "(done)").await;
        }
        live.done = live.fold.answer().len();
    }

    /// The final text: the live message edited to the first part (unless it shows it already),
    /// the rest sent after it.
    async fn finish(&self, chat: &str, live: Option<Sent>, text: &str, shown: &str) {
        let mut parts = crate::split::split(text, self.platform.message_limit()).into_iter();
        if let Some(m) = live {
            if let Some(first) = parts.next() {
                if first != shown && self.platform.edit(&m, &first).await.is_err() {
                    let _ = self.platform.send(chat, &first, &[]).await;
                }
            }
        }
        for p in parts {
            let _ = self.platform.send(chat, &p, &[]).await;
        }
    }
}
