//! `--input-format stream-json`: a program drives octo over stdin and stdout, as it would drive
//! Claude Code's headless mode. Each stdin line is a JSON object:
//!
//! - `{"type":"user","message":{"role":"user","content":"…"}}` (content a string or blocks:
//!   `{"type":"text","text":…}`, `{"type":"image","source":{"type":"base64","media_type":…,"data":…}}`)
//!   — a prompt, answered in turn in one session;
//! - `{"type":"approval","approval_id":"…","decision":"allow"|"allow_always"|"deny","message":…}`
//!   — the answer to an `approval_required` event (with `--permission-prompt stdio`);
//! - `{"type":"interrupt"}` — cancels the running turn.
//!
//! Every event goes to stdout as a JSON line, and each turn ends with a `result` object (the
//! `--output-format json` one). A line that is not such JSON gets an `error` line on stdout, and
//! the session goes on. When stdin ends, octo finishes the queued turns and exits.

use crate::cli::{Cli, OutputFormat, PermissionPrompt};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::{launch, out};
use octo_app::{AgentEvent, ContentBlock, Launcher, Message, Role, Session, TurnFold};
use serde_json::{json, Value};
use std::process::ExitCode;
use std::time::Instant;
use tokio::io::AsyncBufReadExt;
use tokio::sync::broadcast::error::RecvError;

/// What one input line asks for.
#[derive(Debug, PartialEq)]
enum Input {
    Prompt(Message),
    Approval { id: String, decision: String, message: Option<String> },
    Interrupt,
}

/// Reads one input line; the error says what is wrong with it.
fn parse(line: &str) -> Result<Input, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    match v["type"].as_str() {
        Some("user") => {
            let content = &v["message"]["content"];
            let blocks = match content {
                Value::String(s) => vec![ContentBlock::text(s.clone())],
                Value::Array(items) => items.iter().map(block).collect::<Result<Vec<_>, String>>()?,
                _ => {
                    return Err(
                        "a user message needs `message.content`: a string or an array of blocks".into()
                    )
                }
            };
            if blocks.is_empty() {
                return Err("the user message is empty".into());
            }
            Ok(Input::Prompt(Message { role: Role::User, content: blocks }))
        }
        Some("approval") => {
            let id = v["approval_id"].as_str().ok_or("an approval needs `approval_id`")?.to_owned();
            let decision =
                v["decision"].as_str().ok_or("an approval needs `decision`: allow, allow_always or deny")?;
            if !matches!(decision, "allow" | "allow_always" | "deny") {
                return Err(format!("unknown decision `{decision}`: allow, allow_always or deny"));
            }
            Ok(Input::Approval {
                id,
                decision: decision.to_owned(),
                message: v["message"].as_str().map(str::to_owned),
            })
        }
        Some("interrupt") => Ok(Input::Interrupt),
        Some(other) => Err(format!("unknown message type `{other}`: user, approval or interrupt")),
        None => Err("the object has no `type`".into()),
    }
}

/// One content block in Claude's input shape.
fn block(b: &Value) -> Result<ContentBlock, String> {
    match b["type"].as_str() {
        Some("text") => Ok(ContentBlock::text(b["text"].as_str().unwrap_or_default())),
        Some("image") => {
            let src = &b["source"];
            let (Some(media_type), Some(data)) = (src["media_type"].as_str(), src["data"].as_str()) else {
                return Err("an image block needs source.media_type and source.data (base64)".into());
            };
            Ok(ContentBlock::Image {
                source: octo_app::ImageSource { media_type: media_type.to_owned(), data: data.to_owned() },
            })
        }
        other => Err(format!("unsupported content block type {other:?}: text or image")),
    }
}

fn emit(v: &Value) -> bool {
    out::stdout(&format!("{v}\n"))
}

/// Runs the session until stdin ends and every queued turn is done.
pub async fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    if !matches!(cli.output_format, OutputFormat::StreamJson | OutputFormat::Events) {
        out::error("--input-format stream-json needs --output-format stream-json (or events)");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let launcher = Launcher::from_env();
    let unattended = cli.permission_prompt == PermissionPrompt::Deny;
    let session = match launch::start(&launcher, cli, unattended, None) {
        Ok(s) => s,
        Err(e) => {
            out::error(&e.to_string());
            return Ok(ExitCode::from(launch::exit_code(&e)));
        }
    };
    let mut rx = session.subscribe();
    // Claude Code's messages, or octo's own events (`--output-format events`).
    let mut claude = (cli.output_format == OutputFormat::StreamJson)
        .then(|| crate::claude_stream::ClaudeStream::new(cli.include_partial_messages));
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let (mut pending, mut stdin_open, mut number) = (0usize, true, 0usize);
    let mut fold = TurnFold::new();
    let mut started = Instant::now();
    let mut last_failed = false;
    while stdin_open || pending > 0 {
        tokio::select! {
            line = lines.next_line(), if stdin_open => match line {
                Ok(Some(line)) => {
                    number += 1;
                    if line.trim().is_empty() {
                        continue;
                    }
                    match parse(&line) {
                        Ok(Input::Prompt(m)) => {
                            pending += 1;
                            session.prompt(m)?;
                        }
                        Ok(Input::Approval { id, decision, message }) => answer(&session, &id, &decision, message, number),
                        Ok(Input::Interrupt) => session.abort(),
                        Err(why) => {
                            emit(&json!({"type": "error", "message": format!("input line {number}: {why}")}));
                        }
                    }
                }
                Ok(None) | Err(_) => stdin_open = false,
            },
            event = rx.recv() => {
                let event = match event {
                    Ok(e) => e,
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                };
                if matches!(event, AgentEvent::TurnStart { .. }) {
                    started = Instant::now();
                    if let Some(c) = claude.as_mut() {
                        c.next_turn(crate::claude_stream::Init::of(&session));
                    }
                }
                let changes = fold.push(&event);
                let shown = match claude.as_mut() {
                    Some(c) => {
                        let sid = session.conversation().id().unwrap_or_default();
                        changes.iter().flat_map(|change| c.lines(change, &sid)).collect()
                    }
                    None => vec![serde_json::to_value(&event).unwrap_or_default()],
                };
                drop(changes);
                if !shown.iter().all(emit) {
                    // Nobody reads stdout any more.
                    session.abort();
                    return Ok(ExitCode::from(EXIT_ERROR));
                }
                if fold.is_done() {
                    let summary = session.conversation().summarize(&fold);
                    last_failed = summary.failed();
                    emit(&crate::output::result_object(&summary, started));
                    fold = TurnFold::new();
                    pending = pending.saturating_sub(1);
                }
            }
        }
    }
    launch::stop_processes(&session);
    Ok(if last_failed { ExitCode::from(EXIT_ERROR) } else { ExitCode::SUCCESS })
}

fn answer(session: &Session, id: &str, decision: &str, message: Option<String>, number: usize) {
    let r = match decision {
        "allow" => session.approvals().approve(id),
        "allow_always" => session.approvals().approve_always(id),
        "deny_always" => session.approvals().reject_always(id, message),
        _ => session.approvals().reject(id, message),
    };
    if let Err(e) = r {
        emit(&json!({"type": "error", "message": format!("input line {number}: {e}")}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_lines_in_claude_codes_shape() {
        let m = parse(r#"{"type":"user","message":{"role":"user","content":"hi"}}"#).unwrap();
        assert_eq!(m, Input::Prompt(Message::user("hi")));
        let blocks = parse(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}"#,
        )
        .unwrap();
        assert!(matches!(blocks, Input::Prompt(m) if m.content.len() == 2));
        assert!(matches!(
            parse(r#"{"type":"approval","approval_id":"a1","decision":"allow"}"#),
            Ok(Input::Approval { decision, .. }) if decision == "allow"
        ));
        for bad in [
            "not json",
            "{}",
            r#"{"type":"user"}"#,
            r#"{"type":"approval","approval_id":"a","decision":"maybe"}"#,
            r#"{"type":"what"}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
