//! What a child is, as the spawner, the tools and `/agents` see it: its state, a snapshot of it,
//! and the update kinds it reports on. A leaf: it uses no other module of the sub-agents.

use octo_agent::CancellationToken;
use std::sync::Mutex;
use std::time::Instant;

/// The field of a `subagent_usage` update holding the cost at the child's own model's price.
pub const COST_FIELD: &str = "cost_usd";

/// The model an agent type runs on instead of the session's: its sender, and its price when
/// known (its children's tokens are priced at it, not at the session model's).
#[derive(Clone)]
pub struct ChildModel {
    /// The model.
    pub sender: std::sync::Arc<dyn octo_agent::Sender>,
    /// USD per million tokens, when known.
    pub price: Option<octo_provider::Price>,
}

/// The tool-update kind a child's token usage arrives as (added to the parent's).
pub const USAGE_UPDATE: &str = "subagent_usage";
/// The tool-update kind of a child's progress (`start`, `tool`, `end`).
pub const PROGRESS_UPDATE: &str = "subagent";
/// A child's progress, as its `subagent` tool update carries it (one shape, written by the child
/// and read by every front end through the fold).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SubagentProgress {
    /// The child's id (`explore-1`).
    pub id: String,
    /// Its agent type.
    #[serde(default)]
    pub agent: String,
    /// What happened.
    #[serde(flatten)]
    pub step: SubagentStep,
}

/// One step of a child's progress.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SubagentStep {
    /// It started on its task.
    Start {
        /// The short description it was given.
        #[serde(default)]
        description: String,
    },
    /// It called a tool.
    Tool {
        /// The tool's name.
        #[serde(default)]
        tool: String,
        /// The call in one line.
        #[serde(default)]
        summary: String,
        /// Its calls so far.
        #[serde(default)]
        tool_calls: u32,
    },
    /// It ended, with an answer (`ok`) or without.
    End {
        /// Whether it ended with an answer.
        #[serde(default)]
        ok: bool,
        /// Its calls in all.
        #[serde(default)]
        tool_calls: u32,
    },
}

/// The names of the sub-agent tools (a child gets them only when the depth limit allows).
pub const TASK_TOOLS: &[&str] = &["task", "task_output"];

/// Where a child is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildState {
    /// Still working.
    Running,
    /// Finished with an answer.
    Done(String),
    /// Ended without one (the reason).
    Failed(String),
}

/// A snapshot of a child, for `/agents` and `task_output`.
#[derive(Debug, Clone)]
pub struct ChildInfo {
    /// `explore-1`.
    pub id: String,
    /// Its type.
    pub agent: String,
    /// The short description it was given.
    pub description: String,
    /// Whether it runs in the background.
    pub background: bool,
    /// Tool calls so far.
    pub tool_calls: u32,
    /// Where it is.
    pub state: ChildState,
    /// Seconds since it started (or how long it ran).
    pub seconds: f64,
}

pub(crate) struct Child {
    pub id: String,
    pub agent: String,
    pub description: String,
    pub background: bool,
    pub cancel: CancellationToken,
    started: Instant,
    progress: Mutex<(u32, ChildState, Option<f64>)>,
}

impl Child {
    pub(crate) fn new(
        id: String,
        agent: &str,
        description: &str,
        background: bool,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            id,
            agent: agent.to_owned(),
            description: description.to_owned(),
            background,
            cancel,
            started: Instant::now(),
            progress: Mutex::new((0, ChildState::Running, None)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u32, ChildState, Option<f64>)> {
        self.progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn info(&self) -> ChildInfo {
        let p = self.lock();
        ChildInfo {
            id: self.id.clone(),
            agent: self.agent.clone(),
            description: self.description.clone(),
            background: self.background,
            tool_calls: p.0,
            state: p.1.clone(),
            seconds: p.2.unwrap_or_else(|| self.started.elapsed().as_secs_f64()),
        }
    }

    pub(crate) fn finish(&self, state: ChildState) {
        let mut p = self.lock();
        p.1 = state;
        p.2 = Some(self.started.elapsed().as_secs_f64());
    }

    pub(crate) fn count_call(&self) -> u32 {
        let mut p = self.lock();
        p.0 += 1;
        p.0
    }
}
