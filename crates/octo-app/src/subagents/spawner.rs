//! The spawner: the limits, agent types and models children run under, the parent's engine and
//! tools they borrow, and the children so far.

use super::record::{Child, ChildInfo};
use crate::config::SubagentLimits;
use crate::permissions::PermissionEngine;
use octo_agent::{Sender, ToolRegistry};
use octo_skills::Agents;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The answer to an approval asked between turns (`None`: nobody could answer).
pub type LateAnswer =
    std::pin::Pin<Box<dyn std::future::Future<Output = Option<octo_agent::ApprovalDecision>> + Send>>;

/// Asks the front ends to approve a call between turns.
pub type LateApprovals = Arc<dyn Fn(octo_agent::ApprovalRequest) -> LateAnswer + Send + Sync>;

/// Where a child's history is saved, beside its parent session.
#[derive(Debug, Clone)]
pub struct Sidechains {
    /// `sessions/` in octo's home.
    pub dir: PathBuf,
    /// The parent session's id, once it is saved.
    pub parent: Arc<Mutex<Option<String>>>,
}

/// Runs the session's sub-agents.
pub struct Spawner {
    pub(crate) limits: SubagentLimits,
    pub(crate) agents: Agents,
    /// Senders for agent types that name another model.
    pub(crate) models: HashMap<String, super::record::ChildModel>,
    /// The parent's model now.
    pub(crate) sender: Arc<dyn Fn() -> Option<Arc<dyn Sender>> + Send + Sync>,
    pub(crate) engine: Arc<PermissionEngine>,
    /// The parent's tools now (the actor updates it when they change).
    pub(crate) tools: Arc<RwLock<ToolRegistry>>,
    pub(crate) workspace: PathBuf,
    pub(crate) running: Arc<tokio::sync::Semaphore>,
    pub(crate) children: Mutex<Vec<Arc<Child>>>,
    counter: AtomicU64,
    /// Delivers a note to the model with the next prompt (a background child finished).
    pub(crate) notify: Arc<dyn Fn(String) + Send + Sync>,
    /// Takes a background child's usage into the session's.
    pub(crate) usage: Arc<dyn Fn(octo_agent::Usage, Option<f64>) + Send + Sync>,
    /// Asks the front ends about a background child's call between turns.
    pub(crate) late_approvals: Option<LateApprovals>,
    pub(crate) sidechains: Option<Sidechains>,
    /// Plugins every child gets (the session's hooks, as SubagentStop).
    pub(crate) plugins: Vec<Arc<dyn octo_agent::Plugin>>,
    /// The session's checkpoints: what a child changed is named in the turn's.
    pub(crate) checkpoints: Option<Arc<crate::checkpoints::Recorder>>,
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawner").field("limits", &self.limits).field("agents", &self.agents.names()).finish()
    }
}

/// What a spawner is made from.
pub struct SpawnerParts {
    /// The limits.
    pub limits: SubagentLimits,
    /// The agent types.
    pub agents: Agents,
    /// Senders for types that name another model.
    pub models: HashMap<String, super::record::ChildModel>,
    /// The parent's model now.
    pub sender: Arc<dyn Fn() -> Option<Arc<dyn Sender>> + Send + Sync>,
    /// The parent's permission engine.
    pub engine: Arc<PermissionEngine>,
    /// The parent's tools.
    pub tools: Arc<RwLock<ToolRegistry>>,
    /// The workspace.
    pub workspace: PathBuf,
    /// Where a note for the model goes.
    pub notify: Arc<dyn Fn(String) + Send + Sync>,
    /// Where a background child's token usage goes, with its cost when its model's price is its
    /// own (a foreground child's reaches the parent's turn as a tool update).
    pub usage: Arc<dyn Fn(octo_agent::Usage, Option<f64>) + Send + Sync>,
    /// Asks the front ends to approve a background child's call between turns; without it
    /// such calls are denied.
    pub late_approvals: Option<LateApprovals>,
    /// Where children's histories are saved.
    pub sidechains: Option<Sidechains>,
    /// Plugins every child gets.
    pub plugins: Vec<Arc<dyn octo_agent::Plugin>>,
    /// The session's checkpoints.
    pub checkpoints: Option<Arc<crate::checkpoints::Recorder>>,
}

impl Spawner {
    /// A spawner from its parts.
    pub(crate) fn new(p: SpawnerParts) -> Self {
        let running = usize::try_from(p.limits.max_running).unwrap_or(4);
        Self {
            limits: p.limits,
            agents: p.agents,
            models: p.models,
            sender: p.sender,
            engine: p.engine,
            tools: p.tools,
            workspace: p.workspace,
            running: Arc::new(tokio::sync::Semaphore::new(running)),
            children: Mutex::new(Vec::new()),
            counter: AtomicU64::new(0),
            notify: p.notify,
            usage: p.usage,
            late_approvals: p.late_approvals,
            sidechains: p.sidechains,
            plugins: p.plugins,
            checkpoints: p.checkpoints,
        }
    }

    /// The agent types.
    pub(crate) fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The children so far: id, type, what they were asked, state.
    pub fn children(&self) -> Vec<ChildInfo> {
        self.lock().iter().map(|c| c.info()).collect()
    }

    /// Cancels every child still running (the session is ending).
    pub(crate) fn cancel_all(&self) {
        for c in self.lock().iter() {
            c.cancel.cancel();
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Child>>> {
        self.children.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn next_id(&self, agent: &str) -> String {
        format!("{agent}-{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1)
    }
}
