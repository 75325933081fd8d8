//! The Session facade: the API every front end (CLI, web server, chat bridges, editors,
//! library users) drives. A session owns one agent in a task of its own; front ends send it
//! prompts, receive its events, answer its approvals and questions, and read its status. They
//! never touch providers or tools directly.

use super::actor::Task;
use super::error::SessionError;
use super::options::Status;
use super::setup::{Setup, TaskParts};
use super::state::{Command, Core};
use crate::config::{Config, EnvLookup};
use crate::credentials::CredentialStore;
use crate::factory::{build_sender, resolve};
use crate::fold::{TurnFold, TurnSummary};
use crate::permissions::{Mode, PermissionEngine, Rule};
use octo_agent::{Agent, AgentEvent, ApprovalBroker, ApprovalDecision, Message, UnknownApproval};
use octo_provider::ModelInfo;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, oneshot};

/// A running conversation. Cheap to share (`Arc`) between front ends; dropping the last handle
/// ends its task.
pub struct Session {
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) core: Core,
    pub(super) broker: Arc<ApprovalBroker>,
    pub(super) engine: Arc<PermissionEngine>,
    pub(super) setup: Setup,
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
        let core = Core::new(model.to_owned(), info, Arc::clone(agent.sender()));
        let mut setup = Setup { workspace: agent.config().cwd.clone(), ..Setup::default() };
        setup.tools.registry = agent.tools().clone();
        Self::spawn(core, agent, engine, setup, TaskParts::default())
    }

    /// Starts the session's task on a finished agent; the handle keeps what the front ends read.
    pub(super) fn spawn(
        core: Core,
        agent: Agent,
        engine: Arc<PermissionEngine>,
        mut setup: Setup,
        parts: TaskParts,
    ) -> Self {
        let (commands, rx) = mpsc::unbounded_channel();
        let broker = agent.approvals();
        let _ = core.broker.set(Arc::clone(&broker));
        core.lock().tool_names = setup.tools.registry.names().map(str::to_owned).collect();
        let home = setup.config.as_ref().map(|c| crate::home::Home::new(&c.home));
        let sources = std::mem::take(&mut setup.tools.sources);
        let task = Task::new(&core, &engine, &setup, sources, parts, home.as_ref());
        // A resumed conversation occupies the context from the start, and may have a task list.
        if !agent.history().is_empty() {
            task.recount(&agent);
        }
        tokio::spawn(task.run(agent, rx));
        Self { commands, core, broker, engine, setup }
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
        self.core.lock().queued += 1;
        self.commands
            .send(Command::Prompt(prepared.message, prepared.scope, prepared.model))
            .map_err(|_| SessionError::Closed)
    }

    /// Receives every event from now on. Subscribe before prompting to see the whole turn.
    pub fn subscribe(&self) -> broadcast::Receiver<AgentEvent> {
        self.core.events.subscribe()
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
                    fold.push(&event);
                    if fold.is_done() {
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
        let s = self.core.lock();
        summary.cost_usd = super::state::cost_with(s.info.price, &summary.usage, &fold.priced_apart());
        summary.model = s.model.clone();
        summary.turns = s.turns;
        drop(s);
        summary.session_id = self.session_id();
        summary.mcp_problems = self
            .mcp_status()
            .into_iter()
            .filter(|s| !matches!(s.state.as_str(), "ready" | "disabled"))
            .map(|s| crate::fold::McpProblem { name: s.name, status: s.state, error: s.error })
            .collect();
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

    /// Refuses a pending tool call and refuses calls like it for the rest of the session
    /// (the scope "always" has when allowing); `message` is passed to the model.
    pub fn reject_always(&self, approval_id: &str, message: Option<String>) -> Result<(), UnknownApproval> {
        self.broker.resolve(approval_id, ApprovalDecision::DenyAlways { message })
    }

    /// Answers a pending question from `ask_user`.
    pub fn answer(&self, question_id: &str, answer: &str) -> Result<(), UnknownApproval> {
        self.broker.answer(question_id, answer)
    }

    /// Cancels the running turn (its processes are killed); queued prompts still run.
    pub fn abort(&self) {
        if let Some(c) = &self.core.lock().current {
            c.cancel();
        }
    }

    /// Stops the session for good (a front end starting over): the running turn is cancelled
    /// and the queued prompts are dropped without running.
    pub fn close(&self) {
        let mut s = self.core.lock();
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
        one.check(&self.setup.tools.registry)?;
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

    /// What was allowed with "always" in this session (see [`PermissionEngine::granted`]).
    pub fn granted(&self) -> Vec<String> {
        self.engine.granted()
    }

    /// Switches endpoint or model (`endpoint`, `endpoint:model`); the conversation is kept.
    pub fn set_model(
        &self,
        choice: &str,
        store: &dyn CredentialStore,
        env: EnvLookup<'_>,
    ) -> Result<String, SessionError> {
        let config = self.setup.config.as_ref().ok_or(SessionError::Closed)?;
        let r = match resolve(config, Some(choice), store, env) {
            // The configuration may have gained the endpoint since the session started: read it
            // again before saying it is not there.
            Err(crate::factory::EndpointError::UnknownEndpoint { .. }) => {
                let fresh = Config::load(
                    &config.home,
                    &self.setup.workspace,
                    env,
                    &crate::config::Overrides::default(),
                )?;
                resolve(&fresh, Some(choice), store, env)?
            }
            other => other?,
        };
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

    /// Background commands still running.
    pub(crate) fn background_shells(&self) -> usize {
        self.setup.tools.shells.as_ref().map_or(0, |s| s.running())
    }

    /// octo's trash, where the files octo replaces are kept (none when tools are off).
    pub(crate) fn trash(&self) -> Option<&octo_tools::trash::Trash> {
        self.setup.tools.trash.as_ref()
    }

    /// What fills the context window, by part (`/context`).
    pub async fn context_report(&self) -> Result<super::ContextReport, SessionError> {
        let shares = match &self.setup.skills.prompt {
            Some((_, _, parts)) => super::context::PromptShares {
                memory: parts.memory.as_ref().map_or(0, String::len),
                skills: parts.skills.as_ref().map_or(0, String::len),
            },
            None => super::context::PromptShares::default(),
        };
        let (tx, rx) = oneshot::channel();
        self.commands.send(Command::Context(shares, tx)).map_err(|_| SessionError::Closed)?;
        rx.await.map_err(|_| SessionError::Closed)
    }

    /// Writes the conversation as Markdown to `path` (relative to the workspace; default
    /// `octo-<session>.md`), never over an existing file (`/export`).
    pub async fn export(
        &self,
        path: Option<&str>,
    ) -> Result<(std::path::PathBuf, usize), super::ExportError> {
        let history = self.history().await?;
        if history.is_empty() {
            return Err(super::ExportError::Empty);
        }
        let name = match path.map(str::trim).filter(|p| !p.is_empty()) {
            Some(p) => std::path::PathBuf::from(p),
            None => {
                let stamp = self.session_id().unwrap_or_else(|| {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                        .to_string()
                });
                std::path::PathBuf::from(format!("octo-{stamp}.md"))
            }
        };
        let title = format!("octo conversation ({})", self.status().model);
        let markdown = super::export::to_markdown(&history, &title);
        let path = super::export::write(self.workspace(), &name, &markdown)?;
        Ok((path, history.len()))
    }

    /// State, turns, tokens and cost.
    pub fn status(&self) -> Status {
        let s = self.core.lock();
        Status {
            state: s.state,
            turns: s.turns,
            usage: s.usage,
            cost_usd: super::state::cost_with(s.info.price, &s.usage, &s.priced_apart),
            model: s.model.clone(),
            mode: self.engine.mode(),
            sandbox: self
                .setup
                .sandbox
                .as_ref()
                .map_or_else(|| "off".to_owned(), |s| crate::sandbox::status_line(s)),
            queued: s.queued,
            context_tokens: s.context_tokens,
            context_window: Some(s.info.context_window).filter(|w| *w > 0),
        }
    }

    /// Whether the current model takes images: `Some(false)` when it is known not to.
    pub fn accepts_images(&self) -> Option<bool> {
        let model = self.core.lock().model.clone();
        octo_provider::catalog::accepts_images(model.split_once(':').map_or(model.as_str(), |(_, m)| m))
    }

    /// The model's task list as it last set it (`todo_write`); empty when it has none.
    pub fn todos(&self) -> Vec<octo_tools::Todo> {
        self.core.lock().todos.clone()
    }

    /// Things the user should know about how the session was set up (an unavailable keyring, an
    /// ignored project setting).
    pub fn notes(&self) -> &[String] {
        &self.setup.notes
    }

    /// The id of the saved session, once its first round is saved (or from the start when
    /// resumed); `None` when the session is not saved.
    pub fn session_id(&self) -> Option<String> {
        self.core.session_id()
    }

    /// Reads [`Session::session_id`] as it is at each call, without holding the session (for a
    /// renderer that outlives a borrow).
    pub fn session_id_handle(&self) -> Arc<dyn Fn() -> Option<String> + Send + Sync> {
        let id = Arc::clone(&self.core.session_id);
        Arc::new(move || id.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone())
    }

    /// When the session was resumed: the last message sent in it whose turn never completed a
    /// round (octo was killed, or the turn failed or was cancelled). It is not in the history;
    /// front ends offer to send it again.
    pub fn unanswered(&self) -> Option<&str> {
        self.setup.unanswered.as_deref()
    }

    /// How a tool of the session describes itself (the tools it started with).
    pub fn tool_meta(&self, name: &str) -> Option<octo_agent::ToolMeta> {
        self.setup.tools.registry.meta(name).cloned()
    }

    /// A tool call in one line (the command, the path, the URL), as the live events give it.
    pub fn tool_summary(&self, name: &str, input: &serde_json::Value) -> String {
        self.setup.tools.registry.summary(name, input)
    }

    /// Gives the saved session a new title (what session lists show; at most 200 characters).
    pub fn rename(&self, title: &str) -> Result<(), SessionError> {
        self.commands
            .send(Command::Title(title.trim().chars().take(200).collect()))
            .map_err(|_| SessionError::Closed)
    }

    /// The names of the tools the model can call (MCP servers' tools join once they started,
    /// between turns).
    pub fn tool_names(&self) -> Vec<String> {
        self.core.lock().tool_names.clone()
    }

    /// The sub-agent spawner: agent types and the children so far (`/agents`).
    pub fn subagents(&self) -> Option<&Arc<crate::subagents::Spawner>> {
        self.setup.tools.spawner.as_ref()
    }

    /// How the user could allow a call that was refused (the flag or the rule to add), for a
    /// summary after a headless run.
    pub fn allow_hint(&self, call: &crate::fold::ToolCallRecord) -> String {
        let meta = self.setup.tools.registry.meta(&call.name);
        crate::permissions::allow_hint(&call.name, meta, &call.summary, call.outcome)
    }

    /// The directory the session works in.
    pub fn workspace(&self) -> &std::path::Path {
        &self.setup.workspace
    }

    /// The configuration the session started from (for `/permissions`, `config show`).
    pub fn config(&self) -> Option<&Config> {
        self.setup.config.as_ref()
    }
}
