//! Hooks at the agent's seats, as an [`octo_agent::Plugin`].

use crate::config::Event;
use crate::hooks::Hooks;
use async_trait::async_trait;
use octo_agent::plugin::{FinishInfo, ToolCallInfo};
use octo_agent::{AfterTool, BeforeTool, CompactReason, Plugin, ToolOutput};
use std::sync::Arc;

/// How many times Stop hooks may make one turn go on.
const MAX_STOP_EXTENSIONS: u32 = 5;

/// The hooks in force, replaceable while the session runs (a project's hooks join once the user
/// trusts them).
#[derive(Debug)]
pub struct HookCell(std::sync::RwLock<Arc<Hooks>>);

impl HookCell {
    /// A cell holding `hooks`.
    pub fn new(hooks: Hooks) -> Self {
        Self(std::sync::RwLock::new(Arc::new(hooks)))
    }

    /// The hooks now.
    pub fn get(&self) -> Arc<Hooks> {
        Arc::clone(&self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Replaces them (from the next seat on).
    pub fn set(&self, hooks: Hooks) {
        *self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(hooks);
    }
}

/// The session's hooks for one agent: the session's own (`Stop`) or a sub-agent's
/// (`SubagentStop`).
pub struct HooksPlugin {
    cell: Arc<HookCell>,
    stop: Event,
}

impl HooksPlugin {
    /// The plugin for the session's agent.
    pub fn new(cell: Arc<HookCell>) -> Self {
        Self { cell, stop: Event::Stop }
    }

    /// The plugin for a sub-agent (its end is `SubagentStop`).
    pub fn for_subagent(cell: Arc<HookCell>) -> Self {
        Self { cell, stop: Event::SubagentStop }
    }
}

#[async_trait]
impl Plugin for HooksPlugin {
    fn name(&self) -> &str {
        "hooks"
    }

    async fn before_tool(&self, call: ToolCallInfo<'_>) -> BeforeTool {
        let hooks = self.cell.get();
        if !hooks.has(Event::PreToolUse) {
            return BeforeTool::proceed();
        }
        hooks.pre_tool_call(call.id, call.name, call.input).await
    }

    async fn after_tool(&self, call: ToolCallInfo<'_>, output: &ToolOutput) -> AfterTool {
        let hooks = self.cell.get();
        if !hooks.has(Event::PostToolUse) {
            return AfterTool::Keep;
        }
        hooks.post_tool_call(call.id, call.name, call.input, output).await
    }

    async fn before_finish(&self, finish: FinishInfo<'_>) -> Option<String> {
        let hooks = self.cell.get();
        if !hooks.has(self.stop) || finish.extensions >= MAX_STOP_EXTENSIONS {
            return None;
        }
        hooks.stop(self.stop, finish.answer, finish.extensions > 0).await
    }

    async fn before_compaction(&self, reason: CompactReason) -> Option<String> {
        let hooks = self.cell.get();
        if !hooks.has(Event::PreCompact) {
            return None;
        }
        let trigger = if reason == CompactReason::Manual { "manual" } else { "auto" };
        hooks.pre_compact(trigger).await
    }
}
