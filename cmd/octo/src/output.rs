//! The outputs of a headless run: text (the answer on stdout, status on stderr), json (one result
//! object) and stream-json (Claude Code's lines), each a [`TurnRenderer`] over the fold's changes
//! and the turn summary; and `events`, octo's own events as they came, one JSON line each. None
//! of them derives an outcome: the fold did.

use crate::cli::{Cli, OutputFormat};
use crate::out;
use crate::sanitize::{clean, visible, Mode};
use octo_app::{AgentEvent, Change, TurnEndReason, TurnFold, TurnRenderer, TurnSummary};
use serde_json::json;
use std::time::Instant;

/// What a headless run prints: a renderer of the fold's changes, or the events themselves.
pub enum Output<'a> {
    /// Text, json or stream-json.
    Render(Box<dyn TurnRenderer + 'a>),
    /// Every event as one JSON line, as it happens (`--output-format events`).
    Events,
}

impl Output<'_> {
    /// Takes in one event (the fold takes it in either way); `false` when stdout is gone.
    pub fn event(&mut self, fold: &mut TurnFold, event: &AgentEvent) -> bool {
        match self {
            Self::Render(r) => fold.render(event, r.as_mut()),
            Self::Events => {
                fold.push(event);
                out::stdout(&format!("{}\n", serde_json::to_string(event).unwrap_or_default()))
            }
        }
    }

    /// The turn is over.
    pub fn finish(&mut self, summary: &TurnSummary) {
        if let Self::Render(r) = self {
            r.finish(summary);
        }
    }
}

/// The output for the chosen `--output-format`.
pub fn for_cli<'a>(cli: &Cli, started: Instant, session: &'a octo_app::Session) -> Output<'a> {
    Output::Render(match cli.output_format {
        OutputFormat::Text => {
            use std::io::IsTerminal;
            // The answer on a terminal shows escapes as `^[`; piped, they are dropped; `--raw`
            // passes the bytes the model sent.
            let answer = if cli.raw {
                Mode::Raw
            } else if std::io::stdout().is_terminal() {
                Mode::Visible
            } else {
                Mode::Strip
            };
            Box::new(Text { quiet: cli.quiet, verbose: cli.verbose, started, answer })
        }
        OutputFormat::Json => Box::new(Json { started }),
        OutputFormat::StreamJson => Box::new(ClaudeLines {
            stream: crate::claude_stream::ClaudeStream::new(cli.include_partial_messages),
            session,
            started,
        }),
        OutputFormat::Events => return Output::Events,
    })
}

/// The first line of `text`, at most `max` characters.
pub fn first_line(text: &str, max: usize) -> String {
    text.lines().next().unwrap_or_default().chars().take(max).collect()
}

/// The answer on stdout; tool calls, notices and retries on stderr unless quiet.
struct Text {
    quiet: bool,
    verbose: bool,
    started: Instant,
    answer: Mode,
}

impl TurnRenderer for Text {
    fn change(&mut self, change: &Change<'_>) -> bool {
        if self.quiet {
            return true;
        }
        match change {
            Change::ToolStarted { name, summary, .. } => out::status(&visible(&format!("● {name} {summary}"))),
            Change::ToolEnded { record, output, .. } if self.verbose => {
                let (name, outcome, duration_ms) = (&record.name, record.outcome, record.duration_ms);
                let mark = if outcome == octo_app::ToolOutcome::Ran { "✓" } else { "✗" };
                let how = if outcome == octo_app::ToolOutcome::Ran { String::new() } else { format!(" [{outcome}]") };
                out::status(&visible(&format!(
                    "  {mark} {name}{how} ({duration_ms} ms) {}",
                    first_line(output, 120)
                )));
            }
            Change::Notice(message) => out::status(&visible(&format!("octo: {message}"))),
            Change::Retry { attempt, max_attempts, delay_ms, reason, restart } => out::status(&visible(&format!(
                "octo: {} in {:.1}s (attempt {attempt}/{max_attempts}): {reason}",
                if *restart { "the reply broke off; starting it again" } else { "retrying" },
                *delay_ms as f64 / 1000.0
            ))),
            Change::Compacted { tokens_after, messages_folded, reclaimed, .. } => out::status(&format!(
                "octo: compacted the conversation to ~{tokens_after} tokens ({messages_folded} messages summarized, {reclaimed} old outputs dropped)"
            )),
            _ => {}
        }
        true
    }

    fn finish(&mut self, s: &TurnSummary) {
        if let Some(e) = &s.error {
            // Ctrl-C is not an error to report: the user knows.
            if s.end_reason != TurnEndReason::Cancelled {
                out::error(e);
            }
        }
        if !s.failed() && !s.answer.is_empty() {
            let answer = clean(&s.answer, self.answer);
            let text = if answer.ends_with('\n') { answer } else { format!("{answer}\n") };
            out::stdout(&text);
        }
        if self.verbose {
            if let Some(id) = &s.session_id {
                out::status(&format!("octo: saved as session {id} (continue with `octo -c={id}`)"));
            }
            let estimated = if s.usage.estimated { " (estimated: the server reported none)" } else { "" };
            let cost = s.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
            let u = &s.usage;
            out::status(&format!(
                "octo: {} · {} in / {} out tokens ({} cached){estimated}{cost} · {:.1}s",
                s.model,
                u.input_tokens + u.cache_write_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                self.started.elapsed().as_secs_f64()
            ));
        }
    }
}

/// One JSON object when the turn is over.
struct Json {
    started: Instant,
}

impl TurnRenderer for Json {
    fn change(&mut self, _change: &Change<'_>) -> bool {
        true
    }

    fn finish(&mut self, s: &TurnSummary) {
        out::stdout(&format!("{}\n", result_object(s, self.started)));
    }
}

/// Whether the turn stopped before its end: cancelled, or at a limit (its requests, the
/// spending limit) — not done, so not a success.
pub fn stopped_short(s: &TurnSummary) -> bool {
    matches!(s.end_reason, TurnEndReason::Cancelled | TurnEndReason::MaxTurns | TurnEndReason::BudgetExceeded)
}

/// Claude Code's `modelUsage`: the session's tokens and cost so far (a resumed session's earlier
/// runs included) under its model's id (octo counts a sub-agent's tokens with the session's
/// model).
fn model_usage(s: &TurnSummary) -> serde_json::Value {
    let u = &s.session_usage;
    let id = s.model.split_once(':').map_or(s.model.as_str(), |(_, m)| m);
    json!({id: {
        "inputTokens": u.input_tokens,
        "outputTokens": u.output_tokens,
        "cacheReadInputTokens": u.cache_read_tokens,
        "cacheCreationInputTokens": u.cache_write_tokens,
        "costUSD": s.session_cost_usd.unwrap_or(0.0),
    }})
}

/// The result object of a turn (`--output-format json`, and after each turn of a stream-json
/// run): Claude Code's fields (`subtype`, `result`, `num_turns`, `total_cost_usd`, `usage` with
/// its token names, `permission_denials` …) and octo's own beside them.
pub fn result_object(s: &TurnSummary, started: Instant) -> serde_json::Value {
    let failed = s.failed() || stopped_short(s);
    let subtype = match s.end_reason {
        _ if !failed => "success",
        TurnEndReason::MaxTurns => "error_max_turns",
        TurnEndReason::BudgetExceeded => "error_max_budget_usd",
        _ => "error_during_execution",
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let u = &s.usage;
    let denials: Vec<serde_json::Value> = s
        .tool_calls
        .iter()
        .filter(|c| c.outcome.is_denial())
        .map(|c| {
            let (name, input) = octo_app::claude_tool_call(&c.name, &c.input).unwrap_or_else(|| {
                (octo_app::claude_tool_name(&c.name).unwrap_or_else(|| c.name.clone()), c.input.clone())
            });
            json!({"tool_name": name, "tool_use_id": c.id, "tool_input": input, "summary": c.summary})
        })
        .collect();
    json!({
        "type": "result",
        "subtype": subtype,
        "is_error": failed,
        "duration_ms": duration_ms,
        // The whole run's wall time: octo does not time the model's requests apart.
        "duration_api_ms": duration_ms,
        "num_turns": s.requests,
        "result": if s.failed() { json!(s.error.clone().unwrap_or_default()) } else { json!(s.answer) },
        "stop_reason": s.stop_reason,
        "session_id": s.session_id,
        // As Claude Code's: the session's so far, a resumed session's earlier runs included
        // (`cost_usd` is this turn's).
        "total_cost_usd": s.session_cost_usd.unwrap_or(0.0),
        "usage": {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_write_tokens,
            "cache_read_input_tokens": u.cache_read_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "estimated": u.estimated,
        },
        "permission_denials": denials,
        "uuid": crate::claude_stream::uuid(),
        "modelUsage": model_usage(s),
        "mcp_servers_not_working": s.mcp_problems,
        "answer": if s.failed() { serde_json::Value::Null } else { json!(s.answer) },
        "error": s.error,
        "end_reason": s.end_reason,
        "model": s.model,
        "turns": s.turns,
        "cost_usd": s.cost_usd,
        "tool_calls": s.tool_calls,
        "denied_tool_calls": s.denied,
    })
}

/// Claude Code's stream-json lines, then the result object.
struct ClaudeLines<'a> {
    stream: crate::claude_stream::ClaudeStream,
    session: &'a octo_app::Session,
    started: Instant,
}

impl TurnRenderer for ClaudeLines<'_> {
    fn change(&mut self, change: &Change<'_>) -> bool {
        if matches!(change, Change::Started) {
            // As the turn starts: its tools and servers as they are once servers have started.
            self.stream.next_turn(crate::claude_stream::Init::of(self.session));
        }
        let sid = self.session.conversation().id().unwrap_or_default();
        for line in self.stream.lines(change, &sid) {
            if !out::stdout(&format!("{line}\n")) {
                return false;
            }
        }
        true
    }

    fn finish(&mut self, s: &TurnSummary) {
        out::stdout(&format!("{}\n", result_object(s, self.started)));
    }
}
