//! Approvals between turns: a background sub-agent that needs a yes after its parent's turn has
//! ended asks here. The question is printed above the prompt (what is being typed stays) and
//! waits for `/allow`, `/allow always` or `/deny [why]`, which answer the oldest waiting one.
//! During a turn the turn itself asks, as for any call.

use crate::sanitize::visible;
use octo_app::{AgentEvent, Session};
use rustyline::ExternalPrinter;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// Somewhere to print above the prompt (`None`: plain stderr).
type Printer = Arc<Mutex<Option<Box<dyn ExternalPrinter + Send>>>>;

/// The approvals waiting for an answer, and the watcher that collects them.
pub(super) struct Between {
    pending: Arc<Mutex<VecDeque<(String, String)>>>,
    printer: Printer,
    watcher: Option<tokio::task::JoinHandle<()>>,
}

impl Between {
    /// Watches `session`, printing through `printer` when there is one.
    pub(super) fn new(session: &Session, printer: Option<Box<dyn ExternalPrinter + Send>>) -> Self {
        let mut b = Self { pending: Arc::default(), printer: Arc::new(Mutex::new(printer)), watcher: None };
        b.watch(session);
        b
    }

    /// Watches `session` from now on (after `/resume` switched sessions).
    pub(super) fn watch(&mut self, session: &Session) {
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).clear();
        let mut rx = session.subscribe();
        let (pending, printer) = (Arc::clone(&self.pending), Arc::clone(&self.printer));
        self.watcher = Some(tokio::spawn(async move {
            let mut in_turn = false;
            loop {
                let event = match rx.recv().await {
                    Ok(e) => e,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                match event {
                    AgentEvent::TurnStart { .. } => in_turn = true,
                    AgentEvent::TurnEnd { .. } => in_turn = false,
                    AgentEvent::ApprovalRequired { approval_id, request } if !in_turn => {
                        let reason = request.reason.map(|r| format!(" ({r})")).unwrap_or_default();
                        let text = visible(&format!("{}{reason}", request.summary));
                        say(&printer, &format!(
                            "octo: waiting for you: {text}\n      answer with /allow, /allow always or /deny [why]"
                        ));
                        pending.lock().unwrap_or_else(PoisonError::into_inner).push_back((approval_id, text));
                    }
                    AgentEvent::ApprovalResolved { approval_id, .. } => {
                        pending
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .retain(|(id, _)| *id != approval_id);
                    }
                    _ => {}
                }
            }
        }));
    }

    /// Answers the oldest waiting approval when `line` is `/allow [always]` or `/deny [why]`;
    /// what to tell the user (`None`: the line is something else).
    pub(super) fn answer(&self, session: &Session, line: &str) -> Option<String> {
        let line = line.trim();
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if word != "/allow" && word != "/deny" {
            return None;
        }
        if word == "/allow" && !rest.is_empty() && rest != "always" {
            return Some(format!("`/allow {rest}`: say /allow or /allow always"));
        }
        let Some((id, what)) = self.pending.lock().unwrap_or_else(PoisonError::into_inner).pop_front() else {
            return Some("nothing is waiting for an answer".to_owned());
        };
        let done = match (word, rest) {
            ("/allow", "always") => session.approvals().approve_always(&id),
            ("/allow", _) => session.approvals().approve(&id),
            (_, why) => session.approvals().reject(&id, (!why.is_empty()).then(|| why.to_owned())),
        };
        Some(match done {
            Ok(()) if word == "/allow" => format!("allowed: {what}"),
            Ok(()) => format!("denied: {what}"),
            Err(_) => format!("{what}: no longer waiting (it ended or was answered)"),
        })
    }
}

impl Drop for Between {
    fn drop(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
    }
}

/// Prints `text` above the prompt, or on stderr.
fn say(printer: &Printer, text: &str) {
    let mut p = printer.lock().unwrap_or_else(PoisonError::into_inner);
    let printed = p.as_mut().is_some_and(|p| p.print(format!("{text}\n")).is_ok());
    if !printed {
        crate::out::status(text);
    }
}
