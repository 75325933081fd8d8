//! The interactive REPL: a line editor with history and completion, streamed answers, inline
//! approvals, slash commands, Ctrl-C to cancel a turn and Ctrl-D to leave.

use crate::cli::Cli;
use crate::oneshot::{find_session, session_store, start, start_with, store};
use crate::{out, EXIT_USAGE};
use octo_app::config::{octo_home, process_env};
use octo_app::{AgentEvent, Mode, Session};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tokio::sync::broadcast::error::RecvError;

const PROMPT: &str = "octo> ";
const MORE: &str = "   .. ";

/// Slash commands and what they do, for /help and completion.
const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/model", "show the model, or switch: /model endpoint:model (the conversation is kept)"),
    ("/mode", "show the permission mode, or switch: /mode default|accept-edits|plan|auto"),
    ("/plan", "plan mode: read-only tools only"),
    ("/build", "leave plan mode"),
    ("/permissions", "the mode and the permission rules"),
    ("/tools", "the tools the model can call"),
    ("/cost", "tokens and cost so far"),
    ("/compact", "compact the conversation now: /compact [what to focus the summary on]"),
    ("/history", "this directory's saved sessions"),
    ("/resume", "continue a saved session: /resume [N | id prefix | title words]"),
    ("/clear", "forget the conversation (also /new)"),
    ("/new", "start a fresh conversation"),
    ("/exit", "leave (also /quit, Ctrl-D)"),
    ("/quit", "leave"),
];

struct OctoHelper {
    workspace: PathBuf,
}

impl Completer for OctoHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        if before.starts_with('/') && !before.contains(' ') {
            let c = COMMANDS
                .iter()
                .filter(|(c, _)| c.starts_with(before))
                .map(|(c, _)| Pair { display: (*c).to_owned(), replacement: format!("{c} ") })
                .collect();
            return Ok((0, c));
        }
        // The byte after the last whitespace character (which may be several bytes long).
        let start =
            before.char_indices().rev().find(|(_, c)| c.is_whitespace()).map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let Some(partial) = word.strip_prefix('@') else { return Ok((pos, Vec::new())) };
        let (dir, name) = match partial.rfind('/') {
            Some(i) => (&partial[..=i], &partial[i + 1..]),
            None => ("", partial),
        };
        let mut out = Vec::new();
        if let Ok(entries) = std::fs::read_dir(self.workspace.join(dir)) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(name) && !n.starts_with('.') {
                    let slash = if e.file_type().is_ok_and(|t| t.is_dir()) { "/" } else { "" };
                    out.push(Pair {
                        display: format!("{n}{slash}"),
                        replacement: format!("@{dir}{n}{slash}"),
                    });
                }
            }
        }
        out.sort_by(|a, b| a.display.cmp(&b.display));
        Ok((start, out))
    }
}

impl Hinter for OctoHelper {
    type Hint = String;
}
impl Highlighter for OctoHelper {}
impl Validator for OctoHelper {}
impl Helper for OctoHelper {}

type Ed = Editor<OctoHelper, DefaultHistory>;

/// Reads a line on a blocking thread (the editor moves there and back).
async fn read_line(mut ed: Ed, prompt: &'static str) -> (Ed, Result<String, ReadlineError>) {
    match tokio::task::spawn_blocking(move || {
        let r = ed.readline(prompt);
        (ed, r)
    })
    .await
    {
        Ok(pair) => pair,
        Err(e) => {
            // The blocking task itself failed: nothing sensible remains but to stop.
            out::error(&format!("the line editor failed: {e}"));
            std::process::exit(1)
        }
    }
}

fn paint(code: &str, text: &str) -> String {
    if std::env::var_os("NO_COLOR").is_some() {
        text.to_owned()
    } else {
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

/// Replaces `@path` mentions with the file's content attached after the message.
fn expand_mentions(line: &str, workspace: &std::path::Path) -> String {
    let mut attached = String::new();
    for word in line.split_whitespace() {
        let Some(path) = word.strip_prefix('@').filter(|p| !p.is_empty()) else { continue };
        let full = workspace.join(path);
        match std::fs::read_to_string(&full) {
            Ok(text) => {
                let text: String = text.chars().take(100_000).collect();
                attached.push_str(&format!("\n\n<file path=\"{path}\">\n{text}\n</file>"));
            }
            Err(e) if full.exists() => out::status(&format!("octo: could not attach {path}: {e}")),
            Err(_) => {}
        }
    }
    format!("{line}{attached}")
}

/// Runs the REPL until /exit, Ctrl-D or a second Ctrl-C on an empty line.
pub async fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let mut session = match start(cli, false) {
        Ok(s) => s,
        Err((_, msg)) if msg.contains("in use by another octo process") => {
            out::error(&msg);
            out::status("octo: starting a new session instead");
            let fresh = Cli { continue_session: None, ..cli.clone() };
            match start(&fresh, false) {
                Ok(s) => s,
                Err((code, msg)) => {
                    out::error(&msg);
                    return Ok(ExitCode::from(code));
                }
            }
        }
        Err((code, msg)) => {
            out::error(&msg);
            return Ok(ExitCode::from(code));
        }
    };
    if cli.continue_session.is_some() {
        let n = session.history().await.map(|h| h.len()).unwrap_or(0);
        out::status(&format!(
            "octo: continuing session {} ({n} messages)",
            session.session_id().unwrap_or_default()
        ));
    }
    let workspace = crate::oneshot::workspace(cli).map_err(|e| anyhow::anyhow!(e))?;
    for n in session.notes() {
        out::status(&format!("octo: note: {n}"));
    }
    let st = session.status();
    out::status(&format!(
        "octo {} · {} · {} mode · /help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION"),
        st.model,
        st.mode
    ));
    let config = rustyline::Config::builder().auto_add_history(false).max_history_size(2000)?.build();
    let mut ed: Ed = Editor::with_config(config)?;
    ed.set_helper(Some(OctoHelper { workspace: workspace.clone() }));
    let history = octo_home().join("history");
    let _ = ed.load_history(&history);
    let mut last_was_interrupt = false;
    loop {
        let (e, line) = read_line(ed, PROMPT).await;
        ed = e;
        let mut line = match line {
            Ok(l) => {
                last_was_interrupt = false;
                l
            }
            Err(ReadlineError::Interrupted) => {
                if last_was_interrupt {
                    break;
                }
                last_was_interrupt = true;
                out::status("(press Ctrl-C again on an empty line, or Ctrl-D, to leave)");
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                out::error(&format!("reading input failed: {e}"));
                return Ok(ExitCode::from(EXIT_USAGE));
            }
        };
        // A trailing backslash continues the message on the next line.
        while line.ends_with('\\') {
            line.pop();
            line.push('\n');
            let (e, more) = read_line(ed, MORE).await;
            ed = e;
            match more {
                Ok(m) => line.push_str(&m),
                Err(_) => break,
            }
        }
        if line.trim().is_empty() {
            continue;
        }
        let _ = ed.add_history_entry(line.as_str());
        if let Some(parent) = history.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = ed.save_history(&history);
        if let Some(arg) = line.trim().strip_prefix("/compact") {
            let focus = Some(arg.trim().to_owned()).filter(|a| !a.is_empty());
            compact(&session, focus).await;
            continue;
        }
        if line.trim() == "/history" {
            history_list(&session, &workspace);
            continue;
        }
        if let Some(q) = line.trim().strip_prefix("/resume") {
            let (e, picked) = pick_session(ed, q.trim(), &workspace).await;
            ed = e;
            if let Some(id) = picked {
                match start_with(cli, false, Some(id.clone())) {
                    Ok(s) => {
                        drop(std::mem::replace(&mut session, s));
                        let n = session.history().await.map(|h| h.len()).unwrap_or(0);
                        out::status(&format!("octo: resumed session {id} ({n} messages)"));
                    }
                    Err((_, msg)) => out::error(&msg),
                }
            }
            continue;
        }
        if line.starts_with('/') {
            match slash(&session, line.trim()) {
                Slash::Handled => continue,
                Slash::Exit => break,
                Slash::NotACommand => {}
            }
        }
        let message = expand_mentions(&line, &workspace);
        ed = turn(&session, ed, message, cli.show_thinking).await?;
        if cli.verbose {
            let s = session.status();
            let cost = s.cost_usd.map(|c| format!(" · ${c:.4} so far")).unwrap_or_default();
            out::status(&paint(
                "2",
                &format!(
                    "{} · {} in / {} out tokens ({} cached){cost}",
                    s.model,
                    s.usage.input_tokens + s.usage.cache_write_tokens,
                    s.usage.output_tokens,
                    s.usage.cache_read_tokens
                ),
            ));
        }
    }
    let _ = ed.save_history(&history);
    Ok(ExitCode::SUCCESS)
}

/// `/compact [focus]`: compacts now and reports the result.
async fn compact(session: &Session, focus: Option<String>) {
    let mut rx = session.subscribe();
    if let Err(e) = session.compact(focus) {
        out::error(&e.to_string());
        return;
    }
    out::status(&paint("2", "  compacting the conversation…"));
    loop {
        match tokio::time::timeout(std::time::Duration::from_secs(300), rx.recv()).await {
            Ok(Ok(AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, archive })) => {
                let archived = archive.map(|a| format!("; folded messages saved to {a}")).unwrap_or_default();
                out::status(&format!(
                    "  compacted: ~{tokens_after} tokens, {messages_folded} messages summarized, {reclaimed} old outputs dropped{archived}"
                ));
                return;
            }
            Ok(Ok(AgentEvent::Notice { message })) => out::status(&paint("2", &format!("  {message}"))),
            Ok(Ok(_)) | Ok(Err(RecvError::Lagged(_))) => {}
            Ok(Err(RecvError::Closed)) | Err(_) => return,
        }
    }
}

/// `/history`: this directory's saved sessions, newest first.
fn history_list(session: &Session, workspace: &std::path::Path) {
    let now = octo_app::sessions::now();
    match session_store().list(Some(workspace)) {
        Ok(list) if list.is_empty() => out::status("no saved sessions in this directory yet"),
        Ok(list) => {
            let current = session.session_id();
            for (i, s) in list.iter().enumerate() {
                let mark = if current.as_deref() == Some(s.id.as_str()) { "*" } else { " " };
                out::status(&format!("{mark}{:>3}. {}", i + 1, s.line(now)));
            }
            out::status("(/resume N, an id prefix or title words to continue one)");
        }
        Err(e) => out::error(&e.to_string()),
    }
}

/// `/resume [query]`: a number from `/history`, an id prefix or title words; without one, the
/// list is shown and a number asked for.
async fn pick_session(mut ed: Ed, query: &str, workspace: &std::path::Path) -> (Ed, Option<String>) {
    let list = session_store().list(Some(workspace)).unwrap_or_default();
    let mut query = query.to_owned();
    if query.is_empty() {
        if list.is_empty() {
            out::status("no saved sessions in this directory yet");
            return (ed, None);
        }
        let now = octo_app::sessions::now();
        for (i, s) in list.iter().enumerate().take(20) {
            out::status(&format!("{:>3}. {}", i + 1, s.line(now)));
        }
        let (e, answer) = read_line(ed, "  resume which? ").await;
        ed = e;
        query = answer.unwrap_or_default().trim().to_owned();
        if query.is_empty() {
            return (ed, None);
        }
    }
    if let Some(s) = query.parse::<usize>().ok().and_then(|n| list.get(n.wrapping_sub(1))) {
        return (ed, Some(s.id.clone()));
    }
    match find_session(&query, workspace) {
        Ok(id) => (ed, Some(id)),
        Err((_, msg)) => {
            out::error(&msg);
            (ed, None)
        }
    }
}

enum Slash {
    Handled,
    Exit,
    NotACommand,
}

fn slash(session: &Session, line: &str) -> Slash {
    let (cmd, arg) = match line.split_once(char::is_whitespace) {
        Some((c, a)) => (c, a.trim()),
        None => (line, ""),
    };
    match cmd {
        "/help" => {
            for (c, what) in COMMANDS {
                out::status(&format!("  {c:<13} {what}"));
            }
            out::status("  @path        attach a file's content to your message\n  a line ending in \\ continues on the next line; Ctrl-C cancels a running turn");
        }
        "/model" if arg.is_empty() => out::status(&format!("model: {}", session.status().model)),
        "/model" => match session.set_model(arg, store().as_ref(), &process_env) {
            Ok(label) => out::status(&format!("model: {label} (the conversation is kept)")),
            Err(e) => out::error(&e.to_string()),
        },
        "/mode" if arg.is_empty() => out::status(&format!("permission mode: {}", session.status().mode)),
        "/mode" => match arg.parse::<Mode>() {
            Ok(m) => {
                session.set_mode(m);
                out::status(&format!("permission mode: {m}"));
            }
            Err(e) => out::error(&e),
        },
        "/plan" => {
            session.set_mode(Mode::Plan);
            out::status("plan mode: read-only tools only; /build to leave");
        }
        "/build" => {
            let configured = session.config().map(|c| c.permission_mode.value).unwrap_or_default();
            let m = if configured == Mode::Plan { Mode::Default } else { configured };
            session.set_mode(m);
            out::status(&format!("permission mode: {m}"));
        }
        "/permissions" => {
            out::status(&format!("permission mode: {}", session.status().mode));
            match session.config().map(|c| c.rules.describe()).filter(|r| !r.is_empty()) {
                Some(r) => out::status(r.trim_end()),
                None => out::status("no permission rules (add them under [permissions] in config.toml)"),
            }
        }
        "/tools" => out::status(&session.tool_names().join(", ")),
        "/cost" => {
            let s = session.status();
            let cost = s.cost_usd.map(|c| format!("${c:.4}")).unwrap_or_else(|| "unknown price".into());
            out::status(&format!(
                "{} turns · {} input, {} output, {} cache read, {} cache write tokens · {cost}",
                s.turns,
                s.usage.input_tokens,
                s.usage.output_tokens,
                s.usage.cache_read_tokens,
                s.usage.cache_write_tokens
            ));
        }
        "/clear" | "/new" => match session.clear() {
            Ok(()) => out::status("started a fresh conversation"),
            Err(e) => out::error(&e.to_string()),
        },
        "/exit" | "/quit" => return Slash::Exit,
        _ => return Slash::NotACommand,
    }
    Slash::Handled
}

/// Clears the spinner line if one is drawn.
fn clear_spinner(drawn: &mut bool) {
    if std::mem::take(drawn) {
        let mut err = std::io::stderr();
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

const FRAMES: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Runs one turn, rendering its events; Ctrl-C cancels it.
async fn turn(session: &Session, mut ed: Ed, message: String, show_thinking: bool) -> anyhow::Result<Ed> {
    use std::io::IsTerminal;
    let mut rx = session.subscribe();
    session.prompt(message)?;
    let mut stdout = std::io::stdout();
    let color = std::env::var_os("NO_COLOR").is_none() && stdout.is_terminal();
    let mut md = crate::render::Renderer::new(color);
    let spinner = std::io::stderr().is_terminal();
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(120));
    let (mut waiting, mut drawn, mut frame) = (true, false, 0usize);
    let started = std::time::Instant::now();
    let mut tokens = 0u64;
    loop {
        let event = tokio::select! {
            e = rx.recv() => e,
            _ = tick.tick(), if waiting && spinner => {
                frame = (frame + 1) % FRAMES.len();
                let mut err = std::io::stderr();
                let _ = write!(err, "\r\x1b[K{} working {:.1}s · {tokens} tokens", FRAMES[frame], started.elapsed().as_secs_f64());
                let _ = err.flush();
                drawn = true;
                continue;
            }
            _ = tokio::signal::ctrl_c() => {
                session.abort();
                continue;
            }
        };
        if !matches!(event, Ok(AgentEvent::Usage { .. }) | Ok(AgentEvent::Committed { .. }) | Err(_)) {
            clear_spinner(&mut drawn);
        }
        let at_line_start = md.at_line_start();
        let event = match event {
            Ok(e) => e,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => anyhow::bail!("the session ended unexpectedly"),
        };
        match event {
            AgentEvent::RequestStart { .. } => waiting = true,
            AgentEvent::Usage { usage } => tokens += usage.output_tokens,
            AgentEvent::TextDelta { text } => {
                waiting = false;
                md.text(&text, &mut stdout);
            }
            AgentEvent::ThinkingDelta { text } => {
                waiting = !show_thinking;
                if show_thinking {
                    let mut err = std::io::stderr();
                    let _ = write!(err, "{}", paint("2", &text));
                    let _ = err.flush();
                }
            }
            AgentEvent::ToolCallStart { name, input, .. } => {
                waiting = false;
                if !at_line_start {
                    md.finish(&mut stdout);
                }
                let summary = input
                    .get("command")
                    .or_else(|| input.get("path"))
                    .or_else(|| input.get("pattern"))
                    .or_else(|| input.get("url"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                out::status(&paint("36", &format!("● {name} {summary}")));
            }
            AgentEvent::ToolCallEnd { name, output, is_error, duration_ms, .. } => {
                if is_error {
                    let first = output.lines().next().unwrap_or_default();
                    out::status(&paint("31", &format!("  ✗ {name}: {first}")));
                } else if matches!(name.as_str(), "write_file" | "edit_file" | "multi_edit") {
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
                } else {
                    out::status(&paint("2", &format!("  ✓ {name} ({duration_ms} ms)")));
                }
            }
            AgentEvent::ApprovalRequired { approval_id, request } => {
                waiting = false;
                if !at_line_start {
                    md.finish(&mut stdout);
                }
                out::status(&paint("33", &format!("? {} wants to run: {}", request.tool, request.summary)));
                if let Some(r) = &request.reason {
                    out::status(&format!("  ({r})"));
                }
                let (e, answer) = read_line(ed, "  allow? [y]es / [n]o / [a]lways: ").await;
                ed = e;
                let answer = answer.unwrap_or_default().trim().to_ascii_lowercase();
                let _ = match answer.as_str() {
                    "y" | "yes" => session.approve(&approval_id),
                    "a" | "always" => session.approve_always(&approval_id),
                    _ => session.reject(&approval_id, None),
                };
            }
            AgentEvent::QuestionAsked { question_id, question, options, .. } => {
                out::status(&paint("33", &format!("? {question}")));
                for (i, o) in options.iter().enumerate() {
                    out::status(&format!("  {}. {o}", i + 1));
                }
                let (e, answer) = read_line(ed, "  answer: ").await;
                ed = e;
                let mut answer = answer.unwrap_or_default().trim().to_owned();
                if let Some(o) = answer.parse::<usize>().ok().and_then(|n| options.get(n.wrapping_sub(1))) {
                    answer = o.clone();
                }
                let _ = session.answer(&question_id, &answer);
            }
            AgentEvent::Retry { attempt, max_attempts, delay_ms, reason } => {
                out::status(&paint(
                    "2",
                    &format!(
                        "  retrying in {:.1}s ({attempt}/{max_attempts}): {reason}",
                        delay_ms as f64 / 1000.0
                    ),
                ));
            }
            AgentEvent::Notice { message } => out::status(&paint("2", &format!("  {message}"))),
            AgentEvent::CompactionStart { reason, tokens_before } => {
                out::status(&paint(
                    "2",
                    &format!("  compacting the conversation ({reason}, ~{tokens_before} tokens)…"),
                ));
            }
            AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, archive } => {
                let archived = archive.map(|a| format!("; folded messages saved to {a}")).unwrap_or_default();
                out::status(&paint(
                    "2",
                    &format!("  compacted: ~{tokens_after} tokens, {messages_folded} messages summarized, {reclaimed} old outputs dropped{archived}"),
                ));
            }
            AgentEvent::Error { message, .. } => {
                if !at_line_start {
                    md.finish(&mut stdout);
                }
                out::status(&paint("31", &format!("error: {message}")));
            }
            AgentEvent::TurnEnd { .. } => {
                md.finish(&mut stdout);
                return Ok(ed);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_handles_multibyte_spaces_and_paths() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/main.rs"), "").unwrap();
        let h = OctoHelper { workspace: tmp.path().to_path_buf() };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let line = "fix\u{3000}@sr";
        let (start, c) = h.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(&line[start..], "@sr");
        assert_eq!(c[0].replacement, "@src/");
        let line = "look at\u{a0}@src/ma";
        let (_, c) = h.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(c[0].replacement, "@src/main.rs");
        let (_, c) = h.complete("/he", 3, &ctx).unwrap();
        assert_eq!(c[0].replacement, "/help ");
    }
}
