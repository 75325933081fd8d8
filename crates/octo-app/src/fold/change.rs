//! What one event changed in a turn, typed, as every front end draws it.
//!
//! [`super::TurnFold::push`] turns each [`AgentEvent`] into the [`Change`]s it makes: answer text
//! added, an answer restarted (what was shown since the request began is void), a tool started
//! or ended (with the record the summary will hold), the task list, a sub-agent's progress or
//! usage, a notice, the end. Tool updates are decoded here once; no front end matches an update
//! kind or reads a payload itself.

use crate::subagents::SubagentProgress;
use crate::{
    ApprovalDecision, ApprovalRequest, CompactReason, Message, OutputKind, StopReason, Todo, ToolOutcome,
    TurnEndReason, Usage,
};
use std::borrow::Cow;

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
    /// Its arguments, once the round that made it is committed (`null` before).
    pub input: serde_json::Value,
}

/// One change a turn's event made, borrowed from the event where it can be.
#[derive(Debug, Clone, PartialEq)]
pub enum Change<'a> {
    /// The turn began.
    Started,
    /// A model request is being sent; `continues` when its text adds to the answer (a reply cut
    /// off at the output limit) instead of starting a new one.
    Request {
        /// Adds to the answer rather than replacing it.
        continues: bool,
    },
    /// How the wait for the reply is going, in words (for a spinner).
    Progress(&'a str),
    /// Answer text to add to what is shown.
    AnswerDelta(Cow<'a, str>),
    /// What was shown of the answer since `kept` is void: the reply broke off and starts again
    /// (or a follower that fell behind gets the answer as it was kept). A renderer removes what
    /// it showed beyond `kept`, or, where it cannot, says that it is discarded.
    AnswerRestarted {
        /// The answer that stands (the text of earlier requests the current one continues).
        kept: String,
    },
    /// Reasoning text to add.
    Thinking(&'a str),
    /// A tool call is about to run.
    ToolStarted {
        /// Call id.
        id: &'a str,
        /// Tool name.
        name: &'a str,
        /// Its arguments.
        input: &'a serde_json::Value,
        /// The call in one line.
        summary: &'a str,
    },
    /// A running tool reported something no front end decodes (partial output and the like).
    ToolUpdate {
        /// Call id.
        id: &'a str,
        /// What kind of update, as the tool named it.
        kind: &'a str,
        /// The payload.
        data: &'a serde_json::Value,
    },
    /// A tool call finished, or never ran.
    ToolEnded {
        /// The call as the turn's summary keeps it.
        record: ToolCallRecord,
        /// The text the model receives.
        output: &'a str,
        /// What the output is, for rendering.
        kind: OutputKind,
    },
    /// The model's task list, whole, as it is now.
    Todos(Vec<Todo>),
    /// A sub-agent started by call `call` moved on.
    Subagent {
        /// The `task` call that runs it.
        call: &'a str,
        /// What happened.
        progress: SubagentProgress,
    },
    /// Tokens a sub-agent spent (already added to the turn's usage).
    SubagentUsage {
        /// The `task` call that runs it.
        call: &'a str,
        /// Its tokens.
        usage: Usage,
        /// What they cost at the child's own model's price, when it runs on one with a price.
        cost_usd: Option<f64>,
    },
    /// A call waits for the user's yes; the id answers it.
    Approval {
        /// The id to answer.
        id: &'a str,
        /// What is asked.
        request: &'a ApprovalRequest,
    },
    /// An approval was answered (or denied by cancellation).
    ApprovalResolved {
        /// The id that was answered.
        id: &'a str,
        /// The answer.
        decision: &'a ApprovalDecision,
    },
    /// The model asks the user a question.
    Question {
        /// The id to answer.
        id: &'a str,
        /// The call asking.
        call: &'a str,
        /// The question.
        question: &'a str,
        /// Suggested answers.
        options: &'a [String],
    },
    /// A question was answered.
    QuestionAnswered {
        /// The id that was answered.
        id: &'a str,
        /// The answer.
        answer: &'a str,
    },
    /// Tokens of the response that just finished.
    Usage(Usage),
    /// The request failed and is tried again (`restart`: after part of the reply, which an
    /// [`Change::AnswerRestarted`] before this one already voided).
    Retry {
        /// Attempt about to start.
        attempt: u32,
        /// Most attempts.
        max_attempts: u32,
        /// Wait before it, in milliseconds.
        delay_ms: u64,
        /// Why the last attempt failed.
        reason: &'a str,
        /// The reply broke off after part of it.
        restart: bool,
    },
    /// Messages that are now a permanent part of the history.
    Committed(&'a [Message]),
    /// The committed history was rewritten (compaction, repair): these messages replace it.
    HistoryReplaced(&'a [Message]),
    /// The conversation is being compacted.
    CompactionStarted {
        /// Why.
        reason: CompactReason,
        /// Estimated tokens before.
        tokens_before: u64,
    },
    /// Compaction finished.
    Compacted {
        /// Estimated tokens after.
        tokens_after: u64,
        /// Tool results and arguments replaced by placeholders.
        reclaimed: usize,
        /// Messages folded into a summary.
        messages_folded: usize,
        /// Where the folded messages were archived.
        archive: Option<&'a str>,
    },
    /// Something worth telling the user that is not an error.
    Notice(&'a str),
    /// The turn failed; [`Change::Ended`] follows.
    Error(&'a str),
    /// The turn is over.
    Ended {
        /// How it ended.
        reason: TurnEndReason,
        /// Why the last response stopped.
        stop_reason: Option<&'a StopReason>,
    },
}

impl Change<'_> {
    /// Whether a renderer that prints lines shows something for this change apart from the
    /// answer (it then finishes the answer's line first).
    pub fn is_status(&self) -> bool {
        matches!(
            self,
            Self::ToolStarted { .. }
                | Self::ToolUpdate { .. }
                | Self::ToolEnded { .. }
                | Self::Todos(_)
                | Self::Subagent { .. }
                | Self::Approval { .. }
                | Self::Question { .. }
                | Self::Retry { .. }
                | Self::CompactionStarted { .. }
                | Self::Compacted { .. }
                | Self::Notice(_)
                | Self::Error(_)
        )
    }
}
