//! What a session was started from, fixed before its task starts: a composition of the typed
//! parts the start steps return (tools, skills, hooks), plus what the task alone needs.

use crate::config::Config;
use crate::home::Home;
use crate::prompt::{Environment, PromptParts};
use octo_agent::{Sender, ToolRegistry, ToolSource};
use octo_provider::HttpConfig;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

/// What the handles of a started session read.
#[derive(Default)]
pub(super) struct Setup {
    pub config: Option<Config>,
    pub http: HttpConfig,
    /// Things the user should know about how the session was set up.
    pub notes: Vec<String>,
    pub workspace: PathBuf,
    /// The resumed session's last message that was never answered.
    pub unanswered: Option<String>,
    pub tools: ToolsPart,
    pub skills: SkillsPart,
    pub hooks: HooksPart,
    /// The session's memory (user and workspace scopes).
    pub memory: Option<Arc<octo_memory::Memory>>,
    /// The configured lite model, for side requests (a dream).
    pub lite: Option<Arc<dyn Sender>>,
    /// The OS sandbox of the session's commands and hooks.
    pub sandbox: Option<Arc<octo_tools::shell::sandbox::Sandbox>>,
}

/// The tools step's part: the tools the session started with and what stands behind them.
#[derive(Default)]
pub(super) struct ToolsPart {
    /// The tools at the start (their names, and what rules are checked against).
    pub registry: ToolRegistry,
    /// Where the tools come from (the task assembles them again when one changes).
    pub sources: Vec<Arc<dyn ToolSource>>,
    /// The built-in tools' background shells (and the session's command tag).
    pub shells: Option<Arc<octo_tools::shell::BackgroundShells>>,
    /// Where the file tools keep old contents and their journal (for `/rewind`).
    pub trash: Option<octo_tools::trash::Trash>,
    /// The session's MCP servers.
    pub mcp: Option<Arc<octo_mcp::McpHub>>,
    /// The session's language servers (`None` when none is installed).
    pub lsp: Option<Arc<octo_lsp::Lsp>>,
    /// The workspace's repository map (`None` without source files or when turned off).
    pub repo_map: Option<Arc<octo_repomap::RepoMap>>,
    /// The turns' checkpoints (`None` when off or without tools).
    pub checkpoints: Option<Arc<crate::checkpoints::Recorder>>,
    /// Sub-agents.
    pub spawner: Option<Arc<crate::subagents::Spawner>>,
    /// The parent's tools as the spawner lends them to children (kept equal to the agent's).
    pub lent: Option<Arc<RwLock<ToolRegistry>>>,
}

/// The skills step's part: the catalog, where it was read from, and what the system prompt is
/// built from (to rebuild its listing when the skills are read again).
#[derive(Default)]
pub(super) struct SkillsPart {
    pub catalog: Arc<octo_skills::SharedCatalog>,
    pub roots: Vec<octo_skills::Root>,
    /// The models entries ask for (`model:`), by name.
    pub models: std::collections::HashMap<String, Arc<crate::turn_models::TurnModel>>,
    pub prompt: Option<(Home, Environment, PromptParts)>,
}

/// The hooks step's part.
#[derive(Default)]
pub(super) struct HooksPart {
    /// What asks before a hook runs a file changed in this session (`None`: no hooks).
    pub guard: Option<octo_hooks::Guard>,
    /// The tag of the session's commands, once its tools exist: they are held still while a
    /// hook runs.
    pub command_tag: Arc<std::sync::OnceLock<String>>,
    /// The hooks in force.
    pub cell: Option<Arc<octo_hooks::HookCell>>,
    /// Every configured hook, the project's included, while the project's wait for trust.
    pub untrusted: Mutex<Option<(String, octo_hooks::HookSet)>>,
    /// Whether SessionEnd ran.
    pub ended: AtomicBool,
    /// The run's folder confined hooks can read (where they find the transcript).
    pub readable: PathBuf,
    /// `CLAUDE_ENV_FILE` of the session's SessionStart hooks.
    pub env_file: EnvFile,
}

/// The session's `CLAUDE_ENV_FILE`; its folder is removed when the session ends.
#[derive(Debug, Default)]
pub(super) struct EnvFile(pub PathBuf);

impl Drop for EnvFile {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// How the task behaves.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Flags {
    pub unattended: bool,
    pub model_titles: bool,
    /// Append every event to the event log.
    pub log_events: bool,
    /// The session continues a saved one (SessionStart says `resume`).
    pub resumed: bool,
}

/// What only the task needs.
pub(super) struct TaskParts {
    pub flags: Flags,
    pub persist: Option<crate::persist::Persist>,
    /// How long the first request waits for sources still starting (MCP servers).
    pub startup_wait: std::time::Duration,
}

impl Default for TaskParts {
    fn default() -> Self {
        Self { flags: Flags::default(), persist: None, startup_wait: std::time::Duration::from_secs(5) }
    }
}
