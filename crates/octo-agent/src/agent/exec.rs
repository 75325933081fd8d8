//! Running the tool calls of one response: permission, approval, execution, truncation.
//!
//! Calls are grouped in their original order: a run of consecutive calls to tools that are both
//! read-only and concurrency-safe executes in parallel; every other call runs alone, in order.
//! Results always come back in the order of the calls, one per call, so the history never holds a
//! `tool_use` without its `tool_result`.

use super::Agent;
use crate::approval::{ApprovalDecision, ApprovalRequest, PermissionDecision, PermissionQuery, TurnChannel};
use crate::event::AgentEvent;
use crate::message::{ContentBlock, ToolResultPart};
use crate::tool::{ToolContext, ToolExecutor, ToolOutput};
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
}

enum Prepared {
    /// May run; `true` when the user approved this exact call.
    Run(PlannedCall, Arc<dyn ToolExecutor>, bool),
    Done(PlannedCall, ToolOutput),
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
        let parallel = prepared.iter().filter(|p| matches!(p, Prepared::Run(..))).count() > 1;
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
            && agent.tools.get(&call.name).is_some_and(|t| t.read_only() && t.concurrency_safe());
        match out.last_mut() {
            Some(batch) if parallel && last_parallel => batch.push(call),
            _ => out.push(vec![call]),
        }
        last_parallel = parallel;
    }
    out
}

/// Checks a call: known tool, valid arguments, permission (asking the user when needed).
async fn prepare(agent: &Agent, call: PlannedCall, cancel: &CancellationToken, ch: &TurnChannel) -> Prepared {
    if cancel.is_cancelled() {
        return Prepared::Done(call, interrupted_before_start());
    }
    let Some(tool) = agent.tools.get(&call.name).cloned() else {
        let available: Vec<&str> = agent.tools.names().collect();
        let msg = if available.is_empty() {
            format!("there is no tool named `{}`; no tools are available in this session", call.name)
        } else {
            format!("there is no tool named `{}`; available tools: {}", call.name, available.join(", "))
        };
        return Prepared::Done(call, ToolOutput::error(msg));
    };
    if let Some(why) = &call.invalid_input {
        let msg =
            format!("could not run `{}`: {why}. Call the tool again with a valid JSON object.", call.name);
        return Prepared::Done(call, ToolOutput::error(msg));
    }
    let query = PermissionQuery {
        tool_use_id: &call.id,
        tool: &call.name,
        input: &call.input,
        read_only: tool.read_only(),
        cwd: &agent.config.cwd,
    };
    match agent.gate.check(&query) {
        PermissionDecision::Allow => Prepared::Run(call, tool, false),
        PermissionDecision::Deny { message } => Prepared::Done(call, ToolOutput::error(message)),
        PermissionDecision::Ask { summary, reason } => {
            let mut request = ApprovalRequest::new(
                call.id.clone(),
                call.name.clone(),
                call.input.clone(),
                summary.unwrap_or_else(|| summarize(&call.name, &call.input)),
            );
            request.reason = reason;
            let decision = ch.request_approval(request, cancel).await;
            // A denial caused by cancellation is not the user's answer: nothing to remember.
            if !cancel.is_cancelled() {
                agent.gate.remember(&query, &decision);
            }
            match decision {
                ApprovalDecision::Allow | ApprovalDecision::AllowAlways => Prepared::Run(call, tool, true),
                ApprovalDecision::Deny { message } => {
                    let mut text = String::from("The user denied this tool call.");
                    if let Some(m) = message {
                        text.push(' ');
                        text.push_str(&m);
                    }
                    Prepared::Done(call, ToolOutput::error(text))
                }
            }
        }
    }
}

/// Runs a prepared call (if it may run) and turns its output into a `tool_result` block.
async fn finish(
    agent: &Agent,
    prepared: Prepared,
    cancel: &CancellationToken,
    ch: &Arc<TurnChannel>,
) -> ContentBlock {
    let (call, output, duration_ms) = match prepared {
        Prepared::Done(call, output) => (call, output, 0),
        // Approvals of later calls in the batch may have been pending when the user cancelled.
        Prepared::Run(call, ..) if cancel.is_cancelled() => (call, interrupted_before_start(), 0),
        Prepared::Run(call, tool, user_approved) => {
            ch.emit(AgentEvent::ToolCallStart {
                id: call.id.clone(),
                name: call.name.clone(),
                input: call.input.clone(),
            });
            let started = Instant::now();
            let ctx = ToolContext::attached(
                agent.config.cwd.clone(),
                call.id.clone(),
                cancel.clone(),
                Arc::clone(ch),
            )
            .with_user_approved(user_approved);
            let output = run_tool(tool.as_ref(), &call, &ctx, cancel).await;
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            (call, output, ms)
        }
    };
    let output = cap_output(output, agent.config.max_tool_output_bytes);
    ch.emit(AgentEvent::ToolCallEnd {
        id: call.id.clone(),
        name: call.name,
        output: output.text_content(),
        is_error: output.is_error,
        duration_ms,
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
            Err(_) => Ok(ToolOutput::error("interrupted by the user before the tool finished")),
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
    output.content.push(ToolResultPart::Text { text: "[interrupted by the user]".into() });
    output
}

fn interrupted_before_start() -> ToolOutput {
    ToolOutput::error("not run: the user interrupted the turn before this call started")
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

/// A one-line description of a call for approval prompts: the tool and its compact arguments.
fn summarize(name: &str, input: &Value) -> String {
    let args = input.to_string();
    let short: String = args.chars().take(300).collect();
    let more = if short.len() < args.len() { "…" } else { "" };
    format!("{name} {short}{more}")
}
