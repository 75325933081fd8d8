//! What the editor knows of a turn's tool calls: each is created once (a call asked about is
//! announced before the question, one refused without asking when it ends) and updated after;
//! a sub-agent's progress is kept as its `task` call's content.

use super::content;
use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use octo_app::subagents::{SubagentProgress, SubagentStep};
use octo_app::{ApprovalRequest, Session};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The calls of one turn.
#[derive(Default)]
pub(super) struct Calls {
    announced: HashSet<String>,
    progress: HashMap<String, Vec<String>>,
}

impl Calls {
    /// A call starts running.
    pub fn started(
        &mut self,
        session: &Session,
        call: String,
        name: &str,
        input: Value,
        summary: String,
    ) -> SessionUpdate {
        if !self.announced.insert(call.clone()) {
            let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
            return SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call, fields));
        }
        let kind = content::kind(session.tools().meta(name).as_ref());
        let (locations, diffs) = content::call_view(name, &input, session.workspace());
        let title = if summary.is_empty() { name.to_owned() } else { summary };
        SessionUpdate::ToolCall(
            ToolCall::new(call, title)
                .kind(kind)
                .status(ToolCallStatus::InProgress)
                .raw_input(input)
                .locations(locations)
                .content(diffs),
        )
    }

    /// A call ended (ran, failed, or was refused before it ran).
    pub fn ended(
        &mut self,
        session: &Session,
        call: String,
        name: String,
        output: &str,
        is_error: bool,
        summary: String,
    ) -> SessionUpdate {
        let status = if is_error { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        let shown = vec![content::output(output)];
        if self.announced.insert(call.clone()) {
            // Refused before it ran (plan mode, a deny rule): told once, as it ended.
            let kind = content::kind(session.tools().meta(&name).as_ref());
            let title = if summary.is_empty() { name } else { summary };
            return SessionUpdate::ToolCall(
                ToolCall::new(call, title).kind(kind).status(status).content(shown),
            );
        }
        let fields = ToolCallUpdateFields::new().status(status).content(shown);
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call, fields))
    }

    /// A call waits for the editor's answer: announced first, unless it was already.
    pub fn asked(&mut self, session: &Session, request: &ApprovalRequest) -> Option<SessionUpdate> {
        if !self.announced.insert(request.tool_use_id.clone()) {
            return None;
        }
        let kind = content::kind(session.tools().meta(&request.tool).as_ref());
        let (locations, diffs) = content::call_view(&request.tool, &request.input, session.workspace());
        Some(SessionUpdate::ToolCall(
            ToolCall::new(request.tool_use_id.clone(), request.summary.clone())
                .kind(kind)
                .status(ToolCallStatus::Pending)
                .raw_input(request.input.clone())
                .locations(locations)
                .content(diffs),
        ))
    }

    /// A sub-agent's progress, as its `task` call's content (the last 20 lines).
    pub fn progress(&mut self, call: String, data: &SubagentProgress) -> SessionUpdate {
        let lines = self.progress.entry(call.clone()).or_default();
        lines.push(progress_line(data));
        let shown = lines.iter().rev().take(20).rev().cloned().collect::<Vec<_>>().join("\n");
        let fields = ToolCallUpdateFields::new()
            .status(ToolCallStatus::InProgress)
            .content(vec![content::output(&shown)]);
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call, fields))
    }
}

/// One line of a sub-agent's progress.
fn progress_line(p: &SubagentProgress) -> String {
    let who = format!("sub-agent {} ({})", p.id, p.agent);
    match &p.step {
        SubagentStep::Start { description } => format!("{who} started: {description}"),
        SubagentStep::Tool { summary, .. } => format!("{who}: {summary}"),
        SubagentStep::End { ok: true, .. } => format!("{who} finished"),
        SubagentStep::End { ok: false, .. } => format!("{who} failed"),
    }
}
