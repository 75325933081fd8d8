//! Sub-agents: the `task` tool runs a child agent with its own history and returns its final
//! answer. Children are of a named type (built-in `general` and `explore`, or a Claude Code-format
//! file in an `agents/` folder), run under limits (depth, how many at once, a turn cap), in the
//! foreground or the background, and never with more rights than their parent: every call of a
//! child goes through the parent's permission engine (its rules, its mode, an active skill's
//! scope), narrowed further by the child type's own tool list.

mod child;
mod tool;

use crate::config::SubagentLimits;
use crate::permissions::PermissionEngine;
use octo_agent::{Sender, ToolRegistry};
use octo_skills::{AgentDef, Agents};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

pub use child::ChildState;

/// The tool-update kind a child's token usage arrives as (added to the parent's).
pub const USAGE_UPDATE: &str = "subagent_usage";
/// The tool-update kind of a child's progress (`start`, `tool`, `end`).
pub const PROGRESS_UPDATE: &str = "subagent";
pub use tool::{tools, TASK_TOOLS};

/// The folders agent definitions are read from, in order (a later one wins per name).
pub fn roots(
    home: &crate::home::Home,
    workspace: &std::path::Path,
    user_home: Option<&std::path::Path>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    if let Some(h) = user_home {
        out.push((h.join(".claude/agents"), "~/.claude/agents".to_owned()));
    }
    out.push((home.agents(), "~/.octo/agents".to_owned()));
    out.push((workspace.join(".claude/agents"), "project .claude/agents".to_owned()));
    out.push((workspace.join(".octo/agents"), "project .octo/agents".to_owned()));
    let mut seen = Vec::new();
    out.retain(|(d, _)| {
        let real = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
        let fresh = !seen.contains(&real);
        seen.push(real);
        fresh
    });
    out
}

/// The built-in agent types.
pub fn builtin() -> Vec<AgentDef> {
    let def = |name: &str, description: &str, prompt: &str, tools: Option<Vec<String>>| AgentDef {
        name: name.to_owned(),
        description: description.to_owned(),
        tools,
        disallowed_tools: Vec::new(),
        model: None,
        permission_mode: None,
        max_turns: None,
        prompt: prompt.to_owned(),
        file: None,
        source: "built-in".to_owned(),
    };
    vec![
        def(
            "general",
            "A general-purpose agent for a self-contained task that takes several steps (research, a change, a check); it has the tools you have, except starting more agents.",
            "You are a sub-agent of octo, a coding agent. Do the task you are given with your tools, then answer with a concise report: what you found or changed (paths and line numbers), what you verified, and anything left undone. Your answer is all the requester sees.",
            None,
        ),
        def(
            "explore",
            "A read-only agent for searching and reading a codebase: finding where something is defined or used, how a feature works. Give it a precise question.",
            "You are a read-only exploration sub-agent of octo, a coding agent. Search and read the code to answer the question you are given; you cannot change anything. Answer concisely with the facts found, citing path:line.",
            Some(vec!["@read-only".to_owned()]),
        ),
    ]
}

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
    pub(crate) models: HashMap<String, Arc<dyn Sender>>,
    /// The parent's model now.
    pub(crate) sender: Arc<dyn Fn() -> Option<Arc<dyn Sender>> + Send + Sync>,
    pub(crate) engine: Arc<PermissionEngine>,
    /// The parent's tools now (the actor updates it when they change).
    pub(crate) tools: Arc<RwLock<ToolRegistry>>,
    pub(crate) workspace: PathBuf,
    pub(crate) running: Arc<tokio::sync::Semaphore>,
    pub(crate) children: Mutex<Vec<Arc<child::Child>>>,
    counter: AtomicU64,
    /// Delivers a note to the model with the next prompt (a background child finished).
    pub(crate) notify: Arc<dyn Fn(String) + Send + Sync>,
    pub(crate) sidechains: Option<Sidechains>,
    /// Plugins every child gets (the session's hooks, as SubagentStop).
    pub(crate) plugins: Vec<Arc<dyn octo_agent::Plugin>>,
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
    pub models: HashMap<String, Arc<dyn Sender>>,
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
    /// Where children's histories are saved.
    pub sidechains: Option<Sidechains>,
    /// Plugins every child gets.
    pub plugins: Vec<Arc<dyn octo_agent::Plugin>>,
}

impl Spawner {
    /// A spawner from its parts.
    pub fn new(p: SpawnerParts) -> Self {
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
            sidechains: p.sidechains,
            plugins: p.plugins,
        }
    }

    /// The agent types.
    pub fn agents(&self) -> &Agents {
        &self.agents
    }

    /// The children so far: id, type, what they were asked, state.
    pub fn children(&self) -> Vec<child::ChildInfo> {
        self.lock().iter().map(|c| c.info()).collect()
    }

    /// Cancels every child still running (the session is ending).
    pub fn cancel_all(&self) {
        for c in self.lock().iter() {
            c.cancel.cancel();
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<child::Child>>> {
        self.children.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn next_id(&self, agent: &str) -> String {
        format!("{agent}-{}", self.counter.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

pub use child::ChildInfo;

/// Senders for the agent types that name a model of their own: `lite` (the configured lite
/// model), `endpoint:model`, or a model of the session's endpoint. Claude Code's aliases map:
/// `inherit`, `sonnet` and `opus` run on the session's model, `haiku` on the lite model when
/// there is one. A model that cannot be used is a note; the type then runs on the session's.
pub fn models(
    agents: &Agents,
    config: &crate::config::Config,
    lite: Option<&Arc<dyn Sender>>,
    store: &dyn crate::credentials::CredentialStore,
    env: crate::config::EnvLookup<'_>,
    http: &octo_provider::HttpConfig,
    notes: &mut Vec<String>,
) -> HashMap<String, Arc<dyn Sender>> {
    let mut out = HashMap::new();
    for def in agents.iter() {
        let Some(model) = def.model.as_deref().map(str::trim).filter(|m| !m.is_empty()) else { continue };
        match model {
            "inherit" | "sonnet" | "opus" => {}
            "lite" | "haiku" => {
                if let Some(l) = lite {
                    out.insert(def.name.clone(), Arc::clone(l));
                }
            }
            m => match crate::factory::resolve(config, Some(m), store, env)
                .map_err(|e| e.to_string())
                .and_then(|r| crate::factory::build_sender(&r, http.clone()).map_err(|e| e.to_string()))
            {
                Ok(s) => {
                    out.insert(def.name.clone(), s);
                }
                Err(e) => notes.push(format!(
                    "the agent `{}` asks for the model `{m}`, which cannot be used ({e}); it runs on the session's model",
                    def.name
                )),
            },
        }
    }
    out
}
