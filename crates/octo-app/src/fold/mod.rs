//! One fold over a turn's events: every front end learns what happened the same way.
//!
//! A [`TurnFold`] takes in [`AgentEvent`]s as they arrive and keeps what a turn amounts to: the
//! answer so far, usage, each tool call with its outcome, the error, how it ended. When the turn
//! is over, [`crate::session::Conversation::summarize`] turns it into a [`TurnSummary`] with the cost and the
//! session's identity. Front ends are [`TurnRenderer`]s over the events and that summary; none of
//! them derives an outcome itself.

mod change;

pub use change::{Change, ToolCallRecord};

use crate::{AgentEvent, Message, Role, StopReason, TurnEndReason, Usage};
use std::borrow::Cow;
use std::collections::HashMap;

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
    /// The session's tokens so far, this turn's and a resumed session's earlier ones included.
    pub session_usage: Usage,
    /// What the session has cost so far in USD, when the prices are known.
    pub session_cost_usd: Option<f64>,
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

    /// Takes in one event and says what it changed, in order. After the turn's end
    /// ([`Change::Ended`]), [`Self::is_done`] is true.
    pub fn push<'a>(&mut self, event: &'a AgentEvent) -> Vec<Change<'a>> {
        match event {
            // A new response replaces what the last one said; a continuation adds to it.
            AgentEvent::RequestStart { continues, .. } => {
                if !continues {
                    self.answer.clear();
                }
                self.request_start = self.answer.len();
                vec![Change::Request { continues: *continues }]
            }
            AgentEvent::TextDelta { text } => {
                self.answer.push_str(text);
                vec![Change::AnswerDelta(Cow::Borrowed(text))]
            }
            AgentEvent::Retry { attempt, max_attempts, delay_ms, reason, restart } => {
                let retry = Change::Retry {
                    attempt: *attempt,
                    max_attempts: *max_attempts,
                    delay_ms: *delay_ms,
                    reason,
                    restart: *restart,
                };
                // The reply broke off and starts again: what it said so far is void.
                match self.restart() {
                    Some(restarted) if *restart => vec![restarted, retry],
                    _ => vec![retry],
                }
            }
            AgentEvent::Committed { messages } => self.committed(messages),
            AgentEvent::Usage { usage } => {
                self.usage += *usage;
                vec![Change::Usage(*usage)]
            }
            AgentEvent::ToolUpdate { tool_use_id, kind, data } => vec![self.update(tool_use_id, kind, data)],
            AgentEvent::ApprovalRequired { approval_id, request } => {
                self.summaries.insert(request.tool_use_id.clone(), request.summary.clone());
                vec![Change::Approval { id: approval_id, request }]
            }
            AgentEvent::ToolCallStart { id, name, input, summary } => {
                self.summaries.insert(id.clone(), summary.clone());
                vec![Change::ToolStarted { id, name, input, summary }]
            }
            AgentEvent::ToolCallEnd { id, name, outcome, duration_ms, summary, output, kind, .. } => {
                let seen = self.summaries.remove(id);
                let record = ToolCallRecord {
                    id: id.clone(),
                    name: name.clone(),
                    summary: seen.unwrap_or_else(|| summary.clone()),
                    outcome: *outcome,
                    duration_ms: *duration_ms,
                    input: serde_json::Value::Null,
                };
                self.calls.push(record.clone());
                vec![Change::ToolEnded { record, output, kind: *kind }]
            }
            AgentEvent::Error { message, .. } => {
                self.error = Some(message.clone());
                vec![Change::Error(message)]
            }
            AgentEvent::TurnEnd { reason, stop_reason, usage, requests } => {
                self.usage = *usage;
                self.usage += self.child_usage;
                self.requests = *requests;
                self.end = Some((*reason, stop_reason.clone()));
                vec![Change::Ended { reason: *reason, stop_reason: stop_reason.as_ref() }]
            }
            other => stateless(other).into_iter().collect(),
        }
    }

    /// Cuts the answer back to where the current request began; the change, when anything of
    /// this request was said.
    fn restart(&mut self) -> Option<Change<'static>> {
        if self.answer.len() == self.request_start {
            return None;
        }
        self.answer.truncate(self.request_start);
        Some(Change::AnswerRestarted { kept: self.answer.clone() })
    }

    /// The round as it was kept is what was said: a follower that fell behind the stream (and
    /// lost deltas) gets the whole text back here.
    fn committed<'a>(&mut self, messages: &'a [Message]) -> Vec<Change<'a>> {
        let mut out = Vec::new();
        // A call's arguments reach the record with its round (a refused call has no start event).
        for m in messages.iter().filter(|m| m.role == Role::Assistant) {
            for t in m.tool_uses() {
                if let Some(r) = self.calls.iter_mut().find(|r| r.id == t.id && r.input.is_null()) {
                    r.input = t.input.clone();
                }
            }
        }
        if let Some(last) = messages.iter().rev().find(|m| m.role == Role::Assistant) {
            let said = last.text();
            let current = self.answer.get(self.request_start..).unwrap_or_default();
            if current != said {
                match said.strip_prefix(current) {
                    // Only the end was missed: it is added.
                    Some(rest) => {
                        self.answer.push_str(rest);
                        out.push(Change::AnswerDelta(Cow::Owned(rest.to_owned())));
                    }
                    None => {
                        if let Some(restarted) = self.restart() {
                            out.push(restarted);
                        }
                        self.answer.push_str(&said);
                        out.push(Change::AnswerDelta(Cow::Owned(said)));
                    }
                }
            }
        }
        out.push(Change::Committed(messages));
        out
    }

    /// A tool's update, decoded once: sub-agents' usage and progress, the task list.
    fn update<'a>(&mut self, call: &'a str, kind: &'a str, data: &'a serde_json::Value) -> Change<'a> {
        let raw = Change::ToolUpdate { id: call, kind, data };
        match kind {
            crate::subagents::USAGE_UPDATE => {
                let Ok(usage) = serde_json::from_value::<Usage>(data.clone()) else { return raw };
                self.usage += usage;
                self.child_usage += usage;
                let cost_usd = data.get(crate::subagents::COST_FIELD).and_then(serde_json::Value::as_f64);
                if let Some(c) = cost_usd {
                    self.priced_apart.0 += usage;
                    self.priced_apart.1 += c;
                }
                Change::SubagentUsage { call, usage, cost_usd }
            }
            crate::subagents::PROGRESS_UPDATE => match serde_json::from_value(data.clone()) {
                Ok(progress) => Change::Subagent { call, progress },
                Err(_) => raw,
            },
            octo_tools::TODOS_UPDATE => match serde_json::from_value(data.clone()) {
                Ok(todos) => Change::Todos(todos),
                Err(_) => raw,
            },
            _ => raw,
        }
    }

    /// The answer so far.
    pub fn answer(&self) -> &str {
        &self.answer
    }

    /// Whether the turn has ended.
    pub fn is_done(&self) -> bool {
        self.end.is_some()
    }

    /// How the turn ended (`Failed` while it has not).
    pub(crate) fn end_reason(&self) -> TurnEndReason {
        self.end.as_ref().map_or(TurnEndReason::Failed, |e| e.0)
    }

    /// The part of the turn's usage its sub-agents spent on models of their own with a known
    /// price, and what it cost there (the rest is priced at the session's model).
    pub(crate) fn priced_apart(&self) -> (Usage, f64) {
        self.priced_apart
    }

    /// The summary, with the session's part left empty (see [`crate::session::Conversation::summarize`]).
    pub(crate) fn summary(&self) -> TurnSummary {
        let end_reason = self.end_reason();
        TurnSummary {
            answer: if end_reason == TurnEndReason::Failed { String::new() } else { self.answer.clone() },
            end_reason,
            stop_reason: self.end.as_ref().and_then(|e| e.1.clone()),
            usage: self.usage,
            cost_usd: None,
            session_usage: Usage::default(),
            session_cost_usd: None,
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

/// The change of an event that leaves the fold's state as it is.
fn stateless(event: &AgentEvent) -> Option<Change<'_>> {
    Some(match event {
        AgentEvent::TurnStart { .. } => Change::Started,
        AgentEvent::Progress { message } => Change::Progress(message),
        AgentEvent::ThinkingDelta { text } => Change::Thinking(text),
        AgentEvent::HistoryReplaced { messages } => Change::HistoryReplaced(messages),
        AgentEvent::ApprovalResolved { approval_id, decision } => {
            Change::ApprovalResolved { id: approval_id, decision }
        }
        AgentEvent::QuestionAsked { question_id, tool_use_id, question, options } => {
            Change::Question { id: question_id, call: tool_use_id, question, options }
        }
        AgentEvent::QuestionAnswered { question_id, answer } => {
            Change::QuestionAnswered { id: question_id, answer }
        }
        AgentEvent::CompactionStart { reason, tokens_before } => {
            Change::CompactionStarted { reason: *reason, tokens_before: *tokens_before }
        }
        AgentEvent::CompactionEnd { tokens_after, reclaimed, messages_folded, archive } => {
            Change::Compacted {
                tokens_after: *tokens_after,
                reclaimed: *reclaimed,
                messages_folded: *messages_folded,
                archive: archive.as_deref(),
            }
        }
        AgentEvent::Notice { message } => Change::Notice(message),
        // An event of a later version of the core: nothing a front end draws yet.
        _ => return None,
    })
}

/// A front end's rendering of turns: each [`Change`] as the fold makes it, then the summary. The
/// CLI's text, json, stream-json and REPL outputs implement it; the server, the chat bridges and
/// the ACP agent draw the same changes.
pub trait TurnRenderer {
    /// One change. Returns `false` when the output is gone (a closed pipe) and the turn should
    /// be stopped.
    fn change(&mut self, change: &Change<'_>) -> bool;

    /// The turn is over.
    fn finish(&mut self, summary: &TurnSummary);
}

impl TurnFold {
    /// Takes in `event` and hands each change it made to `renderer`; `false` when the output is
    /// gone.
    pub fn render(&mut self, event: &AgentEvent, renderer: &mut dyn TurnRenderer) -> bool {
        self.push(event).iter().all(|c| renderer.change(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolOutcome;

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
            f.push(e);
            assert!(!f.is_done());
        }
        assert_eq!(f.answer(), "done now");
        f.push(&AgentEvent::TextDelta { text: " and brok".into() });
        let retry = AgentEvent::Retry {
            attempt: 2,
            max_attempts: 5,
            delay_ms: 0,
            reason: "reset".into(),
            restart: true,
        };
        let changes = f.push(&retry);
        assert_eq!(changes[0], Change::AnswerRestarted { kept: "done".into() });
        assert!(matches!(changes[1], Change::Retry { restart: true, .. }));
        assert_eq!(f.answer(), "done", "a restarted reply is void back to where its request began");
        f.push(&AgentEvent::TextDelta { text: " now".into() });
        f.push(&AgentEvent::TurnEnd {
            reason: TurnEndReason::Completed,
            stop_reason: None,
            usage: Usage::default(),
            requests: 3,
        });
        assert!(f.is_done());
        let s = f.summary();
        assert_eq!(s.denied, ["write_file"]);
        assert_eq!(s.tool_calls[0].summary, "ls");
        assert_eq!(s.tool_calls[1].outcome, ToolOutcome::BlockedByPlanMode);
        assert_eq!((s.answer.as_str(), s.requests), ("done now", 3));
    }

    #[test]
    fn a_restart_before_any_text_changes_nothing_shown() {
        let mut f = TurnFold::new();
        f.push(&AgentEvent::RequestStart { request: 1, continues: false });
        let retry = AgentEvent::Retry {
            attempt: 2,
            max_attempts: 5,
            delay_ms: 0,
            reason: "reset".into(),
            restart: true,
        };
        assert!(matches!(f.push(&retry)[..], [Change::Retry { .. }]));
    }

    #[test]
    fn a_follower_that_lost_deltas_gets_the_kept_answer() {
        let commit = |text: &str| AgentEvent::Committed { messages: vec![Message::assistant(text)] };
        // Lost at the end: the rest is added.
        let mut f = TurnFold::new();
        f.push(&AgentEvent::RequestStart { request: 1, continues: false });
        f.push(&AgentEvent::TextDelta { text: "Hel".into() });
        let c = commit("Hello");
        let changes = f.push(&c);
        assert_eq!(changes[0], Change::AnswerDelta(Cow::Borrowed("lo")));
        assert!(matches!(changes[1], Change::Committed(_)));
        // Lost in the middle: what was shown is void and the whole answer follows.
        let mut f = TurnFold::new();
        f.push(&AgentEvent::RequestStart { request: 1, continues: false });
        f.push(&AgentEvent::TextDelta { text: "He".into() });
        f.push(&AgentEvent::TextDelta { text: "o".into() });
        let changes = f.push(&c);
        assert_eq!(changes[0], Change::AnswerRestarted { kept: String::new() });
        assert_eq!(changes[1], Change::AnswerDelta(Cow::Borrowed("Hello")));
        assert_eq!(f.answer(), "Hello");
        // Nothing lost: nothing but the commit.
        let mut f = TurnFold::new();
        f.push(&AgentEvent::TextDelta { text: "Hello".into() });
        assert!(matches!(f.push(&c)[..], [Change::Committed(_)]));
    }

    #[test]
    fn tool_updates_are_decoded_once() {
        let mut f = TurnFold::new();
        let todos = AgentEvent::ToolUpdate {
            tool_use_id: "t".into(),
            kind: octo_tools::TODOS_UPDATE.into(),
            data: serde_json::json!([{"content": "Run the tests", "status": "in_progress"}]),
        };
        assert!(matches!(&f.push(&todos)[..], [Change::Todos(t)] if t[0].content == "Run the tests"));
        let usage = AgentEvent::ToolUpdate {
            tool_use_id: "t".into(),
            kind: crate::subagents::USAGE_UPDATE.into(),
            data: serde_json::json!({"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5}),
        };
        assert!(
            matches!(&f.push(&usage)[..], [Change::SubagentUsage { cost_usd: Some(c), .. }] if *c == 0.5)
        );
        let progress = AgentEvent::ToolUpdate {
            tool_use_id: "t".into(),
            kind: crate::subagents::PROGRESS_UPDATE.into(),
            data: serde_json::json!({"id": "explore-1", "agent": "explore", "event": "end", "ok": true, "tool_calls": 3}),
        };
        let step = crate::subagents::SubagentStep::End { ok: true, tool_calls: 3 };
        assert!(
            matches!(&f.push(&progress)[..], [Change::Subagent { progress, .. }] if progress.step == step)
        );
        let odd = AgentEvent::ToolUpdate {
            tool_use_id: "t".into(),
            kind: "todos".into(),
            data: serde_json::json!(7),
        };
        assert!(
            matches!(&f.push(&odd)[..], [Change::ToolUpdate { .. }]),
            "a payload that does not decode stays raw"
        );
    }
}
