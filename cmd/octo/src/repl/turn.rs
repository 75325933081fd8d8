//! One turn in the REPL: streamed rendering, spinner, inline approvals and questions, Ctrl-C.
//!
//! [`ReplOutput`] renders the fold's changes (it is the REPL's [`TurnRenderer`]); the loop here
//! adds what only an interactive terminal does: the spinner, reading answers to approvals and
//! questions, Ctrl-C. A reply that broke off mid-stream is taken off the screen before it starts
//! again ([`shown`]).

use super::editor::{read_line, read_line_with, Ed};
use super::key::Key;
use super::paint::{checklist, paint};
mod calls;
mod shown;

use crate::out;
use crate::sanitize::{visible, Filter, Mode};
use calls::{show_request, subagent_progress, tool_end};
use octo_app::{AgentEvent, Change, Session, TurnFold, TurnRenderer, TurnSummary};
use shown::Shown;
use std::io::Write;
use tokio::sync::broadcast::error::RecvError;

/// Lines of a command's output shown under it when the config says nothing.
const DEFAULT_TAIL: usize = 4;

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Renders a turn's events on the terminal.
pub(super) struct ReplOutput {
    md: crate::render::Renderer,
    /// Colour on stdout, and its width: a restarted reply gets a fresh Markdown renderer.
    color: bool,
    /// What the current request's answer put on the terminal.
    shown: Shown,
    /// The model's text and thinking come from outside: made inert before rendering.
    text: Filter,
    thinking: Filter,
    stdout: std::io::Stdout,
    show_thinking: bool,
    /// What the turn waits for (the spinner names it), and since when; `None` while text
    /// streams or a question is open.
    awaiting: Option<(String, std::time::Instant)>,
    /// The tools running now, by name.
    running: Vec<String>,
    /// Output tokens so far, for the spinner.
    tokens: u64,
    /// Lines of a command's output shown under it.
    tail: usize,
}

impl ReplOutput {
    fn new(show_thinking: bool, tail: usize) -> Self {
        use std::io::IsTerminal;
        let stdout = std::io::stdout();
        let color = std::env::var_os("NO_COLOR").is_none() && stdout.is_terminal();
        Self {
            md: crate::render::Renderer::with_width(color, crate::layout::stdout_width()),
            color,
            shown: Shown::default(),
            text: Filter::new(Mode::Visible),
            thinking: Filter::new(Mode::Visible),
            stdout,
            show_thinking,
            awaiting: Some(("the model".to_owned(), std::time::Instant::now())),
            running: Vec::new(),
            tokens: 0,
            tail,
        }
    }

    /// Whether anything of `change` goes to stderr (then the answer's line is finished first, so
    /// a half-streamed line never lends its bold or color to it).
    fn prints_on_stderr(&self, change: &Change<'_>) -> bool {
        match change {
            Change::Thinking(_) => self.show_thinking,
            Change::Approval { .. } => true,
            other => other.is_status(),
        }
    }

    /// The reply broke off: what it showed since its request began is taken off the screen
    /// (or, where that cannot be done, marked as discarded), and the Markdown starts afresh.
    fn restart(&mut self) {
        if self.shown.is_empty() {
            return;
        }
        let size =
            terminal_size::terminal_size_of(&self.stdout).map(|(w, h)| (usize::from(w.0), usize::from(h.0)));
        match size.and_then(|size| self.shown.eraser(size)) {
            Some(erase) => {
                let _ = write!(self.stdout, "{erase}");
                let _ = self.stdout.flush();
            }
            None => {
                if !self.md.at_line_start() {
                    self.md.finish(&mut self.stdout);
                }
                out::status(&paint("2", "  (the reply above broke off; it is discarded)"));
            }
        }
        self.md = crate::render::Renderer::with_width(self.color, crate::layout::stdout_width());
        self.text = Filter::new(Mode::Visible);
        self.shown.reset();
    }
}

impl TurnRenderer for ReplOutput {
    fn change(&mut self, change: &Change<'_>) -> bool {
        if self.prints_on_stderr(change) {
            if !self.md.at_line_start() {
                self.md.finish(&mut self.stdout);
            }
            self.shown.interrupted();
        }
        match change {
            Change::Request { .. } => {
                self.shown.reset();
                self.wait_for("the model");
            }
            Change::Progress(message) => {
                if let Some((what, _)) = &mut self.awaiting {
                    *what = format!("the model, {}", visible(message));
                }
            }
            Change::Usage(usage) => self.tokens += usage.output_tokens,
            Change::AnswerDelta(text) => self.text(text),
            Change::AnswerRestarted { .. } => self.restart(),
            Change::Thinking(text) => self.thinking(text),
            Change::ToolStarted { name, summary, .. } => {
                self.running.push(visible(name));
                self.wait_for_tools();
                out::status(&paint("36", &visible(&format!("● {name} {summary}"))));
            }
            Change::Subagent { progress, .. } => subagent_progress(progress),
            Change::Todos(todos) => {
                for line in checklist(todos) {
                    out::status(&line);
                }
            }
            Change::ApprovalResolved { .. } => self.wait_for_tools(),
            Change::ToolEnded { record, output, kind } => {
                if let Some(i) = self.running.iter().position(|r| *r == visible(&record.name)) {
                    self.running.remove(i);
                }
                self.wait_for_tools();
                tool_end(&record.name, output, record.outcome, record.duration_ms, *kind, self.tail);
            }
            Change::Approval { request, .. } => {
                self.awaiting = None;
                show_request(request);
            }
            Change::Question { question, options, .. } => {
                out::status(&paint("33", &visible(&format!("? {question}"))));
                for (i, o) in options.iter().enumerate() {
                    out::status(&visible(&format!("  {}. {o}", i + 1)));
                }
            }
            Change::Retry { restart, .. } => {
                notice(change);
                if *restart {
                    self.wait_for("the model");
                }
            }
            other => notice(other),
        }
        true
    }

    fn finish(&mut self, _summary: &TurnSummary) {
        let mut tail = String::new();
        self.text.finish(&mut tail);
        self.md.text(&tail, &mut self.stdout);
        self.md.finish(&mut self.stdout);
    }
}

impl ReplOutput {
    /// The spinner runs, naming `what`, from now.
    fn wait_for(&mut self, what: &str) {
        self.awaiting = Some((what.to_owned(), std::time::Instant::now()));
    }

    /// The running tools, or (none left) the model's next reply.
    fn wait_for_tools(&mut self) {
        match self.running.as_slice() {
            [] => self.wait_for("the model"),
            [one] => self.wait_for(&format!("{one} to finish")),
            [.., last] => self.wait_for(&format!("{last} and {} more to finish", self.running.len() - 1)),
        }
    }

    /// The spinner's line: what is awaited, for how long, and the answer's tokens so far.
    fn spinner_line(&self, frame: &str) -> Option<String> {
        let (what, since) = self.awaiting.as_ref()?;
        let tokens = if self.tokens > 0 { format!(" · {} tokens", self.tokens) } else { String::new() };
        Some(format!("{frame} waiting for {what} · {:.0}s{tokens}", since.elapsed().as_secs_f64().floor()))
    }

    /// Answer text, made safe and rendered as Markdown on stdout.
    fn text(&mut self, text: &str) {
        self.awaiting = None;
        let mut safe = String::with_capacity(text.len());
        self.text.push(text, &mut safe);
        let mut rendered = Vec::new();
        self.md.text(&safe, &mut rendered);
        self.shown.wrote(&rendered);
        let _ = self.stdout.write_all(&rendered);
        let _ = self.stdout.flush();
    }

    /// Thinking, dimmed on stderr when asked for (else the spinner keeps turning).
    fn thinking(&mut self, text: &str) {
        if self.show_thinking {
            self.awaiting = None;
        } else if self.awaiting.is_none() {
            self.wait_for("the model (thinking)");
        }
        if self.show_thinking {
            let mut safe = String::with_capacity(text.len());
            self.thinking.push(text, &mut safe);
            let mut err = std::io::stderr();
            let _ = write!(err, "{}", paint("2", &safe));
            let _ = err.flush();
        }
    }
}

/// A dimmed line for a retry, a notice or a compaction; an error in red.
fn notice(change: &Change<'_>) {
    let line = match change {
        Change::Retry { attempt, max_attempts, delay_ms, reason, restart } => {
            let what = if *restart { "the reply broke off; starting it again" } else { "retrying" };
            let secs = *delay_ms as f64 / 1000.0;
            visible(&format!("  {what} in {secs:.1}s ({attempt}/{max_attempts}): {reason}"))
        }
        Change::Notice(message) => visible(&format!("  {message}")),
        Change::CompactionStarted { reason, tokens_before } => {
            format!("  compacting the conversation ({reason}, ~{tokens_before} tokens)…")
        }
        Change::Compacted { tokens_after, messages_folded, reclaimed, archive } => {
            let archived =
                archive.map(|a| format!("; folded messages saved to {}", visible(a))).unwrap_or_default();
            format!("  compacted: ~{tokens_after} tokens, {messages_folded} messages summarized, {reclaimed} old outputs dropped{archived}")
        }
        Change::Error(message) => return out::status(&paint("31", &visible(&format!("error: {message}")))),
        _ => return,
    };
    out::status(&paint("2", &line));
}

/// Clears the spinner line if one is drawn.
fn clear_spinner(drawn: &mut bool) {
    if std::mem::take(drawn) {
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// Asks about one approval: yes, no, always, or (for a command) edit it first. Ctrl-C (or
/// Ctrl-D) at the question refuses the call and cancels the turn.
async fn approve(session: &Session, ed: Ed, id: &str, request: &octo_app::ApprovalRequest) -> Ed {
    let field = request.editable.clone();
    let prompt = if field.is_some() {
        "  allow? [y]es / [n]o / [a]lways / [e]dit (Esc: no) "
    } else {
        "  allow? [y]es / [n]o / [a]lways (Esc: no) "
    };
    let key = super::key::read_key(prompt).await;
    let mut ed = ed;
    let _ = match (key, field) {
        (Key::Interrupt | Key::Eof, _) => {
            // Cancel first: then no further request can start between the refusal and the
            // cancellation.
            session.abort();
            let _ = session.approvals().reject(id, Some("the user cancelled the turn".into()));
            out::status(&paint("2", "  cancelled"));
            return ed;
        }
        (Key::Char('y'), _) => session.approvals().approve(id),
        (Key::Char('a'), _) => session.approvals().approve_always(id),
        (Key::Char('e'), Some(field)) => {
            let current = request.input.get(&field).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            let (e, edited) = read_line_with(ed, "  run instead: ", current).await;
            ed = e;
            match edited.map(|t| t.trim().to_owned()) {
                Ok(text) if !text.is_empty() => {
                    let mut input = request.input.clone();
                    input[field.as_str()] = serde_json::Value::String(text);
                    session.approvals().approve_edited(id, input)
                }
                _ => session.approvals().reject(id, Some("the user cancelled the edit".into())),
            }
        }
        _ => session.approvals().reject(id, None),
    };
    ed
}

/// Says a long turn is over: the bell, or a desktop notification (OSC 9) where the terminal
/// shows one.
fn announce(notify: octo_app::config::Notify, took: std::time::Duration) {
    use octo_app::config::NotifyMethod;
    use std::io::IsTerminal;
    if took < notify.after || !std::io::stderr().is_terminal() {
        return;
    }
    let osc9_terminal = || {
        let program = std::env::var("TERM_PROGRAM").unwrap_or_default();
        matches!(program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
            || std::env::var_os("WT_SESSION").is_some()
    };
    let seq = match notify.method {
        NotifyMethod::Off => return,
        NotifyMethod::Osc9 => "\x1b]9;octo: the turn is done\x07",
        NotifyMethod::Auto if osc9_terminal() => "\x1b]9;octo: the turn is done\x07",
        NotifyMethod::Auto | NotifyMethod::Bell => "\x07",
    };
    let mut err = std::io::stderr();
    let _ = write!(err, "{seq}");
    let _ = err.flush();
}

/// Runs one turn, rendering its events; Ctrl-C cancels it.
pub(super) async fn turn(
    session: &Session,
    ed: Ed,
    message: impl Into<octo_app::skills::Prepared>,
    show_thinking: bool,
) -> anyhow::Result<Ed> {
    Ok(turn_summarized(session, ed, message.into(), show_thinking).await?.0)
}

/// [`turn`], also returning what the turn amounted to.
pub(super) async fn turn_summarized(
    session: &Session,
    mut ed: Ed,
    message: octo_app::skills::Prepared,
    show_thinking: bool,
) -> anyhow::Result<(Ed, TurnSummary)> {
    use std::io::IsTerminal;
    let mut rx = session.subscribe();
    session.prompt(message)?;
    let tail = session.config().map_or(DEFAULT_TAIL, |c| c.tool_output_lines);
    let mut view = ReplOutput::new(show_thinking, tail);
    let mut fold = TurnFold::new();
    let spinner = std::io::stderr().is_terminal();
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(120));
    let (mut drawn, mut frame) = (false, 0usize);
    let started = std::time::Instant::now();
    // What the user types while the answer streams waits for the next prompt, unseen.
    let _hold = super::key::HoldTyping::start();
    loop {
        let event = tokio::select! {
            e = rx.recv() => e,
            _ = tick.tick(), if view.awaiting.is_some() && spinner => {
                frame = (frame + 1) % FRAMES.len();
                if let Some(line) = view.spinner_line(FRAMES[frame]) {
                    let mut err = std::io::stderr();
                    let _ = write!(err, "\r\x1b[K{line}");
                    let _ = err.flush();
                    drawn = true;
                }
                continue;
            }
            _ = tokio::signal::ctrl_c() => {
                session.abort();
                continue;
            }
        };
        let quiet = matches!(
            event,
            Ok(AgentEvent::Usage { .. } | AgentEvent::Committed { .. } | AgentEvent::Progress { .. })
                | Err(_)
        );
        if !quiet {
            clear_spinner(&mut drawn);
        }
        let event = match event {
            Ok(e) => e,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => anyhow::bail!("the session ended unexpectedly"),
        };
        fold.render(&event, &mut view);
        match event {
            AgentEvent::ApprovalRequired { approval_id, request } => {
                ed = approve(session, ed, &approval_id, &request).await;
            }
            AgentEvent::QuestionAsked { question_id, options, .. } => {
                let (e, answer) = read_line(ed, "  answer: ").await;
                ed = e;
                let mut answer = answer.unwrap_or_default().trim().to_owned();
                if let Some(o) = answer.parse::<usize>().ok().and_then(|n| options.get(n.wrapping_sub(1))) {
                    answer = o.clone();
                }
                let _ = session.approvals().answer(&question_id, &answer);
            }
            _ => {}
        }
        if fold.is_done() {
            let summary = session.conversation().summarize(&fold);
            view.finish(&summary);
            let notify = session.config().map(|c| c.notify).unwrap_or_default();
            announce(notify, started.elapsed());
            return Ok((ed, summary));
        }
    }
}
