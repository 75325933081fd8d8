//! The REPL's status line, made here so any terminal front end can show it: octo's own line
//! from a template, or the input a user's `statusLine` command reads — Claude Code's JSON (the
//! session, the model, the workspace, the cost, the context window) — and that command run with
//! a time limit, its first line of output kept (cut, without control sequences).

use crate::config::StatusLine;
use crate::session::Session;
use serde_json::{json, Value};
use std::time::Duration;

/// How long a status-line command may take.
pub(crate) const COMMAND_LIMIT: Duration = Duration::from_millis(1_500);
/// The most output read from it.
const MAX_OUTPUT: usize = 64 * 1024;
/// The most characters shown.
const MAX_SHOWN: usize = 300;

/// The status line as configured (`None`: off).
pub fn setting(session: &Session) -> StatusLine {
    session.config().and_then(|c| c.status_line.clone()).unwrap_or_default()
}

/// octo's own status line from `template`.
pub fn text(session: &Session, template: &str) -> String {
    let s = session.status();
    let context = match s.context_window {
        Some(w) if w > 0 => format!("{:.0}% context", s.context_tokens as f64 * 100.0 / w as f64),
        _ => format!("{} tokens", s.context_tokens),
    };
    let cost = s.cost_usd.map_or_else(|| "price unknown".to_owned(), |c| format!("${c:.2}"));
    let branch = crate::git_head::describe(session.workspace())
        .map(|b| format!(" · {}", b.trim_start_matches("branch ")))
        .unwrap_or_default();
    let background = match session.tools().in_background() {
        0 => String::new(),
        n => format!(" · {n} in background"),
    };
    template
        .replace("{model}", &s.model)
        .replace("{context}", &context)
        .replace("{cost}", &cost)
        .replace("{mode}", &s.mode.to_string())
        .replace("{branch}", &branch)
        .replace("{background}", &background)
        .replace("{session}", session.conversation().id().as_deref().unwrap_or("new"))
}

/// What a `statusLine` command reads on stdin: Claude Code's shape.
pub fn input(session: &Session) -> Value {
    let s = session.status();
    let workspace = session.workspace().display().to_string();
    let model_id = s.model.split_once(':').map_or(s.model.as_str(), |(_, m)| m).to_owned();
    let u = &s.usage;
    json!({
        "hook_event_name": "Status",
        "session_id": session.conversation().id(),
        "cwd": workspace,
        "model": {"id": model_id, "display_name": s.model},
        "workspace": {"current_dir": workspace, "project_dir": workspace},
        "version": env!("CARGO_PKG_VERSION"),
        "output_style": {"name": "default"},
        "permission_mode": s.mode.to_string(),
        "cost": {"total_cost_usd": s.cost_usd.unwrap_or(0.0)},
        "context_window": {
            "total_input_tokens": u.input_tokens + u.cache_read_tokens + u.cache_write_tokens,
            "total_output_tokens": u.output_tokens,
            "context_window_size": s.context_window,
            "used_percentage": s.context_window.filter(|w| *w > 0).map(|w| s.context_tokens as f64 * 100.0 / w as f64),
        },
        "exceeds_200k_tokens": s.context_tokens > 200_000,
    })
}

/// Why a `statusLine` command gave no line; worded to follow "status line".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatusCommandError {
    /// The shell could not start it.
    #[error("command could not be started ({source}): {command}")]
    Start {
        /// The command as configured.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// It ran past the limit and was stopped.
    #[error("command took over {} ms and was stopped: {command}", COMMAND_LIMIT.as_millis())]
    TooSlow {
        /// The command as configured.
        command: String,
    },
}

/// Runs a `statusLine` command with `input` on stdin in `cwd`: its first line of output, made
/// plain (no control sequences) and cut; an error says why there is none.
pub async fn run_command(
    command: &str,
    cwd: &std::path::Path,
    input: &Value,
) -> Result<String, StatusCommandError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut cmd = tokio::process::Command::from(octo_tools::shell::shell_command(command));
    cmd.current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child =
        cmd.spawn().map_err(|source| StatusCommandError::Start { command: command.to_owned(), source })?;
    let group = child.id();
    let body = input.to_string();
    let work = async {
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its input is fine.
            let _ = stdin.write_all(body.as_bytes()).await;
        }
        let mut out = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = stdout.take(MAX_OUTPUT as u64).read_to_end(&mut out).await;
        }
        let _ = child.wait().await;
        out
    };
    let out = tokio::time::timeout(COMMAND_LIMIT, work).await;
    if let Some(g) = group {
        octo_tools::shell::kill_group(g, true);
    }
    let out = out.map_err(|_| StatusCommandError::TooSlow { command: command.to_owned() })?;
    Ok(plain_first_line(&out))
}

/// The first line of `bytes`, without escape sequences or control characters, cut to
/// 300 characters.
pub(crate) fn plain_first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().next().unwrap_or_default();
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI (`ESC [ … final`) or a two-character escape: dropped whole.
            if chars.peek() == Some(&'[') {
                chars.next();
                for n in chars.by_ref() {
                    if ('@'..='~').contains(&n) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
            continue;
        }
        if c.is_control() {
            continue;
        }
        out.push(c);
        if out.chars().count() >= MAX_SHOWN {
            out.push('…');
            break;
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_controls_are_dropped_and_long_lines_cut() {
        assert_eq!(plain_first_line(b"\x1b[34m[Opus]\x1b[0m dir\x07\nsecond"), "[Opus] dir");
        let long = "x".repeat(1_000_000);
        assert_eq!(plain_first_line(long.as_bytes()).chars().count(), MAX_SHOWN + 1);
    }

    #[tokio::test]
    async fn a_command_reads_the_json_and_a_hanging_one_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let input = json!({"model": {"display_name": "mock:m"}});
        let got = run_command("grep -o 'mock:m'", dir.path(), &input).await.unwrap();
        assert_eq!(got, "mock:m");
        let err = run_command("sleep 30", dir.path(), &input).await.unwrap_err();
        assert!(err.to_string().contains("took over"), "{err}");
        // A megabyte on one line: read up to the cap, shown cut.
        let got = run_command("head -c 1000000 /dev/zero | tr '\\0' x", dir.path(), &input).await.unwrap();
        assert_eq!(got.chars().count(), MAX_SHOWN + 1, "{got}");
    }
}
