//! Plugins: code that joins a turn at its named seats.
//!
//! A turn runs in named steps (prepare and compact, request, handle a truncated reply, run tools,
//! finish). Between them are seats where a [`Plugin`] may act:
//!
//! | seat | when | a plugin may |
//! |---|---|---|
//! | [`Plugin::before_request`] | before each model request | add context to the newest message |
//! | [`Plugin::before_send`] | when the request is ready to go | end the turn instead (a spending limit) |
//! | [`Plugin::before_tool`] | before each tool call, before the permission gate | allow, ask, deny with a reason, rewrite the input |
//! | [`Plugin::after_tool`] | after a call that ran | add context, replace the result |
//! | [`Plugin::before_finish`] | when the model answered without tool calls | make the turn go on |
//! | [`Plugin::before_compaction`] | before the history is compacted | add instructions for the summary |
//!
//! Every seat is a no-op by default. Several plugins run in order of [`Plugin::priority`] (highest
//! first; equal priorities in the order they were added). Hook scripts are one such plugin, built
//! elsewhere; the core knows nothing of them.
//!
//! What a plugin cannot do: a plugin's `Allow` skips the approval prompt, but never overrides a
//! deny rule, plan mode or the hard-deny list — the gate still has the last word on those. A
//! plugin that panics is contained: before a tool call it counts as a refusal (a broken policy
//! fails closed), at every other seat as no opinion.

use crate::event::CompactReason;
use crate::message::{Message, ToolResultPart};
use crate::spec::{ToolMeta, ToolOutput};
use async_trait::async_trait;
use futures_util::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// A tool call as a plugin sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolCallInfo<'a> {
    /// Call id.
    pub id: &'a str,
    /// Tool name.
    pub name: &'a str,
    /// Arguments (as rewritten by plugins that ran before).
    pub input: &'a Value,
    /// How the tool describes itself.
    pub meta: &'a ToolMeta,
}

/// What a plugin wants done with a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolVerdict {
    /// No opinion: the permission gate decides.
    #[default]
    Continue,
    /// Run it without asking the user (deny rules, plan mode and hard denies still hold).
    Allow,
    /// Ask the user even if the gate would allow it.
    Ask {
        /// Why, shown with the prompt.
        reason: Option<String>,
    },
    /// Refuse it; the reason goes to the model.
    Deny {
        /// What the model is told.
        reason: String,
    },
}

/// A plugin's answer before a tool call: a verdict and, optionally, new arguments.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BeforeTool {
    /// What to do with the call.
    pub verdict: ToolVerdict,
    /// Replacement arguments, when the plugin rewrites them.
    pub input: Option<Value>,
}

impl BeforeTool {
    /// No opinion.
    pub fn proceed() -> Self {
        Self::default()
    }

    /// Refuse the call; `reason` goes to the model.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self { verdict: ToolVerdict::Deny { reason: reason.into() }, input: None }
    }

    /// Run the call without asking.
    pub fn allow() -> Self {
        Self { verdict: ToolVerdict::Allow, input: None }
    }

    /// Ask the user first.
    pub fn ask(reason: Option<String>) -> Self {
        Self { verdict: ToolVerdict::Ask { reason }, input: None }
    }

    /// Run the call with these arguments instead.
    pub fn rewrite(input: Value) -> Self {
        Self { verdict: ToolVerdict::Continue, input: Some(input) }
    }
}

/// A plugin's answer after a tool call ran.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum AfterTool {
    /// Leave the result as it is.
    #[default]
    Keep,
    /// Append this text to the result the model sees.
    AddContext(String),
    /// Replace the result.
    Replace(ToolOutput),
}

/// A model request about to be sent, as a plugin sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RequestInfo<'a> {
    /// Which request of the turn (1 for the first).
    pub request: u32,
    /// The conversation that will be sent.
    pub messages: &'a [Message],
}

/// A model request ready to be sent, as a spending limit sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SendInfo {
    /// Which request of the turn (1 for the first).
    pub request: u32,
    /// The request's prompt, estimated as compaction estimates it (system prompt, tools and
    /// conversation), in tokens.
    pub prompt_tokens: u64,
    /// The output cap of the request, when one is set.
    pub max_output_tokens: Option<u32>,
    /// What this turn's requests used so far.
    pub turn_usage: crate::usage::Usage,
}

impl SendInfo {
    /// Request number `request` of a turn with a prompt of `prompt_tokens`, no cap, nothing
    /// used yet (for plugins' tests).
    pub fn new(request: u32, prompt_tokens: u64) -> Self {
        Self { request, prompt_tokens, max_output_tokens: None, turn_usage: crate::usage::Usage::default() }
    }
}

/// A turn about to end, as a plugin sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct FinishInfo<'a> {
    /// The model's final answer.
    pub answer: &'a str,
    /// Model requests so far this turn.
    pub requests: u32,
    /// How many times plugins already made this turn go on (to avoid looping forever).
    pub extensions: u32,
}

/// Code that joins a turn at its seats. Every method has a default that does nothing.
#[async_trait]
pub trait Plugin: Send + Sync {
    /// A short name for messages ("denied by `name`: ...").
    fn name(&self) -> &str;

    /// Plugins with a higher priority run first.
    fn priority(&self) -> i32 {
        0
    }

    /// Before each model request: text to add to the newest message (it becomes part of the
    /// history, so later requests keep a stable prefix).
    async fn before_request(&self, _request: RequestInfo<'_>) -> Option<String> {
        None
    }

    /// When a request is ready to be sent: a reason to end the turn instead of sending it (the
    /// turn ends with [`crate::TurnEndReason::BudgetExceeded`] and the reason as a notice), or
    /// `None` to send it.
    async fn before_send(&self, _request: SendInfo) -> Option<String> {
        None
    }

    /// Before each tool call (after its arguments were validated, before the permission gate).
    async fn before_tool(&self, _call: ToolCallInfo<'_>) -> BeforeTool {
        BeforeTool::proceed()
    }

    /// After a call that ran (succeeded or failed).
    async fn after_tool(&self, _call: ToolCallInfo<'_>, _output: &ToolOutput) -> AfterTool {
        AfterTool::Keep
    }

    /// When the model answered without calling tools: a message that makes the turn go on
    /// (sent to the model as the user's), or `None` to let it end.
    async fn before_finish(&self, _finish: FinishInfo<'_>) -> Option<String> {
        None
    }

    /// Before the history is compacted: instructions for the summary, if any.
    async fn before_compaction(&self, _reason: CompactReason) -> Option<String> {
        None
    }
}

/// The plugins of an agent, in the order they run.
#[derive(Clone, Default)]
pub struct Plugins {
    list: Vec<Arc<dyn Plugin>>,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.list.iter().map(|p| p.name())).finish()
    }
}

/// What the plugins decided about a tool call, together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Joint {
    Continue,
    Allow,
    Ask(Option<String>),
    Deny { plugin: String, reason: String },
}

impl Plugins {
    /// Adds a plugin in priority order (after the plugins of equal priority already there).
    pub fn add(&mut self, plugin: Arc<dyn Plugin>) {
        let at = self.list.iter().position(|p| p.priority() < plugin.priority()).unwrap_or(self.list.len());
        self.list.insert(at, plugin);
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Names, in the order they run.
    pub fn names(&self) -> Vec<&str> {
        self.list.iter().map(|p| p.name()).collect()
    }

    /// Text the plugins want added before request number `request`, joined; `None` when none.
    pub(crate) async fn before_request(&self, request: u32, history: &[Message]) -> Option<String> {
        let mut added = Vec::new();
        for p in &self.list {
            let answer = AssertUnwindSafe(p.before_request(RequestInfo { request, messages: history }))
                .catch_unwind()
                .await;
            if let Ok(Some(text)) = answer {
                if !text.trim().is_empty() {
                    added.push(text);
                }
            }
        }
        (!added.is_empty()).then(|| added.join("\n\n"))
    }

    /// The first reason a plugin gives not to send the request; a plugin that panics has none.
    pub(crate) async fn before_send(&self, info: SendInfo) -> Option<String> {
        for p in &self.list {
            if let Ok(Some(why)) = AssertUnwindSafe(p.before_send(info)).catch_unwind().await {
                return Some(why);
            }
        }
        None
    }

    /// Runs `before_tool` of each plugin in order; input rewrites chain, a deny stops the rest,
    /// and the strongest verdict wins (deny, then ask, then allow).
    pub(crate) async fn before_tool(
        &self,
        id: &str,
        name: &str,
        input: &mut Value,
        meta: &ToolMeta,
    ) -> Joint {
        let mut joint = Joint::Continue;
        for p in &self.list {
            let Ok(answer) =
                AssertUnwindSafe(p.before_tool(ToolCallInfo { id, name, input, meta })).catch_unwind().await
            else {
                return Joint::Deny {
                    plugin: p.name().to_owned(),
                    reason: "the plugin failed while checking this call, so it was not run".into(),
                };
            };
            if let Some(new) = answer.input {
                *input = new;
            }
            match answer.verdict {
                ToolVerdict::Continue => {}
                ToolVerdict::Allow => {
                    if joint == Joint::Continue {
                        joint = Joint::Allow;
                    }
                }
                ToolVerdict::Ask { reason } => {
                    if !matches!(joint, Joint::Ask(_)) {
                        joint = Joint::Ask(reason);
                    }
                }
                ToolVerdict::Deny { reason } => {
                    return Joint::Deny { plugin: p.name().to_owned(), reason };
                }
            }
        }
        joint
    }

    pub(crate) async fn after_tool(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        meta: &ToolMeta,
        output: &mut ToolOutput,
    ) {
        for p in &self.list {
            let answer = AssertUnwindSafe(p.after_tool(ToolCallInfo { id, name, input, meta }, output))
                .catch_unwind()
                .await;
            match answer.unwrap_or_default() {
                AfterTool::Keep => {}
                AfterTool::AddContext(text) => output.content.push(ToolResultPart::Text { text }),
                AfterTool::Replace(new) => *output = new,
            }
        }
    }

    pub(crate) async fn before_finish(&self, finish: FinishInfo<'_>) -> Option<String> {
        let mut reasons = Vec::new();
        for p in &self.list {
            if let Ok(Some(r)) = AssertUnwindSafe(p.before_finish(finish)).catch_unwind().await {
                reasons.push(r);
            }
        }
        (!reasons.is_empty()).then(|| reasons.join("\n\n"))
    }

    pub(crate) async fn before_compaction(&self, reason: CompactReason) -> Option<String> {
        let mut notes = Vec::new();
        for p in &self.list {
            if let Ok(Some(n)) = AssertUnwindSafe(p.before_compaction(reason)).catch_unwind().await {
                notes.push(n);
            }
        }
        (!notes.is_empty()).then(|| notes.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct P(&'static str, i32, ToolVerdict);

    #[async_trait]
    impl Plugin for P {
        fn name(&self) -> &str {
            self.0
        }
        fn priority(&self) -> i32 {
            self.1
        }
        async fn before_tool(&self, call: ToolCallInfo<'_>) -> BeforeTool {
            let mut input = call.input.clone();
            input["seen"] = json!(format!("{}{}", call.input["seen"].as_str().unwrap_or(""), self.0));
            BeforeTool { verdict: self.2.clone(), input: Some(input) }
        }
    }

    #[tokio::test]
    async fn plugins_run_by_priority_and_the_strongest_verdict_wins() {
        let mut ps = Plugins::default();
        ps.add(Arc::new(P("low", -1, ToolVerdict::Allow)));
        ps.add(Arc::new(P("high", 5, ToolVerdict::Continue)));
        ps.add(Arc::new(P("mid", 0, ToolVerdict::Ask { reason: None })));
        ps.add(Arc::new(P("mid2", 0, ToolVerdict::Continue)));
        assert_eq!(ps.names(), ["high", "mid", "mid2", "low"]);
        let mut input = json!({});
        let joint = ps.before_tool("t", "x", &mut input, &ToolMeta::writes()).await;
        assert_eq!(joint, Joint::Ask(None), "ask beats allow");
        assert_eq!(input["seen"], "highmidmid2low", "rewrites chain in order");
        ps.add(Arc::new(P("veto", 1, ToolVerdict::Deny { reason: "no".into() })));
        let mut input = json!({});
        let joint = ps.before_tool("t", "x", &mut input, &ToolMeta::writes()).await;
        assert_eq!(joint, Joint::Deny { plugin: "veto".into(), reason: "no".into() });
        assert_eq!(input["seen"], "highveto", "a deny stops the rest");
    }

    struct Broken;

    #[async_trait]
    impl Plugin for Broken {
        fn name(&self) -> &str {
            "broken"
        }
        async fn before_tool(&self, _call: ToolCallInfo<'_>) -> BeforeTool {
            panic!("bug in a plugin")
        }
        async fn before_request(&self, _r: RequestInfo<'_>) -> Option<String> {
            panic!("bug in a plugin")
        }
    }

    #[tokio::test]
    async fn a_panicking_plugin_fails_closed_before_a_tool_and_is_ignored_elsewhere() {
        let mut ps = Plugins::default();
        ps.add(Arc::new(Broken));
        let joint = ps.before_tool("t", "x", &mut json!({}), &ToolMeta::writes()).await;
        assert!(matches!(joint, Joint::Deny { plugin, .. } if plugin == "broken"));
        assert_eq!(ps.before_request(1, &[]).await, None);
    }
}
