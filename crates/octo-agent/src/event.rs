//! Events: the one stream every front end consumes.
//!
//! # Order guarantees
//!
//! Within one turn:
//! 1. [`AgentEvent::TurnStart`] comes first and [`AgentEvent::TurnEnd`] last, exactly once each.
//!    A failed turn emits [`AgentEvent::Error`] immediately before its `TurnEnd`.
//! 2. Each model request begins with [`AgentEvent::RequestStart`]; its text, thinking, `Retry`
//!    and `Usage` events follow, and all of them come before the tool calls of that response. A
//!    `Retry` with `restart` set voids the text and thinking of this request that came before it:
//!    the reply starts again (front ends drop what they kept of it; the history never holds it).
//! 3. For each tool call: `ApprovalRequired` → `ApprovalResolved` (only when approval was needed)
//!    → [`AgentEvent::ToolCallStart`] → any `ToolUpdate`s → [`AgentEvent::ToolCallEnd`]. A call
//!    that never runs (denied, unknown, invalid, interrupted first) gets no `ToolCallStart`, only
//!    its `ToolCallEnd`, whose [`ToolOutcome`] says why. Calls that run in parallel start in
//!    order; their ends may interleave.
//! 4. [`AgentEvent::Committed`] follows each completed round (after every `ToolCallEnd` of that
//!    round) and the final answer. The messages it carries are permanent: rollback never removes
//!    committed messages, so a session writer may append them as they come.
//!
//! Events serialize with serde (`{"type": "text_delta", "text": "..."}`), so they can be sent to
//! browsers and chat bridges as they are.

use crate::approval::{ApprovalDecision, ApprovalRequest};
use crate::error::ErrorKind;
use crate::message::Message;
use crate::sender::Capability;
use crate::spec::{OutputKind, ToolOutcome};
use crate::usage::{StopReason, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Something that happened during a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// A turn began.
    TurnStart {
        /// The sender capability used for this turn.
        capability: Capability,
    },
    /// A model request is being sent (1 for the first of the turn).
    RequestStart {
        /// Which request of this turn.
        request: u32,
        /// This request continues a reply that was cut off at the output limit: front ends keep
        /// the text they have and append (otherwise a new response starts).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        continues: bool,
    },
    /// Answer text arrived.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Reasoning text arrived.
    ThinkingDelta {
        /// The new text.
        text: String,
    },
    /// A tool call is about to run.
    ToolCallStart {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        input: Value,
        /// One line for status displays (the command, the path...), as the tool describes it.
        #[serde(default)]
        summary: String,
    },
    /// A running tool reported progress or state (a todo list, partial output).
    ToolUpdate {
        /// Call id.
        tool_use_id: String,
        /// What kind of update (`todos`, `output`...), chosen by the tool.
        kind: String,
        /// The payload.
        data: Value,
    },
    /// A tool call finished (or never ran).
    ToolCallEnd {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// The text the model receives (after truncation).
        output: String,
        /// Whether the model is told it failed (every outcome but `ran`).
        is_error: bool,
        /// How it ended.
        outcome: ToolOutcome,
        /// Wall time of the call in milliseconds (0 when it never ran).
        duration_ms: u64,
        /// What the output is, for rendering (omitted when plain).
        #[serde(default, skip_serializing_if = "OutputKind::is_plain")]
        kind: OutputKind,
        /// The call in one line (the command, path or URL), also for a call that never started
        /// (refused before it ran).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        summary: String,
    },
    /// A tool asks the user a question; a front end answers it with
    /// [`crate::ApprovalBroker::answer`].
    QuestionAsked {
        /// The id to answer.
        question_id: String,
        /// The call asking.
        tool_use_id: String,
        /// The question.
        question: String,
        /// Suggested answers; the user may also answer freely.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        options: Vec<String>,
    },
    /// A question was answered.
    QuestionAnswered {
        /// The id that was answered.
        question_id: String,
        /// The answer.
        answer: String,
    },
    /// A front end must answer this with [`crate::ApprovalBroker::resolve`].
    ApprovalRequired {
        /// The id to answer.
        approval_id: String,
        /// What is asked.
        request: ApprovalRequest,
    },
    /// An approval was answered (or denied by cancellation).
    ApprovalResolved {
        /// The id that was answered.
        approval_id: String,
        /// The answer.
        decision: ApprovalDecision,
    },
    /// Tokens of the model response that just finished.
    Usage {
        /// That response's usage.
        usage: Usage,
    },
    /// How the wait for the reply is going, in words (a local model reading a long prompt);
    /// for a spinner, not for the transcript.
    Progress {
        /// What is happening.
        message: String,
    },
    /// The provider is retrying a failed request.
    Retry {
        /// Attempt about to start.
        attempt: u32,
        /// Most attempts.
        max_attempts: u32,
        /// Wait before it, in milliseconds.
        delay_ms: u64,
        /// Why the last attempt failed.
        reason: String,
        /// The failure came after part of the reply: what this request streamed so far is void.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        restart: bool,
    },
    /// Messages that are now a permanent part of the history.
    Committed {
        /// The new messages, oldest first.
        messages: Vec<Message>,
    },
    /// The history is being compacted to stay inside the context window.
    CompactionStart {
        /// Why.
        reason: CompactReason,
        /// Estimated tokens before.
        tokens_before: u64,
    },
    /// Compaction finished.
    CompactionEnd {
        /// Estimated tokens after.
        tokens_after: u64,
        /// Tool results and arguments replaced by placeholders.
        reclaimed: usize,
        /// Messages folded into a summary (0 when only reclaiming was needed).
        messages_folded: usize,
        /// Where the folded messages were archived, when they were.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        archive: Option<String>,
    },
    /// The committed history was rewritten (compaction, repair): these messages replace it. A
    /// session writer records them as the new base.
    HistoryReplaced {
        /// The whole committed history.
        messages: Vec<Message>,
    },
    /// Something worth telling the user that is not an error (a capability the sender lacks).
    Notice {
        /// The text.
        message: String,
    },
    /// The turn failed; a `TurnEnd` follows.
    Error {
        /// The error kind.
        kind: ErrorKind,
        /// A message for the user.
        message: String,
    },
    /// The turn is over.
    TurnEnd {
        /// How it ended.
        reason: TurnEndReason,
        /// Why the last response stopped, when there was one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<StopReason>,
        /// Tokens of all requests of this turn.
        usage: Usage,
        /// How many model requests the turn made.
        requests: u32,
    },
}

/// Why the history is being compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    /// Occupancy passed the threshold before a request.
    Auto,
    /// The user asked (`/compact`).
    Manual,
    /// The model called the compaction tool.
    Tool,
    /// The provider said the request was too long.
    Overflow,
}

impl CompactReason {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
            Self::Tool => "tool",
            Self::Overflow => "overflow",
        }
    }
}

impl std::fmt::Display for CompactReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEndReason {
    /// The model answered without further tool calls.
    Completed,
    /// The request limit (`max_turns`) was reached while the model still wanted tools.
    MaxTurns,
    /// The caller cancelled.
    Cancelled,
    /// The model kept repeating the same calls and the turn was stopped.
    LoopDetected,
    /// A plugin's spending limit stopped the turn before a request ([`crate::Plugin::before_send`]).
    BudgetExceeded,
    /// An error ended it.
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_with_a_type_tag() {
        let e = AgentEvent::TextDelta { text: "hi".into() };
        assert_eq!(serde_json::to_value(&e).unwrap(), json!({"type": "text_delta", "text": "hi"}));
        let e = AgentEvent::TurnEnd {
            reason: TurnEndReason::MaxTurns,
            stop_reason: Some(StopReason::ToolUse),
            usage: Usage::default(),
            requests: 3,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "turn_end");
        assert_eq!(v["reason"], "max_turns");
        assert_eq!(v["stop_reason"], "tool_use");
        assert_eq!(serde_json::from_value::<AgentEvent>(v).unwrap(), e);
    }

    #[test]
    fn tool_ends_carry_their_outcome_and_plain_kinds_are_omitted() {
        let e = AgentEvent::ToolCallEnd {
            id: "t".into(),
            name: "x".into(),
            output: "no".into(),
            is_error: true,
            outcome: ToolOutcome::BlockedByPlanMode,
            duration_ms: 0,
            kind: OutputKind::Plain,
            summary: String::new(),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["outcome"], "blocked_by_plan_mode");
        assert!(v.get("kind").is_none());
        let c = AgentEvent::CompactionStart { reason: CompactReason::Overflow, tokens_before: 1 };
        assert_eq!(serde_json::to_value(&c).unwrap()["reason"], "overflow");
    }
}
