//! One fold over a turn's events: every front end learns what happened the same way.
//!
//! A [`TurnFold`] takes in [`AgentEvent`]s as they arrive and keeps what a turn amounts to: the
//! answer so far, usage, each tool call with its outcome, the error, how it ended. When the turn
//! is over, [`crate::Session::summarize`] turns it into a [`TurnSummary`] with the cost and the
//! session's identity. Front ends are [`TurnRenderer`]s over the events and that summary; none of
//! them derives an outcome itself.

use crate::{AgentEvent, StopReason, ToolOutcome, TurnEndReason, Usage};
use std::collections::HashMap;

/// One tool call of a turn.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolCallRecord {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// One line: the command, path or URL (empty when the call never got that far).
    pub summary: String,
    /// How it ended.
    pub outcome: ToolOutcome,
    /// Wall time in milliseconds (0 when it never ran).
    pub duration_ms: u64,
}

/// What a turn amounted to, for outputs and front ends.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TurnSummary {
    /// The final answer's text (empty when the turn failed before one).
    pub answer: String,
    /// How the turn ended.
    pub end_reason: TurnEndReason,
    /// Why the last response stopped.
    pub stop_reason: Option<StopReason>,
    /// Tokens of the turn's requests.
    pub usage: Usage,
    /// What those tokens cost in USD, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// Model requests made.
    pub requests: u32,
    /// Every tool call, in the order they ended.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Names of the calls that were refused (by the user, a rule, the mode, a plugin, the
    /// hard-deny list, or for want of anyone to ask).
    pub denied: Vec<String>,
    /// The error message, when the turn failed.
    pub error: Option<String>,
    /// The saved session's id, when it is saved.
    pub session_id: Option<String>,
    /// `endpoint:model`.
    pub model: String,
    /// Turns completed in the session so far.
    pub turns: u32,
    /// MCP servers that are not working at the turn's end (failed, exited, still starting,
    /// waiting for approval), each with its state and why: every output format reports them.
    pub mcp_problems: Vec<McpProblem>,
}

/// An MCP server that is not working, as the outputs report it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct McpProblem {
    /// Its name.
    pub name: String,
    /// `failed`, `exited`, `starting`, `needs approval`.
    pub status: String,
    /// Why, when known.
    pub error: Option<String>,
}

impl TurnSummary {
    /// Whether the turn failed.
    pub fn failed(&self) -> bool {
        self.end_reason == TurnEndReason::Failed
    }
}

/// The state of a turn, folded from its events.
#[derive(Debug, Clone, Default)]
pub struct TurnFold {
    answer: String,
    /// How long the answer was when the current request started (a restart cuts back to it).
    request_start: usize,
    usage: Usage,
    /// What the turn's sub-agents used (added to the turn's own usage).
    child_usage: Usage,
    /// Children's tokens priced at their own model's rate, and that cost.
    priced_apart: (Usage, f64),
    requests: u32,
    calls: Vec<ToolCallRecord>,
    summaries: HashMap<String, String>,
    error: Option<String>,
    end: Option<(TurnEndReason, Option<StopReason>)>,
}

impl TurnFold {
    /// An empty fold, before the turn's first event.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in one event. Returns `true` when it ended the turn.
    pub fn push(&mut self, event: &AgentEvent) -> bool {
        match event {
            // A new response replaces what the last one said; a continuation adds to it.
            AgentEvent::RequestStart { continues, .. } => {
                if !continues {
                    self.answer.clear();
                }
                self.request_start = self.answer.len();
            }
            // The reply broke off and starts again: what it said so far is void.
            AgentEvent::Retry { restart: true, .. } => self.answer.truncate(self.request_start),
            AgentEvent::TextDelta { text } => self.answer.push_str(text),
            // The round as it was kept is what was said: a follower that fell behind the stream
            // (and lost deltas) gets the whole text back here.
            AgentEvent::Committed { messages } => {
                if let Some(last) = messages.iter().rev().find(|m| m.role == octo_agent::Role::Assistant) {
                    self.answer.truncate(self.request_start);
                    self.answer.push_str(&last.text());
                }
            }
            AgentEvent::Usage { usage } => self.usage += *usage,
            AgentEvent::ToolUpdate { kind, data, .. } if kind == crate::subagents::USAGE_UPDATE => {
                if let Ok(u) = serde_json::from_value::<Usage>(data.clone()) {
                    self.usage += u;
                    self.child_usage += u;
                    if let Some(c) =
                        data.get(crate::subagents::COST_FIELD).and_then(serde_json::Value::as_f64)
                    {
                        self.priced_apart.0 += u;
                        self.priced_apart.1 += c;
                    }
                }
            }
            AgentEvent::ApprovalRequired { request, .. } => {
                self.summaries.insert(request.tool_use_id.clone(), request.summary.clone());
            }
            AgentEvent::ToolCallStart { id, summary, .. } => {
                self.summaries.insert(id.clone(), summary.clone());
            }
            AgentEvent::ToolCallEnd { id, name, outcome, duration_ms, summary, .. } => {
                let seen = self.summaries.remove(id);
                self.calls.push(ToolCallRecord {
                    id: id.clone(),
                    name: name.clone(),
                    summary: seen.unwrap_or_else(|| summary.clone()),
                    outcome: *outcome,
                    duration_ms: *duration_ms,
                });
            }
            AgentEvent::Error { message, .. } => self.error = Some(message.clone()),
            AgentEvent::TurnEnd { reason, stop_reason, usage, requests } => {
                self.usage = *usage;
                self.usage += self.child_usage;
                self.requests = *requests;
                self.end = Some((*reason, stop_reason.clone()));
                return true;
            }
            _ => {}
        }
        false
    }

    /// The answer so far.
    pub fn answer(&self) -> &str {
        &self.answer
    }

    /// Tool calls that have ended so far.
    pub fn tool_calls(&self) -> &[ToolCallRecord] {
        &self.calls
    }

    /// Whether the turn has ended.
    pub fn is_done(&self) -> bool {
        self.end.is_some()
    }

    /// How the turn ended (`Failed` while it has not).
    pub fn end_reason(&self) -> TurnEndReason {
        self.end.as_ref().map_or(TurnEndReason::Failed, |e| e.0)
    }

    /// The part of the turn's usage its sub-agents spent on models of their own with a known
    /// price, and what it cost there (the rest is priced at the session's model).
    pub fn priced_apart(&self) -> (Usage, f64) {
        self.priced_apart
    }

    /// The summary, with the session's part left empty (see [`crate::Session::summarize`]).
    pub fn summary(&self) -> TurnSummary {
        let end_reason = self.end_reason();
        TurnSummary {
            answer: if end_reason == TurnEndReason::Failed { String::new() } else { self.answer.clone() },
            end_reason,
            stop_reason: self.end.as_ref().and_then(|e| e.1.clone()),
            usage: self.usage,
            cost_usd: None,
            requests: self.requests,
            denied: self.calls.iter().filter(|c| c.outcome.is_denial()).map(|c| c.name.clone()).collect(),
            tool_calls: self.calls.clone(),
            error: self.error.clone(),
            session_id: None,
            model: String::new(),
            turns: 0,
            mcp_problems: Vec::new(),
        }
    }
}

/// A front end's rendering of turns: each event as it comes (after the fold took it in), then
/// the summary. The CLI's text, json, stream-json and REPL outputs implement it; so can a
/// server or a chat bridge.
pub trait TurnRenderer {
    /// One event. Returns `false` when the output is gone (a closed pipe) and the turn should be
    /// stopped.
    fn event(&mut self, event: &AgentEvent, fold: &TurnFold) -> bool;

    /// The turn is over.
    fn finish(&mut self, summary: &TurnSummary);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(id: &str, name: &str, outcome: ToolOutcome) -> AgentEvent {
        AgentEvent::ToolCallEnd {
            id: id.into(),
            name: name.into(),
            output: String::new(),
            is_error: outcome != ToolOutcome::Ran,
            outcome,
            duration_ms: 0,
            kind: octo_agent::OutputKind::Plain,
            summary: String::new(),
        }
    }

    #[test]
    fn the_fold_keeps_the_last_answer_and_every_outcome() {
        let mut f = TurnFold::new();
        let events = [
            AgentEvent::RequestStart { request: 1, continues: false },
            AgentEvent::TextDelta { text: "let me look".into() },
            AgentEvent::ToolCallStart {
                id: "a".into(),
                name: "terminal".into(),
                input: serde_json::json!({}),
                summary: "ls".into(),
            },
            end("a", "terminal", ToolOutcome::Ran),
            end("b", "write_file", ToolOutcome::BlockedByPlanMode),
            AgentEvent::RequestStart { request: 2, continues: false },
            AgentEvent::TextDelta { text: "done".into() },
            AgentEvent::RequestStart { request: 3, continues: true },
            AgentEvent::TextDelta { text: " now".into() },
        ];
        for e in &events {
            assert!(!f.push(e));
        }
        assert_eq!(f.answer(), "done now");
        f.push(&AgentEvent::TextDelta { text: " and brok".into() });
        f.push(&AgentEvent::Retry {
            attempt: 2,
            max_attempts: 5,
            delay_ms: 0,
            reason: "reset".into(),
            restart: true,
        });
        assert_eq!(f.answer(), "done", "a restarted reply is void back to where its request began");
        f.push(&AgentEvent::TextDelta { text: " now".into() });
        assert!(f.push(&AgentEvent::TurnEnd {
            reason: TurnEndReason::Completed,
            stop_reason: None,
            usage: Usage::default(),
            requests: 3
        }));
        let s = f.summary();
        assert_eq!(s.denied, ["write_file"]);
        assert_eq!(s.tool_calls[0].summary, "ls");
        assert_eq!(s.tool_calls[1].outcome, ToolOutcome::BlockedByPlanMode);
        assert_eq!((s.answer.as_str(), s.requests), ("done now", 3));
    }
}
