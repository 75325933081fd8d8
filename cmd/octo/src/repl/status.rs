//! The status line under the prompt: octo's own (model, context, cost, mode, branch, what runs in
//! the background) or the first line of the user's `statusLine` command. It is drawn by the
//! line editor as a hint below the input, so it is redrawn with the line and left out of the
//! scrollback when the line is accepted; it shows only at the main prompt. A command runs at
//! most every 300 ms and is waited for at most that long: a slower one shows its line when it
//! is done, a hanging one is stopped at its time limit, and input is never held up.

use octo_app::config::StatusLine;
use octo_app::Session;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often a command runs at most, and how long a prompt waits for it.
const EVERY: Duration = Duration::from_millis(300);

/// What the editor shows: the text, and whether it is shown now.
#[derive(Debug, Default)]
pub(super) struct Shown {
    text: Mutex<String>,
    on: AtomicBool,
}

impl Shown {
    /// The line to draw under the input, when one is shown now.
    pub(super) fn line(&self) -> Option<String> {
        if !self.on.load(Ordering::SeqCst) {
            return None;
        }
        let text = self.text.lock().unwrap_or_else(PoisonError::into_inner).clone();
        (!text.is_empty()).then_some(text)
    }

    fn set(&self, text: String) {
        let width = crate::layout::width().unwrap_or(80).saturating_sub(1);
        *self.text.lock().unwrap_or_else(PoisonError::into_inner) = cut(&text, width);
    }
}

/// `text` on one row of `width` columns (cut with `…`).
fn cut(text: &str, width: usize) -> String {
    if textwrap::core::display_width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    for c in text.chars() {
        if textwrap::core::display_width(&out) + 2 > width {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// The status line of a REPL.
pub(super) struct Status {
    shown: Arc<Shown>,
    last_run: Option<Instant>,
}

impl Status {
    pub(super) fn new(shown: Arc<Shown>) -> Self {
        Self { shown, last_run: None }
    }

    /// Before the main prompt: the line brought up to date (a command waited for at most
    /// [`EVERY`]) and shown.
    pub(super) async fn before_prompt(&mut self, session: &Session) {
        match octo_app::status_line::setting(session) {
            StatusLine::Off => self.shown.set(String::new()),
            StatusLine::Template(t) => self.shown.set(octo_app::status_line::text(session, &t)),
            StatusLine::Command { command, from } => self.run(session, command, from).await,
        }
        self.shown.on.store(true, Ordering::SeqCst);
    }

    /// After it: hidden (other questions have no status line).
    pub(super) fn after_prompt(&self) {
        self.shown.on.store(false, Ordering::SeqCst);
    }

    async fn run(&mut self, session: &Session, command: String, from: String) {
        if self.last_run.is_some_and(|t| t.elapsed() < EVERY) {
            return;
        }
        self.last_run = Some(Instant::now());
        let input = octo_app::status_line::input(session);
        let cwd = session.workspace().to_path_buf();
        let shown = Arc::clone(&self.shown);
        let task = tokio::spawn(async move {
            match octo_app::status_line::run_command(&command, &cwd, &input).await {
                Ok(line) => shown.set(line),
                Err(why) => shown.set(format!("status line {why} (from {from})")),
            }
        });
        // Waited for briefly; a slower command's line appears when it is done.
        let _ = tokio::time::timeout(EVERY, task).await;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_line_is_cut_to_one_row() {
        assert_eq!(super::cut("mock:m · 3% context", 40), "mock:m · 3% context");
        let cut = super::cut(&"x".repeat(500), 20);
        assert_eq!(textwrap::core::display_width(&cut), 20);
        assert!(cut.ends_with('…'));
    }
}
