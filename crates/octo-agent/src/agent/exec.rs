//! Running the tool calls of one response: permission, approval, execution, truncation.
//!
//! Calls are grouped in their original order: a run of consecutive calls to tools that are both
//! read-only and concurrency-safe executes in parallel; every other call runs alone, in order.
//! Results always come back in the order of the calls, one per call, so the history never holds a
//! `tool_use` without its `tool_result`.

use super::state::Agent;
use crate::approval::{ApprovalDecision, ApprovalRequest, DenyKind, PermissionDecision, PermissionQuery};
use crate::channel::{AnsweredBy, TurnChannel};
use crate::event::AgentEvent;
use crate::message::{ContentBlock, ToolResultPart};
use crate::plugin::Joint;
use crate::spec::{OutputKind, ToolMeta, ToolOutcome, ToolOutput};
use crate::tool::{ToolContext, ToolExecutor};
use crate::truncate::truncate_middle;
use futures_util::future::join_all;
use futures_util::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a cancelled tool may take to stop on its own (and report what it did) before its
/// future is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// A tool call from the model, ready to be checked and run.
#[derive(Debug, Clone)]
pub(super) struct PlannedCall {
    pub id: String,
    pub name: String,
    pub input: Value,
    /// Why the arguments could not be parsed, when they could not.
    pub invalid_input: Option<String>,
    /// The user changed the arguments before it ran (the model is told).
    pub edited: bool,
}

enum Prepared {
    /// May run; `approved` when the user approved this exact call.
    Run { call: PlannedCall, tool: Arc<dyn ToolExecutor>, approved: bool },
    /// Will not run; the output says why (and carries the outcome).
    Done { call: PlannedCall, output: ToolOutput },
}

pub(super) async fn execute_round(
    agent: &Agent,
    calls: Vec<PlannedCall>,
    cancel: &CancellationToken,
    ch: &Arc<TurnChannel>,
) -> Vec<ContentBlock> {
    let mut results = Vec::with_capacity(calls.len());
    for batch in batches(agent, calls) {
        let mut prepared = Vec::with_capacity(batch.len());
        for call in batch {
            prepared.push(prepare(agent, call, cancel, ch).await);
        }
        let parallel = prepared.iter().filter(|p| matches!(p, Prepared::Run { .. })).count() > 1;
        if parallel {
            let outputs = join_all(prepared.into_iter().map(|p| finish(agent, p, cancel, ch))).await;
            results.extend(outputs);
        } else {
            for p in prepared {
                results.push(finish(agent, p, cancel, ch).await);
            }
        }
    }
    results
}

/// Splits calls into batches: consecutive parallel-safe calls together, any other call alone.
fn batches(agent: &Agent, calls: Vec<PlannedCall>) -> Vec<Vec<PlannedCall>> {
    let mut out: Vec<Vec<PlannedCall>> = Vec::new();
    let mut last_parallel = false;
    for call in calls {
        let parallel = call.invalid_input.is_none()
            && agent.tools.meta(&call.name).is_some_and(super::super::spec::ToolMeta::parallel);
        match out.last_mut() {
            Some(batch) if parallel && last_parallel => batch.push(call),
            _ => out.push(vec![call]),
        }
        last_parallel = parallel;
    }
    out
}

fn refused(call: PlannedCall, text: impl Into<String>, outcome: ToolOutcome) -> Prepared {
    Prepared::Done { call, output: ToolOutput::refused(text, outcome) }
}

/// What the plugins and the gate decided about a call, before anyone is asked.
enum Gate {
    /// Will not run: why, and the outcome.
    Refuse(String, ToolOutcome),
    /// May run without asking.
    Run,
    /// The user is asked; `gate_asked` when the question is the gate's own.
    Ask { summary: Option<String>, reason: Option<String>, gate_asked: bool },
}

/// Checks a call: known tool, valid arguments, plugins, permission (asking the user when needed).
async fn prepare(
    agent: &Agent,
    mut call: PlannedCall,
    cancel: &CancellationToken,
    ch: &TurnChannel,
) -> Prepared {
    if cancel.is_cancelled() {
        return Prepared::Done { call, output: interrupted_before_start() };
    }
    let (tool, meta) = match find_tool(agent, &call) {
        Ok(found) => found,
        Err(msg) => return refused(call, msg, ToolOutcome::UnknownTool),
    };
    if let Some(msg) = invalid_input(&call) {
        return refused(call, msg, ToolOutcome::InvalidInput);
    }
    let Some(joint) = ask_plugins(agent, &mut call, meta, cancel).await else {
        return Prepared::Done { call, output: interrupted_before_start() };
    };
    let (summary, reason, gate_asked) = match check_gate(agent, &call, meta, joint) {
        Gate::Refuse(msg, outcome) => return refused(call, msg, outcome),
        Gate::Run => return Prepared::Run { call, tool, approved: false },
        Gate::Ask { summary, reason, gate_asked } => (summary, reason, gate_asked),
    };
    let request = approval_request(agent, &call, meta, summary, reason);
    let (decision, by) = ask_user(agent, &call, meta, request, cancel, ch).await;
    apply_answer(agent, call, tool, meta, (decision, by), gate_asked)
}

/// The call's tool and its description, or why there is none.
fn find_tool<'a>(
    agent: &'a Agent,
    call: &PlannedCall,
) -> Result<(Arc<dyn ToolExecutor>, &'a ToolMeta), String> {
    if let (Some(tool), Some(meta)) = (agent.tools.get(&call.name).cloned(), agent.tools.meta(&call.name)) {
        return Ok((tool, meta));
    }
    let available: Vec<&str> = agent.tools.names().collect();
    Err(if available.is_empty() {
        format!("there is no tool named `{}`; no tools are available in this session", call.name)
    } else {
        format!("there is no tool named `{}`; available tools: {}", call.name, available.join(", "))
    })
}

/// What the model is told when the call's arguments could not be parsed.
fn invalid_input(call: &PlannedCall) -> Option<String> {
    let why = call.invalid_input.as_ref()?;
    Some(format!("could not run `{}`: {why}. Call the tool again with a valid JSON object.", call.name))
}

/// What the plugins say about the call (they may change its arguments); `None` when cancelled.
async fn ask_plugins(
    agent: &Agent,
    call: &mut PlannedCall,
    meta: &ToolMeta,
    cancel: &CancellationToken,
) -> Option<Joint> {
    if agent.plugins.is_empty() {
        return Some(Joint::Continue);
    }
    tokio::select! {
        biased;
        () = cancel.cancelled() => None,
        j = agent.plugins.before_tool(&call.id, &call.name, &mut call.input, meta) => Some(j),
    }
}

/// The gate's question about a call.
fn query<'a>(agent: &'a Agent, call: &'a PlannedCall, meta: &'a ToolMeta) -> PermissionQuery<'a> {
    PermissionQuery {
        tool_use_id: &call.id,
        tool: &call.name,
        input: &call.input,
        meta,
        cwd: &agent.config.cwd,
    }
}

/// Combines the plugins' verdict with the gate's; a plugin's refusal is final, so the gate is
/// not consulted then.
fn check_gate(agent: &Agent, call: &PlannedCall, meta: &ToolMeta, joint: Joint) -> Gate {
    if let Joint::Deny { plugin, reason } = joint {
        return Gate::Refuse(
            format!("`{}` was refused by `{plugin}`: {reason}", call.name),
            ToolOutcome::DeniedByPlugin,
        );
    }
    // Only the gate's own question covers what a tool would otherwise ask about itself (a write
    // outside the workspace): a question a plugin adds does not name that, so the tool still asks.
    match (agent.gate.check(&query(agent, call, meta)), joint) {
        (PermissionDecision::Deny { message, kind }, _) => Gate::Refuse(message, deny_outcome(kind)),
        (PermissionDecision::Allow, Joint::Ask(reason)) => {
            Gate::Ask { summary: None, reason, gate_asked: false }
        }
        (PermissionDecision::Allow, _) | (PermissionDecision::Ask { .. }, Joint::Allow) => Gate::Run,
        (PermissionDecision::Ask { summary, reason }, Joint::Ask(Some(also))) => {
            let reason = Some(match reason {
                Some(r) => format!("{r}; {also}"),
                None => also,
            });
            Gate::Ask { summary, reason, gate_asked: true }
        }
        (PermissionDecision::Ask { summary, reason }, _) => Gate::Ask { summary, reason, gate_asked: true },
    }
}

/// The outcome a refusal of the gate's kind records.
fn deny_outcome(kind: DenyKind) -> ToolOutcome {
    match kind {
        DenyKind::Rule => ToolOutcome::DeniedByRule,
        DenyKind::PlanMode => ToolOutcome::BlockedByPlanMode,
        DenyKind::HardDeny => ToolOutcome::HardDenied,
    }
}

/// The question put to the user about a call.
fn approval_request(
    agent: &Agent,
    call: &PlannedCall,
    meta: &ToolMeta,
    summary: Option<String>,
    reason: Option<String>,
) -> ApprovalRequest {
    let mut request = ApprovalRequest::new(
        call.id.clone(),
        call.name.clone(),
        call.input.clone(),
        summary.unwrap_or_else(|| agent.tools.summary(&call.name, &call.input)),
    );
    request.reason = reason;
    request.action = meta.verb().to_owned();
    if let crate::spec::Subject::Command { field } = &meta.subject {
        request.editable = Some(field.clone());
        request.cwd = Some(agent.config.cwd.display().to_string());
    }
    request.preview = agent.tools.get(&call.name).and_then(|t| t.preview(&call.input, &agent.config.cwd));
    // A command longer than its one-line summary is shown whole: what is approved is what runs.
    if let (None, Some(full)) = (&request.preview, meta.subject.value(&call.input)) {
        if full.trim() != request.summary.trim() {
            request.preview = Some(crate::spec::Preview::text(full));
        }
    }
    request
}

/// Asks the user and lets the gate remember the answer.
async fn ask_user(
    agent: &Agent,
    call: &PlannedCall,
    meta: &ToolMeta,
    request: ApprovalRequest,
    cancel: &CancellationToken,
    ch: &TurnChannel,
) -> (ApprovalDecision, AnsweredBy) {
    let (decision, by) = ch.ask_approval(request, cancel).await;
    // Only the user's own answer is remembered (not a denial for want of anyone to ask).
    if by == AnsweredBy::User && !cancel.is_cancelled() {
        agent.gate.remember(&query(agent, call, meta), &decision);
    }
    (decision, by)
}

/// Turns the user's answer into a call that runs or a refusal.
fn apply_answer(
    agent: &Agent,
    call: PlannedCall,
    tool: Arc<dyn ToolExecutor>,
    meta: &ToolMeta,
    answer: (ApprovalDecision, AnsweredBy),
    gate_asked: bool,
) -> Prepared {
    match answer {
        (ApprovalDecision::Allow | ApprovalDecision::AllowAlways, _) => {
            Prepared::Run { call, tool, approved: gate_asked }
        }
        (ApprovalDecision::Edited { input }, AnsweredBy::User) if input.is_object() => {
            run_edited(agent, call, tool, meta, input)
        }
        (ApprovalDecision::Edited { .. }, _) => {
            refused(call, "The user's edit was not a valid set of arguments.", ToolOutcome::DeniedByUser)
        }
        (ApprovalDecision::Deny { .. }, AnsweredBy::Cancelled) => {
            Prepared::Done { call, output: interrupted_before_start() }
        }
        (ApprovalDecision::Deny { message }, AnsweredBy::Nobody) => {
            let text = message.unwrap_or_else(|| crate::channel::NO_FRONT_END.to_owned());
            refused(call, text, ToolOutcome::DeniedUnattended)
        }
        (ApprovalDecision::Deny { message }, AnsweredBy::User)
        | (ApprovalDecision::DenyAlways { message }, _) => {
            let mut text = String::from("The user denied this tool call.");
            if let Some(m) = message {
                text.push(' ');
                text.push_str(&m);
            }
            refused(call, text, ToolOutcome::DeniedByUser)
        }
    }
}

/// Runs the call with the arguments the user wrote, unless the gate refuses them outright.
fn run_edited(
    agent: &Agent,
    mut call: PlannedCall,
    tool: Arc<dyn ToolExecutor>,
    meta: &ToolMeta,
    input: Value,
) -> Prepared {
    call.input = input;
    call.edited = true;
    // The user wrote these arguments, so their yes covers them; what no yes lifts still holds.
    if let PermissionDecision::Deny { message, kind } = agent.gate.check(&query(agent, &call, meta)) {
        let msg = format!("the user's edit of this call was refused: {message}");
        return refused(call, msg, deny_outcome(kind));
    }
    Prepared::Run { call, tool, approved: true }
}

/// Runs a prepared call (if it may run) and turns its output into a `tool_result` block.
async fn finish(
    agent: &Agent,
    prepared: Prepared,
    cancel: &CancellationToken,
    ch: &Arc<TurnChannel>,
) -> ContentBlock {
    let (call, output, duration_ms) = match prepared {
        Prepared::Done { call, output } => (call, output, 0),
        // Approvals of later calls in the batch may have been pending when the user cancelled.
        Prepared::Run { call, .. } if cancel.is_cancelled() => (call, interrupted_before_start(), 0),
        Prepared::Run { call, tool, approved } => {
            ch.emit(AgentEvent::ToolCallStart {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
                summary: agent.tools.summary(&call.name, &call.input),
            });
            let started = Instant::now();
            let ctx = ToolContext::attached(
                agent.config.cwd.clone(),
                call.id.clone(),
                cancel.clone(),
                Arc::clone(ch),
            )
            .with_user_approved(approved);
            let mut output = run_tool(tool.as_ref(), &call, &ctx, cancel).await;
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            if let (Some(meta), false) = (agent.tools.meta(&call.name), agent.plugins.is_empty()) {
                if output.outcome().ran() && !cancel.is_cancelled() {
                    let plugins =
                        agent.plugins.after_tool(&call.id, &call.name, &call.input, meta, &mut output);
                    // A slow plugin must not hold up Ctrl-C: the result then stays as the tool left it.
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => {}
                        () = plugins => {}
                    }
                }
            }
            (call, output, ms)
        }
    };
    let mut output = cap_output(output, agent.config.max_tool_output_bytes);
    if call.edited && output.outcome().ran() {
        let note = format!(
            "[the user edited this call before it ran; it ran with these arguments: {}]\n",
            call.input
        );
        output.content.insert(0, ToolResultPart::Text { text: note });
    }
    let outcome = output.outcome();
    let kind = match agent.tools.meta(&call.name) {
        Some(m) if outcome == ToolOutcome::Ran => m.output,
        _ => OutputKind::Plain,
    };
    let summary = agent.tools.summary(&call.name, &call.input);
    ch.emit(AgentEvent::ToolCallEnd {
        id: call.id.clone(),
        summary,
        name: call.name,
        output: output.text_content(),
        is_error: output.is_error,
        outcome,
        duration_ms,
        kind,
    });
    ContentBlock::ToolResult { tool_use_id: call.id, content: output.content, is_error: output.is_error }
}

async fn run_tool(
    tool: &dyn ToolExecutor,
    call: &PlannedCall,
    ctx: &ToolContext,
    cancel: &CancellationToken,
) -> ToolOutput {
    let fut = AssertUnwindSafe(tool.execute(call.input.clone(), ctx)).catch_unwind();
    tokio::pin!(fut);
    // Cancellation is checked first: a tool that returns because it saw the token fire is an
    // interrupted call, whichever branch would have been polled first.
    let outcome = tokio::select! {
        biased;
        () = cancel.cancelled() => match tokio::time::timeout(CANCEL_GRACE, &mut fut).await {
            Ok(r) => r.map(mark_interrupted),
            Err(_) => Ok(ToolOutput::refused("interrupted by the user before the tool finished", ToolOutcome::Interrupted)),
        },
        r = &mut fut => r,
    };
    outcome.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        ToolOutput::error(format!("the tool `{}` crashed: {what}", call.name))
    })
}

fn mark_interrupted(mut output: ToolOutput) -> ToolOutput {
    output.is_error = true;
    output.outcome = Some(ToolOutcome::Interrupted);
    output.content.push(ToolResultPart::Text { text: "[interrupted by the user]".into() });
    output
}

fn interrupted_before_start() -> ToolOutput {
    ToolOutput::refused(
        "not run: the user interrupted the turn before this call started",
        ToolOutcome::Interrupted,
    )
}

fn cap_output(mut output: ToolOutput, max_bytes: usize) -> ToolOutput {
    for part in &mut output.content {
        if let ToolResultPart::Text { text } = part {
            if text.len() > max_bytes {
                *text = truncate_middle(text, max_bytes);
            }
        }
    }
    output
}
