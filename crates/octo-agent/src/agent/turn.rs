//! One turn: send → stream → tool calls → results → repeat, with rollback on failure.
//!
//! The rollback rule: the history only ever grows by whole rounds. A round is an assistant
//! message plus, when it calls tools, the user message carrying every result. `checkpoint` marks
//! the end of the last complete round; when the turn fails or is cancelled, everything after it
//! is dropped. Cancellation while tools run still completes the round (calls that did not finish
//! get an "interrupted" result), because the tools may already have changed files and the model
//! must be told.

use super::compact::{compact, needs_compaction, recover_overflow};
use super::exec::{execute_round, PlannedCall};
use super::{Agent, TurnOutcome};
use crate::approval::TurnChannel;
use crate::assemble::{Assembled, Assembler};
use crate::context::{LoopDetector, Verdict};
use crate::error::{AgentError, ProviderError};
use crate::event::{AgentEvent, TurnEndReason};
use crate::message::{ContentBlock, Message, Role};
use crate::sender::{Capability, Request};
use crate::usage::{StopReason, Usage};
use futures_util::StreamExt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Holds the agent for the duration of a turn. Whatever happens — an error, a cancellation, or the
/// turn's future being dropped mid-await — the history is cut back to the last checkpoint when
/// this goes out of scope, so an abandoned turn can never leave a `tool_use` without its result.
struct TurnGuard<'a> {
    agent: &'a mut Agent,
    checkpoint: usize,
}

impl Drop for TurnGuard<'_> {
    fn drop(&mut self) {
        self.agent.history.truncate(self.checkpoint);
    }
}

pub(super) async fn run_turn(
    agent: &mut Agent,
    input: Message,
    cancel: &CancellationToken,
    ch: &Arc<TurnChannel>,
) -> Result<TurnOutcome, AgentError> {
    let capability = match (Capability::of(agent.sender.as_ref()), agent.config.streaming) {
        (Capability::ToolStreaming, false) => Capability::Tools,
        (Capability::Streaming, false) => Capability::Buffered,
        (c, _) => c,
    };
    ch.emit(AgentEvent::TurnStart { capability });
    if let Err(e) = validate_input(&input) {
        return Err(fail(ch, e, Usage::default(), 0, None));
    }
    if !agent.tools.is_empty() && !capability.tools() {
        ch.emit(AgentEvent::Notice {
            message: format!(
                "`{}` does not support tool calls; this turn runs as plain chat without tools",
                agent.sender.name()
            ),
        });
    }

    // Tools get a token of their own that also fires when the turn ends or its future is
    // dropped, so nothing a tool started outlives the turn unnoticed.
    let turn_cancel = cancel.child_token();
    let _cancel_tools_on_exit = turn_cancel.clone().drop_guard();
    let cancel = &turn_cancel;
    // Calls left without results by a crash or an abort get error results first.
    if crate::context::repair_dangling(&mut agent.history) > 0 {
        ch.emit(AgentEvent::HistoryReplaced { messages: agent.history.clone() });
    }
    let checkpoint = agent.history.len();
    let mut t = TurnGuard { agent, checkpoint };
    t.agent.history.push(input);
    let mut usage = Usage::default();
    let mut requests = 0u32;
    let mut last_stop: Option<StopReason> = None;
    let mut st = TurnState::default();

    loop {
        if requests >= t.agent.config.max_turns {
            ch.emit(AgentEvent::Notice {
                message: format!(
                    "stopped after {requests} model requests (max_turns); send another message to continue"
                ),
            });
            return Ok(finish(
                &mut t,
                ch,
                TurnEndReason::MaxTurns,
                last_stop.unwrap_or(StopReason::ToolUse),
                usage,
                requests,
                &st,
            ));
        }
        if st.compact_now || (!st.compaction_futile && needs_compaction(t.agent)) {
            let reason = if st.compact_now { "tool" } else { "auto" };
            st.compact_now = false;
            let agent = &mut *t.agent;
            let cp = &mut t.checkpoint;
            let changed = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(fail(ch, AgentError::Cancelled, usage, requests, last_stop)),
                changed = compact(agent, ch, cp, reason, None, reason == "tool") => changed,
            };
            // Nothing could be compacted (one long turn): do not try again before every request.
            st.compaction_futile = !changed;
        }
        requests += 1;
        ch.emit(AgentEvent::RequestStart {
            request: requests,
            continues: std::mem::take(&mut st.continuing),
        });

        let asked_len = t.agent.history.len();
        let assembled = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(AgentError::Cancelled),
            r = request(t.agent, capability, ch, st.max_tokens) => r.map_err(AgentError::from),
        };
        let Assembled { response, invalid_inputs } = match assembled {
            Ok(a) => a,
            Err(AgentError::Provider(ProviderError::ContextTooLong { message, .. }))
                if st.overflow_stage < 3 =>
            {
                st.overflow_stage += 1;
                ch.emit(AgentEvent::Notice {
                    message: format!("the request did not fit ({message}); compacting and retrying"),
                });
                let agent = &mut *t.agent;
                let cp = &mut t.checkpoint;
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(fail(ch, AgentError::Cancelled, usage, requests, last_stop)),
                    () = recover_overflow(agent, ch, cp, st.overflow_stage) => {}
                }
                continue;
            }
            Err(AgentError::Provider(ProviderError::ContextTooLong { message, deficit })) => {
                let e = ProviderError::ContextTooLong {
                    deficit,
                    message: format!("{message} — the conversation does not fit even after compacting it; start a new session (/new)"),
                };
                return Err(fail(ch, e.into(), usage, requests, last_stop));
            }
            Err(e) => {
                return Err(fail(ch, e, usage, requests, last_stop));
            }
        };
        usage += response.usage;
        ch.emit(AgentEvent::Usage { usage: response.usage });
        last_stop = Some(response.stop_reason.clone());
        let prompt_tokens = response.usage.context_tokens();
        if prompt_tokens > 0 {
            t.agent.occupancy =
                crate::context::Occupancy { reported: Some(prompt_tokens), at_len: asked_len };
        }

        let mut message = response.message;
        let truncated = response.stop_reason == StopReason::MaxTokens;
        if truncated && message.has_tool_use() {
            // A tool call cut off at the output limit cannot be run: keep the text, end cleanly.
            message.content.retain(|b| !matches!(b, ContentBlock::ToolUse { .. }));
            st.last_text = Some(message.text());
            if !message.content.is_empty() {
                t.agent.history.push(message);
            }
            ch.emit(AgentEvent::Notice {
                message: "the reply was cut off at the output limit in the middle of a tool call; ask again, or raise --max-tokens".into(),
            });
            return Ok(finish(
                &mut t,
                ch,
                TurnEndReason::Completed,
                StopReason::MaxTokens,
                usage,
                requests,
                &st,
            ));
        }
        if truncated && !message.content.is_empty() {
            if let (false, Some(cap)) = (st.raised_cap, t.agent.config.max_tokens) {
                // First, once: the same request with room for a longer answer.
                st.raised_cap = true;
                st.max_tokens = Some(cap.saturating_mul(2).min(128_000));
                continue;
            }
            if st.continuations < t.agent.config.context.max_continuations {
                st.continuations += 1;
                st.continuing = true;
                st.continued.push_str(&message.text());
                t.agent.history.push(message);
                t.agent.history.push(Message::user(CONTINUE_PROMPT));
                continue;
            }
        }

        let calls: Vec<PlannedCall> = message
            .tool_uses()
            .map(|t| PlannedCall {
                id: t.id.to_owned(),
                name: t.name.to_owned(),
                input: t.input.clone(),
                invalid_input: invalid_inputs.get(t.id).cloned(),
            })
            .collect();
        // An empty answer is not stored: providers reject empty assistant messages.
        st.last_text = Some(message.text());
        if !message.content.is_empty() {
            t.agent.history.push(message);
        }

        if calls.is_empty() {
            let stop = last_stop.clone().unwrap_or(StopReason::EndTurn);
            return Ok(finish(&mut t, ch, TurnEndReason::Completed, stop, usage, requests, &st));
        }

        let mut verdicts = Vec::new();
        let ctx = &t.agent.config.context;
        for c in &calls {
            verdicts.push(st.loops.record(&c.name, &c.input, ctx.loop_warn, ctx.loop_stop));
            st.compact_now |= c.name == crate::context::COMPACT_TOOL;
        }
        let mut results = execute_round(t.agent, calls, cancel, ch).await;
        let mut stop_loop = None;
        for (block, verdict) in results.iter_mut().zip(verdicts) {
            match verdict {
                Verdict::Fine => {}
                Verdict::Warn(w) => append_note(block, &w),
                Verdict::Stop(m) => {
                    append_note(block, &m);
                    stop_loop = Some(m);
                }
            }
        }
        t.agent.history.push(Message::new(Role::User, results));
        commit(t.agent, &mut t.checkpoint, ch);
        if cancel.is_cancelled() {
            return Err(fail(ch, AgentError::Cancelled, usage, requests, last_stop));
        }
        if let Some(m) = stop_loop {
            ch.emit(AgentEvent::Notice { message: m });
            let stop = last_stop.clone().unwrap_or(StopReason::ToolUse);
            return Ok(finish(&mut t, ch, TurnEndReason::LoopDetected, stop, usage, requests, &st));
        }
    }
}

/// Asked after a reply that stopped at the output limit.
const CONTINUE_PROMPT: &str = "Your reply was cut off at the output limit. Continue exactly where you stopped, without repeating anything.";

/// Per-turn state of the context management.
#[derive(Default)]
struct TurnState {
    overflow_stage: u8,
    compaction_futile: bool,
    /// The text of this turn's latest assistant message (not an earlier turn's).
    last_text: Option<String>,
    /// The next request continues a reply cut at the output limit.
    continuing: bool,
    raised_cap: bool,
    max_tokens: Option<u32>,
    continuations: u32,
    continued: String,
    compact_now: bool,
    loops: LoopDetector,
}

/// Commits, emits `TurnEnd` and builds the outcome.
fn finish(
    t: &mut TurnGuard<'_>,
    ch: &TurnChannel,
    reason: TurnEndReason,
    stop_reason: StopReason,
    usage: Usage,
    requests: u32,
    st: &TurnState,
) -> TurnOutcome {
    commit(t.agent, &mut t.checkpoint, ch);
    ch.emit(AgentEvent::TurnEnd { reason, stop_reason: Some(stop_reason.clone()), usage, requests });
    let last = st.last_text.clone().unwrap_or_default();
    let text = if st.continued.is_empty() { last } else { format!("{}{last}", st.continued) };
    TurnOutcome { text, reason, stop_reason, usage, requests }
}

fn append_note(block: &mut ContentBlock, note: &str) {
    if let ContentBlock::ToolResult { content, .. } = block {
        content.push(crate::message::ToolResultPart::Text { text: note.to_owned() });
    }
}

fn validate_input(input: &Message) -> Result<(), AgentError> {
    if input.role != Role::User {
        return Err(AgentError::InvalidInput("a turn starts with a user message".into()));
    }
    let empty =
        input.content.iter().all(|b| matches!(b, ContentBlock::Text { text } if text.trim().is_empty()));
    if empty {
        return Err(AgentError::InvalidInput("the message is empty".into()));
    }
    Ok(())
}

/// Marks everything after the checkpoint as permanent and tells the front ends.
fn commit(agent: &Agent, checkpoint: &mut usize, ch: &TurnChannel) {
    if agent.history.len() > *checkpoint {
        ch.emit(AgentEvent::Committed { messages: agent.history[*checkpoint..].to_vec() });
        *checkpoint = agent.history.len();
    }
}

fn fail(
    ch: &TurnChannel,
    error: AgentError,
    usage: Usage,
    requests: u32,
    stop_reason: Option<StopReason>,
) -> AgentError {
    let reason = if error == AgentError::Cancelled || error == AgentError::Provider(ProviderError::Cancelled)
    {
        TurnEndReason::Cancelled
    } else {
        TurnEndReason::Failed
    };
    ch.emit(AgentEvent::Error { kind: error.kind(), message: error.to_string() });
    ch.emit(AgentEvent::TurnEnd { reason, stop_reason, usage, requests });
    error
}

/// A buffered response's tool calls must carry JSON objects. Adapters pass arguments they could
/// not parse as a string; those calls get an empty object in the history and are answered with an
/// error result, exactly like the streamed path.
fn check_buffered_inputs(mut response: crate::sender::Response) -> Assembled {
    let mut invalid_inputs = std::collections::HashMap::new();
    for block in &mut response.message.content {
        if let ContentBlock::ToolUse { id, input, .. } = block {
            if !input.is_object() {
                let why = match input {
                    serde_json::Value::String(raw) => {
                        let shown: String = raw.chars().take(200).collect();
                        format!("the arguments were not valid JSON: {shown}")
                    }
                    _ => "the arguments must be a JSON object".to_owned(),
                };
                invalid_inputs.insert(id.clone(), why);
                *input = serde_json::Value::Object(Default::default());
            }
        }
    }
    Assembled { response, invalid_inputs }
}

/// Sends one request with the best capability the sender has and assembles the response.
async fn request(
    agent: &Agent,
    capability: Capability,
    ch: &TurnChannel,
    max_tokens: Option<u32>,
) -> Result<Assembled, ProviderError> {
    let cfg = &agent.config;
    let mut req = Request::new(&agent.history)
        .with_max_tokens(max_tokens.or(cfg.max_tokens))
        .with_reasoning(cfg.reasoning);
    if let Some(system) = cfg.system_prompt.as_deref() {
        req = req.with_system(system);
    }
    let sender = agent.sender.as_ref();
    let stream = match capability {
        Capability::ToolStreaming => match sender.as_tool_streaming() {
            Some(s) => Some(s.send_stream_with_tools(req.with_tools(agent.tools.definitions())).await?),
            None => None,
        },
        Capability::Streaming => match sender.as_streaming() {
            Some(s) => Some(s.send_stream(req).await?),
            None => None,
        },
        Capability::Tools | Capability::Buffered => None,
    };
    let mut assembler = Assembler::new();
    match stream {
        Some(mut stream) => {
            while let Some(item) = stream.next().await {
                let event = item?;
                match &event {
                    crate::sender::StreamEvent::TextDelta(t) => {
                        ch.emit(AgentEvent::TextDelta { text: t.clone() })
                    }
                    crate::sender::StreamEvent::ThinkingDelta(t) => {
                        ch.emit(AgentEvent::ThinkingDelta { text: t.clone() })
                    }
                    crate::sender::StreamEvent::Retry { attempt, max_attempts, delay, reason } => {
                        ch.emit(AgentEvent::Retry {
                            attempt: *attempt,
                            max_attempts: *max_attempts,
                            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            reason: reason.clone(),
                        })
                    }
                    _ => {}
                }
                assembler.push(event)?;
            }
            Ok(assembler.finish())
        }
        None => {
            let response = match (capability, sender.as_tool()) {
                (Capability::Tools, Some(t)) => {
                    t.send_with_tools(req.with_tools(agent.tools.definitions())).await?
                }
                _ => sender.send(req).await?,
            };
            for block in &response.message.content {
                match block {
                    ContentBlock::Text { text } => ch.emit(AgentEvent::TextDelta { text: text.clone() }),
                    ContentBlock::Thinking { thinking, .. } => {
                        ch.emit(AgentEvent::ThinkingDelta { text: thinking.clone() })
                    }
                    _ => {}
                }
            }
            Ok(check_buffered_inputs(response))
        }
    }
}
