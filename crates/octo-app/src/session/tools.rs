//! The session's tools: how each describes itself, the sub-agents, and the end of a session —
//! its processes stopped, its servers and sub-agents shut down, and the SessionEnd hooks run
//! once.

use super::handles::Tools;
use std::sync::Arc;

impl<'a> Tools<'a> {
    /// How a tool of the session describes itself (the tools it started with).
    pub fn meta(self, name: &str) -> Option<octo_agent::ToolMeta> {
        self.session.setup.tools.registry.meta(name).cloned()
    }

    /// A tool call in one line (the command, the path, the URL), as the live events give it.
    pub fn summary(self, name: &str, input: &serde_json::Value) -> String {
        self.session.setup.tools.registry.summary(name, input)
    }

    /// The names of the tools the model can call (MCP servers' tools join once they started,
    /// between turns).
    pub fn names(self) -> Vec<String> {
        self.session.core.lock().tool_names.clone()
    }

    /// The sub-agent spawner: agent types and the children so far (`/agents`).
    pub fn subagents(self) -> Option<&'a Arc<crate::subagents::Spawner>> {
        self.session.setup.tools.spawner.as_ref()
    }

    /// The sub-agent types the `task` tool can start (none when tools are off).
    pub fn agent_types(self) -> Vec<String> {
        self.subagents().map(|s| s.agents().iter().map(|a| a.name.clone()).collect()).unwrap_or_default()
    }

    /// How the user could allow a call that was refused (the flag or the rule to add), for a
    /// summary after a headless run.
    pub fn allow_hint(self, call: &crate::fold::ToolCallRecord) -> String {
        let meta = self.session.setup.tools.registry.meta(&call.name);
        crate::permissions::allow_hint(&call.name, meta, &call.summary, call.outcome)
    }

    /// Background commands and sub-agents still running.
    pub(crate) fn in_background(self) -> usize {
        let shells = self.session.background_shells();
        let children = self
            .subagents()
            .map(|s| {
                s.children()
                    .iter()
                    .filter(|c| c.background && c.state == crate::subagents::ChildState::Running)
                    .count()
            })
            .unwrap_or(0);
        shells + children
    }

    /// Stops every process the session's commands left running (background shells and
    /// daemonised grandchildren alike) and returns the background commands that were still
    /// running, to be named to the user (`shell-1 (`npm run dev`)`). Front ends call it when
    /// the session ends; dropping the session does the same without naming them.
    pub fn stop_processes(self) -> Vec<String> {
        self.end_hooks();
        let tools = &self.session.setup.tools;
        if let Some(hub) = &tools.mcp {
            hub.shutdown();
        }
        if let Some(s) = &tools.spawner {
            s.cancel_all();
        }
        let named = tools.shells.as_ref().map(|s| s.stop_all()).unwrap_or_default();
        if let Some(cell) = &self.session.setup.hooks.cell {
            cell.get().stop_leftovers();
        }
        named
    }

    /// Runs the SessionEnd hooks once (on a thread of their own, as the session's runtime may be
    /// ending).
    fn end_hooks(self) {
        if self.session.setup.hooks.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Some(hooks) = self.session.setup.hooks.cell.as_ref().map(|c| c.get()) else { return };
        if !hooks.has(octo_hooks::Event::SessionEnd) {
            return;
        }
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                rt.block_on(hooks.session_end("exit"));
            }
        })
        .join();
    }
}
