//! One turn: send → stream → tool calls → results → repeat, with rollback on failure.
//!
//! The turn runs in named steps — prepare (compact, plugins add context), request, handle a
//! truncated reply, run tools, finish — each a method of [`Turn`]; plugins act at the seats
//! between them (see [`crate::plugin`]).
//!
//! The rollback rule: the history only ever grows by whole rounds. A round is an assistant
//! message plus, when it calls tools, the user message carrying every result. `checkpoint` marks
//! the end of the last complete round; when the turn fails or is cancelled, everything after it
//! is dropped. Cancellation while tools run still completes the round (calls that did not finish
//! get an "interrupted" result), because the tools may already have changed files and the model
//! must be told.

use super::compact::{compact, needs_compaction, recover_overflow};
use super::exec::{execute_round, PlannedCall};
use super::send::request;
use super::state::{Agent, TurnOutcome};
use crate::assemble::Assembled;
use crate::channel::TurnChannel;
use crate::context::{LoopDetector, Verdict};
use crate::error::{AgentError, ProviderError};
use crate::event::{AgentEvent, CompactReason, TurnEndReason};
use crate::message::{ContentBlock, Message, Role};
use crate::plugin::FinishInfo;
use crate::sender::Capability;
use crate::usage::{StopReason, Usage};
use std::collections::HashMap;
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
    // Calls left without results by a crash or an abort get error results first.
    if crate::context::repair_dangling(&mut agent.history) > 0 {
        ch.emit(AgentEvent::HistoryReplaced { messages: agent.history.clone() });
    }
    let checkpoint = agent.history.len();
    let guard = TurnGuard { agent, checkpoint };
    guard.agent.history.push(input);
    let turn = Turn {
        t: guard,
        ch,
        cancel: &turn_cancel,
        capability,
        usage: Usage::default(),
        requests: 0,
        last_stop: None,
        st: TurnState::default(),
    };
    turn.run().await
}

/// A turn in progress: the agent (behind its rollback guard) and what the steps share.
struct Turn<'a, 'c> {
    t: TurnGuard<'a>,
    ch: &'c Arc<TurnChannel>,
    cancel: &'c CancellationToken,
    capability: Capability,
    usage: Usage,
    requests: u32,
    last_stop: Option<StopReason>,
    st: TurnState,
}

/// What the truncation step decided about a reply.
enum Reply {
    /// Send the request again (with a higher output cap, or asking to continue).
    Again,
    /// The turn is over.
    Done(TurnOutcome),
    /// Go on with this message and the reasons its calls' arguments were invalid.
    Use(Message, HashMap<String, String>),
}

impl Turn<'_, '_> {
    /// The named steps, in order, until one of them ends the turn.
    async fn run(mut self) -> Result<TurnOutcome, AgentError> {
        loop {
            if let Some(outcome) = self.check_request_limit() {
                return Ok(outcome);
            }
            self.prepare().await?;
            if let Some(outcome) = self.check_budget().await {
                return Ok(outcome);
            }
            let Some(assembled) = self.request().await? else { continue };
            let (message, invalid) = match self.handle_truncated(assembled) {
                Reply::Again => continue,
                Reply::Done(outcome) => return Ok(outcome),
                Reply::Use(message, invalid) => (message, invalid),
            };
            let calls = self.record_reply(message, &invalid);
            if calls.is_empty() {
                match self.finish_step().await? {
                    Some(outcome) => return Ok(outcome),
                    None => continue,
                }
            }
            if let Some(outcome) = self.run_tools(calls).await? {
                return Ok(outcome);
            }
        }
    }

    fn fail(&self, error: AgentError) -> AgentError {
        fail(self.ch, error, self.usage, self.requests, self.last_stop.clone())
    }

    fn finish(&mut self, reason: TurnEndReason, stop: StopReason) -> TurnOutcome {
        finish(&mut self.t, self.ch, reason, stop, self.usage, self.requests, &self.st)
    }

    /// Stops the turn when it has made as many requests as `max_turns` allows.
    fn check_request_limit(&mut self) -> Option<TurnOutcome> {
        if self.requests < self.t.agent.config.max_turns {
            return None;
        }
        self.ch.emit(AgentEvent::Notice {
            message: format!(
                "stopped after {} model requests (max_turns); send another message to continue",
                self.requests
            ),
        });
        let stop = self.last_stop.clone().unwrap_or(StopReason::ToolUse);
        Some(self.finish(TurnEndReason::MaxTurns, stop))
    }

    /// Lets plugins stop the turn before the request goes out (a spending limit).
    async fn check_budget(&mut self) -> Option<TurnOutcome> {
        let agent = &*self.t.agent;
        if agent.plugins.is_empty() {
            return None;
        }
        let info = crate::plugin::SendInfo {
            request: self.requests + 1,
            prompt_tokens: agent.context_tokens(),
            max_output_tokens: self.st.max_tokens.or(agent.config.max_tokens),
            turn_usage: self.usage,
        };
        let why = agent.plugins.before_send(info).await?;
        self.ch.emit(AgentEvent::Notice { message: why });
        let stop = self.last_stop.clone().unwrap_or(StopReason::EndTurn);
        Some(self.finish(TurnEndReason::BudgetExceeded, stop))
    }

    /// Step 1, prepare: compact when the window is filling up (or the model asked), then let
    /// plugins add context to the newest message.
    async fn prepare(&mut self) -> Result<(), AgentError> {
        // A window the server reported (a local server, asked once) beats the catalog's guess.
        if let Some(w) = self.t.agent.sender.context_window() {
            self.t.agent.config.context.window = w;
        }
        if self.st.compact_now || (!self.st.compaction_futile && needs_compaction(self.t.agent)) {
            let reason = if self.st.compact_now { CompactReason::Tool } else { CompactReason::Auto };
            self.st.compact_now = false;
            let agent = &mut *self.t.agent;
            let cp = &mut self.t.checkpoint;
            let changed = tokio::select! {
                biased;
                () = self.cancel.cancelled() => None,
                changed = compact(agent, self.ch, cp, reason, None, reason == CompactReason::Tool) => Some(changed),
            };
            let Some(changed) = changed else { return Err(self.fail(AgentError::Cancelled)) };
            // Nothing could be compacted (one long turn): do not try again before every request.
            self.st.compaction_futile = !changed;
        }
        // A retry of the same request (a higher output cap, after an overflow) already has the
        // plugins' context.
        let retry = std::mem::take(&mut self.st.retrying);
        if !self.t.agent.plugins.is_empty() && !retry {
            let agent = &mut *self.t.agent;
            let added = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(self.fail(AgentError::Cancelled)),
                added = agent.plugins.before_request(self.requests + 1, &agent.history) => added,
            };
            if let Some(text) = added {
                self.add_context(text);
            }
        }
        Ok(())
    }

    /// Adds text to the newest message when it is still uncommitted (the turn's input), else as
    /// a message of its own: committed messages never change, so what the model saw is what the
    /// session file holds.
    fn add_context(&mut self, text: String) {
        let history = &mut self.t.agent.history;
        let uncommitted = history.len() > self.t.checkpoint;
        let block = ContentBlock::Text { text };
        match history.last_mut() {
            Some(m) if m.role == Role::User && uncommitted => m.content.push(block),
            _ => history.push(Message::new(Role::User, vec![block])),
        }
    }

    /// Step 2, request: send the conversation and assemble the reply. `None` when the request
    /// did not fit and the history was compacted: the caller asks again.
    async fn request(&mut self) -> Result<Option<Assembled>, AgentError> {
        self.requests += 1;
        self.ch.emit(AgentEvent::RequestStart {
            request: self.requests,
            continues: std::mem::take(&mut self.st.continuing),
        });
        let asked_len = self.t.agent.history.len();
        let assembled = tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(AgentError::Cancelled),
            r = request(self.t.agent, self.capability, self.ch, self.st.max_tokens) => r.map_err(AgentError::from),
        };
        let assembled = match assembled {
            Ok(a) => a,
            Err(AgentError::Provider(ProviderError::ContextTooLong { message, .. }))
                if self.st.overflow_stage < 3 =>
            {
                self.st.overflow_stage += 1;
                self.ch.emit(AgentEvent::Notice {
                    message: format!("the request did not fit ({message}); compacting and retrying"),
                });
                let agent = &mut *self.t.agent;
                let cp = &mut self.t.checkpoint;
                let recovered = tokio::select! {
                    biased;
                    () = self.cancel.cancelled() => false,
                    () = recover_overflow(agent, self.ch, cp, self.st.overflow_stage) => true,
                };
                self.st.retrying = recovered;
                return if recovered { Ok(None) } else { Err(self.fail(AgentError::Cancelled)) };
            }
            Err(AgentError::Provider(ProviderError::ContextTooLong { message, deficit })) => {
                let e = ProviderError::ContextTooLong {
                    deficit,
                    message: format!("{message} — the conversation does not fit even after compacting it; start a new session (/new)"),
                };
                return Err(self.fail(e.into()));
            }
            Err(e) => return Err(self.fail(e)),
        };
        let mut usage = assembled.response.usage;
        if usage.is_zero() && !assembled.response.message.content.is_empty() {
            // The server said nothing about tokens (some local servers): estimate, and say so.
            let fixed = self.t.agent.fixed_tokens();
            usage = Usage {
                input_tokens: fixed + crate::context::estimate_tokens(&self.t.agent.history[..asked_len]),
                output_tokens: crate::context::estimate_tokens(std::slice::from_ref(
                    &assembled.response.message,
                )),
                estimated: true,
                reasoning_tokens: 0,
                ..Usage::default()
            };
        }
        self.usage += usage;
        self.ch.emit(AgentEvent::Usage { usage });
        self.last_stop = Some(assembled.response.stop_reason.clone());
        let prompt_tokens = usage.context_tokens();
        if prompt_tokens > 0 {
            self.t.agent.occupancy =
                crate::context::Occupancy { reported: Some(prompt_tokens), at_len: asked_len };
        }
        Ok(Some(assembled))
    }

    /// Step 3, a reply cut off at the output limit: a cut tool call ends the turn cleanly; cut
    /// text is asked again once with a higher cap, then continued.
    fn handle_truncated(&mut self, assembled: Assembled) -> Reply {
        let Assembled { response, invalid_inputs } = assembled;
        let mut message = response.message;
        if response.stop_reason != StopReason::MaxTokens {
            return Reply::Use(message, invalid_inputs);
        }
        if message.has_tool_use() {
            // A tool call cut off at the output limit cannot be run: keep the text, end cleanly.
            message.content.retain(|b| !matches!(b, ContentBlock::ToolUse { .. }));
            self.st.last_text = Some(message.text());
            if !message.content.is_empty() {
                self.t.agent.history.push(message);
            }
            self.ch.emit(AgentEvent::Notice {
                message: "the reply was cut off at the output limit in the middle of a tool call; ask again, or raise --max-tokens".into(),
            });
            return Reply::Done(self.finish(TurnEndReason::Completed, StopReason::MaxTokens));
        }
        if let (true, Some(cap)) = (self.t.agent.config.max_tokens_is_budget, self.t.agent.config.max_tokens)
        {
            self.ch.emit(AgentEvent::Notice {
                message: format!("the answer stopped at the output limit you set ({cap} tokens); raise --max-tokens for a longer one"),
            });
            return Reply::Use(message, invalid_inputs);
        }
        if !message.content.is_empty() {
            if let (false, Some(cap)) = (self.st.raised_cap, self.t.agent.config.max_tokens) {
                // First, once: the same request with room for a longer answer.
                self.st.raised_cap = true;
                self.st.max_tokens = Some(cap.saturating_mul(2).min(128_000));
                self.st.retrying = true;
                return Reply::Again;
            }
            if self.st.continuations > 0 && super::cut::repeats(&self.st.continued, &message.text()) {
                // Continuing did not move the answer on: it only says again what it said.
                self.ch.emit(AgentEvent::Notice {
                    message: "the model repeated itself instead of continuing; the answer stops here".into(),
                });
                return Reply::Use(message, invalid_inputs);
            }
            if self.st.continuations < self.t.agent.config.context.max_continuations {
                self.st.continuations += 1;
                self.st.continuing = true;
                self.st.continued.push_str(&message.text());
                self.t.agent.history.push(message);
                self.t.agent.history.push(Message::user(super::cut::CONTINUE_PROMPT));
                return Reply::Again;
            }
        }
        Reply::Use(message, invalid_inputs)
    }

    /// Keeps the reply in the history and lists its tool calls.
    fn record_reply(&mut self, message: Message, invalid: &HashMap<String, String>) -> Vec<PlannedCall> {
        let calls: Vec<PlannedCall> = message
            .tool_uses()
            .map(|t| PlannedCall {
                id: t.id.to_owned(),
                name: t.name.to_owned(),
                input: t.input.clone(),
                invalid_input: invalid.get(t.id).cloned(),
                edited: false,
            })
            .collect();
        // An empty answer is not stored: providers reject empty assistant messages.
        self.st.last_text = Some(message.text());
        if !message.content.is_empty() {
            self.t.agent.history.push(message);
        }
        calls
    }

    /// Step 5, finish: the model answered without tool calls. The answer is committed (a Stop hook
    /// reads it in the transcript), then plugins may make the turn go on (`None`); else it ends.
    async fn finish_step(&mut self) -> Result<Option<TurnOutcome>, AgentError> {
        if !self.t.agent.plugins.is_empty() {
            commit(self.t.agent, &mut self.t.checkpoint, self.ch);
            let answer = self.st.last_text.clone().unwrap_or_default();
            let info =
                FinishInfo { answer: &answer, requests: self.requests, extensions: self.st.extensions };
            let more = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(self.fail(AgentError::Cancelled)),
                more = self.t.agent.plugins.before_finish(info) => more,
            };
            if let Some(text) = more {
                self.st.extensions += 1;
                self.t.agent.history.push(Message::user(text));
                return Ok(None);
            }
        }
        Ok(Some(self.finish(TurnEndReason::Completed, self.last_stop.clone().unwrap_or(StopReason::EndTurn))))
    }

    /// Step 4, run tools: every call of the reply, then one message with every result; the round
    /// is committed. Ends the turn when it was cancelled or the model is looping.
    async fn run_tools(&mut self, calls: Vec<PlannedCall>) -> Result<Option<TurnOutcome>, AgentError> {
        let mut verdicts = Vec::new();
        let ctx = &self.t.agent.config.context;
        for c in &calls {
            verdicts.push(self.st.loops.record(&c.name, &c.input, ctx.loop_warn, ctx.loop_stop));
            self.st.compact_now |= c.name == crate::context::COMPACT_TOOL;
        }
        let mut results = execute_round(self.t.agent, calls, self.cancel, self.ch).await;
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
        self.t.agent.history.push(Message::new(Role::User, results));
        commit(self.t.agent, &mut self.t.checkpoint, self.ch);
        if self.cancel.is_cancelled() {
            return Err(self.fail(AgentError::Cancelled));
        }
        if let Some(m) = stop_loop {
            self.ch.emit(AgentEvent::Notice { message: m });
            let stop = self.last_stop.clone().unwrap_or(StopReason::ToolUse);
            return Ok(Some(self.finish(TurnEndReason::LoopDetected, stop)));
        }
        Ok(None)
    }
}

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
    /// How many times plugins made the turn go on after an answer.
    extensions: u32,
    /// The next request repeats the last one (plugins' context is already there).
    retrying: bool,
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
