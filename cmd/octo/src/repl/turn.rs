//! One turn in the REPL: streamed rendering, spinner, inline approvals and questions, Ctrl-C.

use super::editor::{paint, read_line, Ed};
use crate::out;
use octo_app::{AgentEvent, Session};
use std::io::Write;
use tokio::sync::broadcast::error::RecvError;

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
pub(super) async fn turn(
    session: &Session,
    mut ed: Ed,
    message: String,
    show_thinking: bool,
) -> anyhow::Result<Ed> {
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
        // Anything printed on stderr starts on a line of its own, after the answer's styles are
        // closed, so a half-streamed line never lends its bold or color to it.
        let prints = match &event {
            AgentEvent::ThinkingDelta { .. } => show_thinking,
            AgentEvent::ToolCallStart { .. }
            | AgentEvent::ToolCallEnd { .. }
            | AgentEvent::ApprovalRequired { .. }
            | AgentEvent::QuestionAsked { .. }
            | AgentEvent::Retry { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::CompactionStart { .. }
            | AgentEvent::CompactionEnd { .. }
            | AgentEvent::Error { .. } => true,
            _ => false,
        };
        if prints && !at_line_start {
            md.finish(&mut stdout);
        }
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
