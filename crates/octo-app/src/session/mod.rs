//! The Session facade: the API every front end (CLI, web server, chat bridges, library users)
//! drives. A session owns one agent in a task of its own; front ends send it prompts, receive its
//! events, answer its approvals and questions, and read its status. They never touch providers or
//! tools directly.

use crate::config::{Config, EnvLookup};
use crate::credentials::CredentialStore;
use crate::factory::{build_sender, resolve, EndpointError};
use crate::fold::{TurnFold, TurnSummary};
use crate::home::Home;
use crate::permissions::{Mode, PermissionEngine, Rule};
use crate::prompt::{Environment, PromptParts};
use octo_agent::{
    Agent, AgentEvent, ApprovalBroker, ApprovalDecision, CancellationToken, Message, ReasoningEffort, Sender,
    ToolRegistry, ToolSource, UnknownApproval, Usage,
};
use octo_provider::{HttpConfig, ModelInfo};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use thiserror::Error;
use tokio::sync::{broadcast, mpsc, oneshot};

mod actor;
mod hooks;
mod memory;
mod rewind;
mod skills;
mod start;
use actor::{actor, Flags, Resumed, Task};
pub use hooks::HookInfo;
pub use memory::DreamPlan;
pub use rewind::{FileUndo, RewindPlan, RewindReport};

/// How many events a slow subscriber may fall behind before it misses some.
const EVENT_BUFFER: usize = 16 * 1024;

/// Why a session could not start or act.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// No usable endpoint.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The session's task has ended.
    #[error("the session has ended")]
    Closed,
    /// The conversation changed between planning an action and carrying it out.
    #[error("the conversation moved on since; look again and retry")]
    Moved,
    /// A saved session could not be resumed.
    #[error(transparent)]
    Store(#[from] octo_session::StoreError),
    /// The session to resume belongs to another directory.
    #[error("session {id} belongs to {dir}; continue it there (cd {dir} && octo -c={id}) or pass --workspace {dir}")]
    OtherDirectory {
        /// The session.
        id: String,
        /// Its directory.
        dir: String,
    },
}

impl SessionError {
    /// Whether the user must fix how the session was asked for (configuration, endpoint, the
    /// directory of a resumed session), as opposed to a failure.
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Config(_) | Self::Endpoint(_) | Self::OtherDirectory { .. })
    }
}

/// What to start a session with. Unset fields come from the configuration.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// The workspace (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// `endpoint` or `endpoint:model`.
    pub model: Option<String>,
    /// Whether the model gets tools (`--no-tools` turns them off).
    pub no_tools: bool,
    /// Permission mode.
    pub mode: Option<Mode>,
    /// Model requests per turn.
    pub max_turns: Option<u32>,
    /// Replaces octo's base system prompt.
    pub system_prompt: Option<String>,
    /// Added at the end of the system prompt (`--append-system-prompt`).
    pub append_system_prompt: Option<String>,
    /// Output cap per request.
    pub max_tokens: Option<u32>,
    /// Reasoning effort.
    pub reasoning: Option<ReasoningEffort>,
    /// Nobody will answer approvals (headless runs): they are denied, with a message telling the
    /// model how the user can allow them.
    pub unattended: bool,
    /// Attempts per model request, the first included (default 5).
    pub max_attempts: Option<u32>,
    /// Ask for whole responses instead of streams.
    pub no_stream: bool,
    /// Save the conversation under `~/.octo/sessions` as it goes.
    pub save: bool,
    /// Continue this saved session (an id; see `sessions::SessionStore::find`).
    pub resume: Option<String>,
    /// Append every event to `logs/<session>.jsonl` in octo's home (also `log_events` in the
    /// config).
    pub log_events: bool,
    /// Ask the model for a short title after the first exchange (in the background).
    pub model_titles: bool,
}

/// Whether a turn is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for a prompt.
    Idle,
    /// A turn is running.
    Running,
}

/// A snapshot of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Idle or running.
    pub state: State,
    /// Completed turns.
    pub turns: u32,
    /// Tokens of every request so far.
    pub usage: Usage,
    /// Cost so far in USD, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// `endpoint:model`.
    pub model: String,
    /// Permission mode.
    pub mode: Mode,
    /// The OS sandbox commands run in, and how (or why there is none).
    pub sandbox: String,
    /// Prompts waiting behind the running turn.
    pub queued: usize,
    /// Tokens the conversation filled at the last request (input, cache read and write).
    pub context_tokens: u64,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
}

/// The result of [`Session::run`]: the turn's summary.
pub type RunResult = TurnSummary;

enum Command {
    /// A prompt, and the narrowing of its turn (a skill's or command's `allowed-tools`).
    Prompt(Message, Option<crate::permissions::Scope>),
    SystemPrompt(String),
    Compact(Option<String>),
    Title(String),
    SetSender(Arc<dyn Sender>, String, ModelInfo, Option<u32>),
    History(oneshot::Sender<Vec<Message>>),
    /// Keeps the first `keep` messages (when the history still has at least `expect`).
    Truncate {
        keep: usize,
        expect: usize,
        reply: oneshot::Sender<bool>,
    },
    Clear,
}

struct Shared {
    state: State,
    turns: u32,
    usage: Usage,
    model: String,
    info: ModelInfo,
    queued: usize,
    current: Option<CancellationToken>,
    /// Closed for good: queued prompts are dropped.
    closed: bool,
    /// What the last request filled of the context window.
    context_tokens: u64,
    /// The model's task list, as its last `todos` update left it.
    todos: Vec<octo_tools::Todo>,
    /// The tools the model has now.
    tool_names: Vec<String>,
    /// What happened since the last prompt that the model should hear of (`/remember`, a
    /// background sub-agent finishing), told with the next one rather than by changing the
    /// system prompt.
    pending_notes: Vec<String>,
    /// The model the session talks to now (for one-off requests such as a dream).
    sender: Option<Arc<dyn Sender>>,
}

/// A running conversation. Cheap to share (`Arc`) between front ends; dropping the last handle
/// ends its task.
pub struct Session {
    commands: mpsc::UnboundedSender<Command>,
    events: broadcast::Sender<AgentEvent>,
    broker: Arc<ApprovalBroker>,
    engine: Arc<PermissionEngine>,
    shared: Arc<Mutex<Shared>>,
    setup: Setup,
    session_id: Arc<Mutex<Option<String>>>,
}

/// What a session was started from, fixed before its task starts.
#[derive(Default)]
struct Setup {
    config: Option<Config>,
    http: HttpConfig,
    notes: Vec<String>,
    /// The tools the session started with (their names, and what rules are checked against).
    tools: ToolRegistry,
    tool_names: Vec<String>,
    flags: Flags,
    persist: Option<crate::persist::Persist>,
    unanswered: Option<String>,
    /// The built-in tools' background shells (and the session's command tag).
    shells: Option<Arc<octo_tools::shell::BackgroundShells>>,
    /// Where the file tools keep old contents and their journal (for `/rewind`).
    trash: Option<octo_tools::trash::Trash>,
    /// The session's MCP servers.
    mcp: Option<Arc<octo_mcp::McpHub>>,
    /// Where the tools come from (handed to the task, which assembles them again when they
    /// change).
    sources: Vec<Arc<dyn ToolSource>>,
    /// The workspace.
    workspace: PathBuf,
    /// The OS sandbox of the session's commands and hooks.
    sandbox: Option<Arc<octo_tools::shell::sandbox::Sandbox>>,
    /// Skills and commands, and the folders they were read from.
    skills: Arc<octo_skills::SharedCatalog>,
    skill_roots: Vec<octo_skills::Root>,
    /// What the system prompt is built from (to rebuild it when the skills are read again).
    prompt: Option<(Home, Environment, PromptParts)>,
    /// The session's memory (user and workspace scopes).
    memory: Option<Arc<octo_memory::Memory>>,
    /// The configured lite model, for side requests (a dream).
    lite: Option<Arc<dyn Sender>>,
    /// Sub-agents.
    spawner: Option<Arc<crate::subagents::Spawner>>,
    /// The parent's tools as the spawner lends them to children (updated when they change).
    lent_tools: Option<Arc<std::sync::RwLock<ToolRegistry>>>,
    /// Filled with the session's shared state once its task starts (the spawner reads the
    /// current model and leaves notes through it).
    shared_cell: Option<Arc<std::sync::OnceLock<Arc<Mutex<Shared>>>>>,
    /// Filled with the event channel once the task starts (hooks report their errors on it).
    events_cell: Option<Arc<std::sync::OnceLock<broadcast::Sender<AgentEvent>>>>,
    /// The hooks in force.
    hooks: Option<Arc<octo_hooks::HookCell>>,
    /// Every configured hook, the project's included, while the project's wait for trust.
    untrusted_hooks: Mutex<Option<(String, octo_hooks::HookSet)>>,
    /// Whether SessionEnd ran.
    ended: std::sync::atomic::AtomicBool,
    /// Log every event.
    log_events: bool,
    /// Whether the session continues a saved one (SessionStart says `resume`).
    resumed: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("status", &self.status()).finish()
    }
}

impl Session {
    /// Starts a session around an agent the caller built (a custom `Sender`, tools or gate). The
    /// engine becomes the agent's permission gate, so `set_mode` takes effect.
    pub fn from_agent(mut agent: Agent, engine: Arc<PermissionEngine>, model: &str, info: ModelInfo) -> Self {
        agent.set_permission_gate(engine.clone());
        let setup = Setup {
            workspace: agent.config().cwd.clone(),
            tools: agent.tools().clone(),
            tool_names: agent.tools().names().map(str::to_owned).collect(),
            ..Setup::default()
        };
        Self::spawn(agent, engine, model.to_owned(), info, setup, Arc::new(Mutex::new(None)))
    }

    fn spawn(
        agent: Agent,
        engine: Arc<PermissionEngine>,
        model: String,
        info: ModelInfo,
        mut setup: Setup,
        session_id: Arc<Mutex<Option<String>>>,
    ) -> Self {
        let (commands, rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let broker = agent.approvals();
        let shared = Arc::new(Mutex::new(Shared {
            state: State::Idle,
            turns: 0,
            usage: Usage::default(),
            model,
            info,
            queued: 0,
            current: None,
            closed: false,
            context_tokens: 0,
            todos: Vec::new(),
            tool_names: setup.tool_names.clone(),
            pending_notes: Vec::new(),
            sender: Some(Arc::clone(agent.sender())),
        }));
        if let Some(cell) = &setup.shared_cell {
            let _ = cell.set(Arc::clone(&shared));
        }
        if let Some(cell) = &setup.events_cell {
            let _ = cell.set(events.clone());
        }
        let event_log = setup.log_events.then(|| {
            let id = session_id
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
                .unwrap_or_else(octo_session::new_id);
            let home = setup.config.as_ref().map_or_else(Home::from_env, |c| Home::new(&c.home));
            crate::hooks::EventLog::new(&home, &id)
        });
        let (titles_tx, titles_rx) = mpsc::unbounded_channel();
        let startup_wait =
            setup.config.as_ref().map_or(std::time::Duration::from_secs(5), |c| c.mcp_startup_wait);
        let task = Task {
            events: events.clone(),
            shared: Arc::clone(&shared),
            flags: setup.flags,
            persist: setup.persist.take(),
            titles: titles_tx,
            engine: Arc::clone(&engine),
            lent_tools: setup.lent_tools.clone(),
            hooks: setup.hooks.clone(),
            session_started: false,
            start_context: None,
            resumed: setup.resumed,
            event_log,
            tools: actor::Tools {
                sources: std::mem::take(&mut setup.sources),
                mcp: setup.mcp.clone(),
                startup_wait,
                waited: false,
                generation: 0,
            },
        };
        tokio::spawn(actor(agent, rx, titles_rx, task));
        Self { commands, events, broker, engine, shared, setup, session_id }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a prompt; it runs when the turn before it has finished.
    pub fn prompt(&self, text: impl Into<String>) -> Result<(), SessionError> {
        self.prompt_message(Message::user(text.into()))
    }

    /// Queues a user message with any blocks (text and images, as attached files or a program
    /// driving octo send them).
    pub fn prompt_message(&self, message: Message) -> Result<(), SessionError> {
        self.prompt_prepared(message.into())
    }

    /// Queues a prepared prompt (a skill or command run as `/name`), with the narrowing of the
    /// tools its turn runs under.
    pub fn prompt_prepared(&self, prepared: crate::skills::Prepared) -> Result<(), SessionError> {
        self.lock().queued += 1;
        self.commands
            .send(Command::Prompt(prepared.message, prepared.scope))
            .map_err(|_| SessionError::Closed)
    }

    /// Receives every event from now on. Subscribe before prompting to see the whole turn.
    pub fn subscribe(&self) -> broadcast::Receiver<AgentEvent> {
        self.events.subscribe()
    }

    /// Runs one prompt to its end and returns what the turn amounted to: the simplest way to use
    /// a session.
    pub async fn run(&self, text: impl Into<String>) -> Result<TurnSummary, SessionError> {
        let mut rx = self.subscribe();
        self.prompt(text)?;
        let mut fold = TurnFold::new();
        loop {
            match rx.recv().await {
                Ok(event) => {
                    if fold.push(&event) {
                        return Ok(self.summarize(&fold));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return Err(SessionError::Closed),
            }
        }
    }

    /// A turn's summary, with what the session knows added: the cost at the current model's
    /// price, the model, the saved session's id and the turns so far.
    pub fn summarize(&self, fold: &TurnFold) -> TurnSummary {
        let mut summary = fold.summary();
        let s = self.lock();
        summary.cost_usd = s.info.price.map(|p| p.cost(&summary.usage));
        summary.model = s.model.clone();
        summary.turns = s.turns;
        drop(s);
        summary.session_id = self.session_id();
        summary
    }

    /// Allows a pending tool call once.
    pub fn approve(&self, approval_id: &str) -> Result<(), UnknownApproval> {
        self.broker.resolve(approval_id, ApprovalDecision::Allow)
    }

    /// Allows a pending tool call with arguments the user changed (an edited command). The
    /// permission gate checks them again; the model is told they were edited.
    pub fn approve_edited(&self, approval_id: &str, input: serde_json::Value) -> Result<(), UnknownApproval> {
        self.broker.resolve(approval_id, ApprovalDecision::Edited { input })
    }

    /// Allows a pending tool call and remembers the answer for the rest of the session.
    pub fn approve_always(&self, approval_id: &str) -> Result<(), UnknownApproval> {
        self.broker.resolve(approval_id, ApprovalDecision::AllowAlways)
    }

    /// Refuses a pending tool call; `message` is passed to the model.
    pub fn reject(&self, approval_id: &str, message: Option<String>) -> Result<(), UnknownApproval> {
        self.broker.resolve(approval_id, ApprovalDecision::Deny { message })
    }

    /// Answers a pending question from `ask_user`.
    pub fn answer(&self, question_id: &str, answer: &str) -> Result<(), UnknownApproval> {
        self.broker.answer(question_id, answer)
    }

    /// Cancels the running turn (its processes are killed); queued prompts still run.
    pub fn abort(&self) {
        if let Some(c) = &self.lock().current {
            c.cancel();
        }
    }

    /// Stops the session for good (a front end starting over): the running turn is cancelled
    /// and the queued prompts are dropped without running.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        if let Some(c) = &s.current {
            c.cancel();
        }
    }

    /// Switches the permission mode (takes effect for the next tool call).
    pub fn set_mode(&self, mode: Mode) {
        self.engine.set_mode(mode);
    }

    /// Adds a permission rule for the rest of the session (takes effect for the next tool call).
    /// A rule whose specifier does not suit its tool (a path pattern that is not a glob, a
    /// specifier on a tool that takes none) is refused.
    pub fn add_rule(&self, rule: Rule) -> Result<(), crate::permissions::RuleError> {
        let mut one = crate::permissions::RuleSet::default();
        one.push(rule.clone());
        one.check(&self.setup.tools)?;
        self.engine.add_rule(rule);
        Ok(())
    }

    /// Removes the rules written as `text` (from any layer) for the rest of the session;
    /// returns how many there were.
    pub fn remove_rule(&self, text: &str) -> usize {
        self.engine.remove_rule(text)
    }

    /// The permission rules in force.
    pub fn rules(&self) -> crate::permissions::RuleSet {
        self.engine.rules()
    }

    /// Switches endpoint or model (`endpoint`, `endpoint:model`); the conversation is kept.
    pub fn set_model(
        &self,
        choice: &str,
        store: &dyn CredentialStore,
        env: EnvLookup<'_>,
    ) -> Result<String, SessionError> {
        let config = self.setup.config.as_ref().ok_or(SessionError::Closed)?;
        let r = resolve(config, Some(choice), store, env)?;
        let sender = build_sender(&r, self.setup.http.clone())?;
        let label = r.label();
        self.commands
            .send(Command::SetSender(sender, label.clone(), r.model_info, r.max_tokens))
            .map_err(|_| SessionError::Closed)?;
        Ok(label)
    }

    /// Compacts the conversation now (`/compact [focus]`), after the running turn.
    pub fn compact(&self, focus: Option<String>) -> Result<(), SessionError> {
        self.commands.send(Command::Compact(focus)).map_err(|_| SessionError::Closed)
    }

    /// Forgets the conversation (after the running turn).
    pub fn clear(&self) -> Result<(), SessionError> {
        self.commands.send(Command::Clear).map_err(|_| SessionError::Closed)
    }

    /// The conversation so far (after the running turn finishes).
    pub async fn history(&self) -> Result<Vec<Message>, SessionError> {
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::History(tx)).map_err(|_| SessionError::Closed)?;
        rx.await.map_err(|_| SessionError::Closed)
    }

    /// State, turns, tokens and cost.
    pub fn status(&self) -> Status {
        let s = self.lock();
        Status {
            state: s.state,
            turns: s.turns,
            usage: s.usage,
            cost_usd: s.info.price.map(|p| p.cost(&s.usage)),
            model: s.model.clone(),
            mode: self.engine.mode(),
            sandbox: self.setup.sandbox.as_ref().map_or_else(|| "off".to_owned(), |s| s.describe()),
            queued: s.queued,
            context_tokens: s.context_tokens,
            context_window: Some(s.info.context_window).filter(|w| *w > 0),
        }
    }

    /// Whether the current model takes images: `Some(false)` when it is known not to.
    pub fn accepts_images(&self) -> Option<bool> {
        let model = self.lock().model.clone();
        octo_provider::catalog::accepts_images(model.split_once(':').map_or(model.as_str(), |(_, m)| m))
    }

    /// The model's task list as it last set it (`todo_write`); empty when it has none.
    pub fn todos(&self) -> Vec<octo_tools::Todo> {
        self.lock().todos.clone()
    }

    /// Things the user should know about how the session was set up (an unavailable keyring, an
    /// ignored project setting).
    pub fn notes(&self) -> &[String] {
        &self.setup.notes
    }

    /// The id of the saved session, once its first round is saved (or from the start when
    /// resumed); `None` when the session is not saved.
    pub fn session_id(&self) -> Option<String> {
        self.session_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// When the session was resumed: the last message sent in it whose turn never completed a
    /// round (octo was killed, or the turn failed or was cancelled). It is not in the history;
    /// front ends offer to send it again.
    pub fn unanswered(&self) -> Option<&str> {
        self.setup.unanswered.as_deref()
    }

    /// Stops every process the session's commands left running (background shells and
    /// daemonised grandchildren alike) and returns the background commands that were still
    /// running, to be named to the user (`shell-1 (`npm run dev`)`). Front ends call it when
    /// the session ends; dropping the session does the same without naming them.
    pub fn stop_processes(&self) -> Vec<String> {
        self.end_hooks();
        if let Some(hub) = &self.setup.mcp {
            hub.shutdown();
        }
        if let Some(s) = &self.setup.spawner {
            s.cancel_all();
        }
        self.setup.shells.as_ref().map(|s| s.stop_all()).unwrap_or_default()
    }

    /// What undoing the last `n` turns would do: the files their tool calls changed (and
    /// whether each was changed since), the shell commands whose effects stay, the turns dropped.
    pub async fn rewind_plan(&self, n: usize) -> Result<RewindPlan, SessionError> {
        let history = self.history().await?;
        Ok(rewind::plan(&history, n, self.setup.trash.as_ref(), &self.setup.tools))
    }

    /// Carries out `plan`: undoes the file changes (a file changed since is only overwritten when
    /// listed in `overwrite`) and drops the turns from the conversation (and the saved session).
    /// Fails with nothing undone when the conversation moved on since the plan was made.
    pub async fn rewind(
        &self,
        plan: &RewindPlan,
        overwrite: &[PathBuf],
    ) -> Result<RewindReport, SessionError> {
        let now = self.history().await?;
        let fresh = rewind::plan(&now, plan.turns, self.setup.trash.as_ref(), &self.setup.tools);
        if fresh.keep != plan.keep || now.len() < plan.keep {
            return Err(SessionError::Moved);
        }
        let report = rewind::apply_files(plan, self.setup.trash.as_ref(), overwrite);
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Truncate { keep: plan.keep, expect: now.len(), reply: tx })
            .map_err(|_| SessionError::Closed)?;
        if !rx.await.map_err(|_| SessionError::Closed)? {
            return Err(SessionError::Moved);
        }
        Ok(report)
    }

    /// The names of the tools the model can call (MCP servers' tools join once they started,
    /// between turns).
    pub fn tool_names(&self) -> Vec<String> {
        self.lock().tool_names.clone()
    }

    /// The sub-agent spawner: agent types and the children so far (`/agents`).
    pub fn subagents(&self) -> Option<&Arc<crate::subagents::Spawner>> {
        self.setup.spawner.as_ref()
    }

    /// The session's MCP servers, as they are now.
    pub fn mcp_status(&self) -> Vec<octo_mcp::ServerStatus> {
        self.setup.mcp.as_ref().map(|h| h.status()).unwrap_or_default()
    }

    /// Approves a project's MCP server (remembered by its fingerprint, so later runs start it
    /// too) and starts it; its tools join between turns.
    pub fn approve_mcp(&self, name: &str) -> Result<(), String> {
        let (Some(hub), Some(config)) = (self.setup.mcp.as_ref(), self.setup.config.as_ref()) else {
            return Err("this session has no MCP servers".into());
        };
        let server = config
            .mcp_servers
            .iter()
            .rev()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("no MCP server `{name}`"))?;
        crate::mcp::remember_approval(&Home::new(&config.home), server)
            .map_err(|e| format!("could not remember the approval: {e}"))?;
        if hub.approve(name) {
            Ok(())
        } else {
            Err(format!("`{name}` does not need approval"))
        }
    }

    /// The prompts the running MCP servers offer (slash commands `/mcp__<server>__<prompt>`).
    pub async fn mcp_prompts(&self) -> Vec<octo_mcp::prompts::PromptInfo> {
        match &self.setup.mcp {
            Some(h) => h.prompts().await,
            None => Vec::new(),
        }
    }

    /// The text an MCP prompt renders to, with `args` in the order of its arguments.
    pub async fn mcp_prompt_text(
        &self,
        prompt: &octo_mcp::prompts::PromptInfo,
        args: &[String],
    ) -> Result<String, String> {
        match &self.setup.mcp {
            Some(h) => h.render_prompt(prompt, args).await,
            None => Err("this session has no MCP servers".into()),
        }
    }

    /// The configuration the session started from (for `/permissions`, `config show`).
    pub fn config(&self) -> Option<&Config> {
        self.setup.config.as_ref()
    }
}
