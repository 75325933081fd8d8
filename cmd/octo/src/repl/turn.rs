//! One turn in the REPL: streamed rendering, spinner, inline approvals and questions, Ctrl-C.
//!
//! [`ReplOutput`] renders events (it is the REPL's [`TurnRenderer`]); the loop here adds what only
//! an interactive terminal does: the spinner, reading answers to approvals and questions, Ctrl-C.

use super::editor::{read_line, read_line_with, Ed};
use super::key::Key;
use super::paint::{checklist, paint};
use crate::out;
use crate::output::first_line;
use crate::sanitize::{visible, Filter, Mode};
use octo_app::{AgentEvent, OutputKind, Session, ToolOutcome, TurnFold, TurnRenderer, TurnSummary};
use std::io::Write;
use tokio::sync::broadcast::error::RecvError;

/// Lines of a command's output shown under it when the config says nothing.
const DEFAULT_TAIL: usize = 4;

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Renders a turn's events on the terminal.
pub(super) struct ReplOutput {
    md: crate::render::Renderer,
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

    /// Whether anything of `event` goes to stderr (then the answer's line is finished first, so a
    /// half-streamed line never lends its bold or color to it).
    fn prints_on_stderr(&self, event: &AgentEvent) -> bool {
        match event {
            AgentEvent::ThinkingDelta { .. } => self.show_thinking,
            AgentEvent::ToolCallStart { .. }
            | AgentEvent::ToolCallEnd { .. }
            | AgentEvent::ApprovalRequired { .. }
            | AgentEvent::ToolUpdate { .. }
            | AgentEvent::QuestionAsked { .. }
            | AgentEvent::Retry { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::CompactionStart { .. }
            | AgentEvent::CompactionEnd { .. }
            | AgentEvent::Error { .. } => true,
            _ => false,
        }
    }
}

/// Prints a tool's diff output, coloured, at most 40 lines; returns whether the output is still
/// there (always, for the renderer's `event`).
fn print_diff(output: &str) -> bool {
    let output = visible(output);
    for (i, l) in output.lines().enumerate() {
        if i >= 40 {
            out::status(&format!("  … {} more lines", output.lines().count() - 40));
            break;
        }
        let colored = if l.starts_with('+') && !l.starts_with("+++") {
            paint("32", l)
        } else if l.starts_with('-') && !l.starts_with("---") {
            paint("31", l)
        } else {
            l.to_owned()
        };
        out::status(&format!("  {colored}"));
    }
    true
}

impl TurnRenderer for ReplOutput {
    fn event(&mut self, event: &AgentEvent, _fold: &TurnFold) -> bool {
        if self.prints_on_stderr(event) && !self.md.at_line_start() {
            self.md.finish(&mut self.stdout);
        }
        match event {
            AgentEvent::RequestStart { .. } => self.wait_for("the model"),
            AgentEvent::Progress { message } => {
                if let Some((what, _)) = &mut self.awaiting {
                    *what = format!("the model, {}", visible(message));
                }
            }
            AgentEvent::Usage { usage } => self.tokens += usage.output_tokens,
            AgentEvent::TextDelta { text } => self.text(text),
            AgentEvent::ThinkingDelta { text } => self.thinking(text),
            AgentEvent::ToolCallStart { name, summary, .. } => {
                self.running.push(visible(name));
                self.wait_for_tools();
                out::status(&paint("36", &visible(&format!("● {name} {summary}"))));
            }
            AgentEvent::ToolUpdate { kind, data, .. } if kind == octo_app::subagents::PROGRESS_UPDATE => {
                subagent_progress(data);
            }
            AgentEvent::ToolUpdate { kind, data, .. } if kind == "todos" => {
                if let Ok(todos) = serde_json::from_value::<Vec<octo_app::Todo>>(data.clone()) {
                    for line in checklist(&todos) {
                        out::status(&line);
                    }
                }
            }
            AgentEvent::ApprovalResolved { .. } => self.wait_for_tools(),
            AgentEvent::ToolCallEnd { name, output, outcome, duration_ms, kind, .. } => {
                if let Some(i) = self.running.iter().position(|r| *r == visible(name)) {
                    self.running.remove(i);
                }
                self.wait_for_tools();
                tool_end(name, output, *outcome, *duration_ms, *kind, self.tail);
            }
            AgentEvent::ApprovalRequired { request, .. } => {
                self.awaiting = None;
                show_request(request);
            }
            AgentEvent::QuestionAsked { question, options, .. } => {
                out::status(&paint("33", &visible(&format!("? {question}"))));
                for (i, o) in options.iter().enumerate() {
                    out::status(&visible(&format!("  {}. {o}", i + 1)));
                }
            }
            AgentEvent::Retry { attempt, max_attempts, delay_ms, reason, restart } => {
                let what = if *restart {
                    "the reply broke off and is discarded; starting it again"
                } else {
                    "retrying"
                };
                let secs = *delay_ms as f64 / 1000.0;
                out::status(&paint(
                    "2",
                    &visible(&format!("  {what} in {secs:.1}s ({attempt}/{max_attempts}): {reason}")),
                ));
                if *restart {
                    self.wait_for("the model");
                }
            }
            AgentEvent::Notice { message } => out::status(&paint("2", &visible(&format!("  {message}")))),
            AgentEvent::CompactionStart { reason, tokens_before } => out::status(&paint(
                "2",
                &format!("  compacting the conversation ({reason}, ~{tokens_before} tokens)…"),
            )),
            AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, archive } => {
                let archived = archive
                    .as_ref()
                    .map(|a| format!("; folded messages saved to {}", visible(a)))
                    .unwrap_or_default();
                out::status(&paint(
                    "2",
                    &format!("  compacted: ~{tokens_after} tokens, {messages_folded} messages summarized, {reclaimed} old outputs dropped{archived}"),
                ));
            }
            AgentEvent::Error { message, .. } => {
                out::status(&paint("31", &visible(&format!("error: {message}"))));
            }
            _ => {}
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
        self.md.text(&safe, &mut self.stdout);
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

/// One indented line when a sub-agent starts and one when it ends; its own stream stays out of
/// the parent's.
fn subagent_progress(data: &serde_json::Value) {
    let field = |k: &str| data.get(k).and_then(serde_json::Value::as_str).unwrap_or("").to_owned();
    let calls = data.get("tool_calls").and_then(serde_json::Value::as_u64).unwrap_or(0);
    match field("event").as_str() {
        "start" => out::status(&paint(
            "2",
            &visible(&format!("  ↳ {} started: {}", field("id"), field("description"))),
        )),
        "end" => {
            let ok = data.get("ok").and_then(serde_json::Value::as_bool).unwrap_or(false);
            let how = if ok { "done" } else { "ended without an answer" };
            out::status(&paint("2", &visible(&format!("  ↳ {} {how} · {calls} tool call(s)", field("id")))));
        }
        _ => {}
    }
}

/// An approval: what the call would do (the command and where it runs, the diff of an edit, the
/// head of a new file) before the question.
fn show_request(request: &octo_app::ApprovalRequest) {
    let line = format!("? {} wants to {}: {}", request.tool, request.action, request.summary);
    out::status(&paint("33", &visible(&line)));
    if let Some(cwd) = &request.cwd {
        out::status(&paint("2", &visible(&format!("  in {cwd}"))));
    }
    if let Some(r) = &request.reason {
        out::status(&visible(&format!("  ({r})")));
    }
    if let Some(p) = &request.preview {
        match p.kind {
            OutputKind::Diff => {
                print_diff(&p.text);
            }
            _ => {
                // A command is shown whole (what is approved is what runs); a file's head is cut.
                let max = if request.editable.is_some() { usize::MAX } else { 40 };
                for l in visible(&p.text).lines().take(max) {
                    out::status(&paint("2", &format!("  {l}")));
                }
            }
        }
    }
}

/// How a tool call ended: its diff, a tick, or why it did not run.
fn tool_end(name: &str, output: &str, outcome: ToolOutcome, duration_ms: u64, kind: OutputKind, tail: usize) {
    let (body, status) = split_status(output);
    match (outcome, kind) {
        (ToolOutcome::Ran, OutputKind::Diff) => {
            print_diff(output);
            return;
        }
        // The checklist was shown when it changed.
        (ToolOutcome::Ran, OutputKind::Todos) => return,
        (ToolOutcome::Ran, _) => {
            out::status(&paint("2", &visible(&format!("  ✓ {name} ({duration_ms} ms)"))));
        }
        (ToolOutcome::Failed, _) => {
            let how = status.map_or_else(|| first_line(body, 200), str::to_owned);
            out::status(&paint("31", &visible(&format!("  ✗ {name} failed: {how} ({duration_ms} ms)"))));
        }
        (other, _) => {
            out::status(&paint("31", &visible(&format!("  ✗ {name} [{other}]: {}", first_line(body, 200)))));
            return;
        }
    }
    let (lines, sandbox) = tail_of(body, if outcome == ToolOutcome::Failed { tail.max(6) } else { tail });
    for l in &lines {
        out::status(&paint("2", &visible(&format!("    {l}"))));
    }
    if let Some(what) = sandbox {
        out::status(&paint("33", &visible(&format!(
            "    ⛔ the OS sandbox likely stopped it: {what}. The model may run it again outside the sandbox (you will be asked), or set `sandbox` in config.toml"
        ))));
    }
}

/// A command's output and its closing status line (`[exit code 1]`, `[timed out …]`).
fn split_status(output: &str) -> (&str, Option<&str>) {
    let trimmed = output.trim_end();
    match trimmed.rsplit_once('\n') {
        Some((body, last))
            if last.starts_with('[')
                && last.ends_with(']')
                && !last.starts_with("[This may be the OS sandbox") =>
        {
            (body, Some(last.trim_matches(['[', ']'])))
        }
        _ => (trimmed, None),
    }
}

/// The last `n` lines of a tool's output (what the sandbox note says taken out), and what the
/// sandbox refused when the output says it is the likely cause.
fn tail_of(body: &str, n: usize) -> (Vec<String>, Option<String>) {
    let mut sandbox = None;
    let mut lines: Vec<&str> = Vec::new();
    for l in body.lines() {
        match l.strip_prefix("[This may be the OS sandbox: ") {
            Some(rest) => sandbox = rest.split(". If").next().map(str::to_owned),
            None => lines.push(l),
        }
    }
    while lines.last().is_some_and(|l| l.trim().is_empty() || l.starts_with("[exit code")) {
        lines.pop();
    }
    if lines.first() == Some(&"(no output)") {
        lines.clear();
    }
    let skip = lines.len().saturating_sub(n);
    let mut out: Vec<String> = Vec::new();
    if skip > 0 && n > 0 {
        out.push(format!("… {skip} more lines (Ctrl-O or /expand shows them)"));
    }
    out.extend(lines[skip..].iter().map(|l| first_line(l, 200)));
    (if n == 0 { Vec::new() } else { out }, sandbox)
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
            let _ = session.reject(id, Some("the user cancelled the turn".into()));
            out::status(&paint("2", "  cancelled"));
            return ed;
        }
        (Key::Char('y'), _) => session.approve(id),
        (Key::Char('a'), _) => session.approve_always(id),
        (Key::Char('e'), Some(field)) => {
            let current = request.input.get(&field).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            let (e, edited) = read_line_with(ed, "  run instead: ", current).await;
            ed = e;
            match edited.map(|t| t.trim().to_owned()) {
                Ok(text) if !text.is_empty() => {
                    let mut input = request.input.clone();
                    input[field.as_str()] = serde_json::Value::String(text);
                    session.approve_edited(id, input)
                }
                _ => session.reject(id, Some("the user cancelled the edit".into())),
            }
        }
        _ => session.reject(id, None),
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
    session.prompt_prepared(message)?;
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
        let done = fold.push(&event);
        view.event(&event, &fold);
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
                let _ = session.answer(&question_id, &answer);
            }
            _ => {}
        }
        if done {
            let summary = session.summarize(&fold);
            view.finish(&summary);
            let notify = session.config().map(|c| c.notify).unwrap_or_default();
            announce(notify, started.elapsed());
            return Ok((ed, summary));
        }
    }
}
