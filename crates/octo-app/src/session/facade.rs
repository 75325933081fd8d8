//! The Session facade: the API every front end (CLI, web server, chat bridges, editors,
//! library users) drives. A session owns one agent in a task of its own; front ends send it
//! prompts, receive its events, answer its approvals and questions, and read its status. They
//! never touch providers or tools directly.

use super::actor::Task;
use super::error::SessionError;
use super::options::Status;
use super::setup::{Setup, TaskParts};
use super::state::{Command, Core};
use crate::config::Config;
use crate::fold::{TurnFold, TurnSummary};
use crate::permissions::PermissionEngine;
use crate::skills::Prepared;
use octo_agent::{Agent, AgentEvent, ApprovalBroker};
use octo_provider::ModelInfo;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};

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
    /// engine becomes the agent's permission gate, so the mode can be switched.
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

    /// Queues a prompt — text, a message with any blocks (images, as attached files or a
    /// program driving octo send them), or a prepared skill or command (`/name`, with the
    /// narrowing of the tools its turn runs under). It runs when the turn before it has finished.
    pub fn prompt(&self, input: impl Into<Prepared>) -> Result<(), SessionError> {
        let prepared = input.into();
        // The hosts the user names may be fetched after outside reads without asking again.
        self.engine.note_user_text(&prepared.message.text());
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
    pub async fn run(&self, input: impl Into<Prepared>) -> Result<TurnSummary, SessionError> {
        let mut rx = self.subscribe();
        self.prompt(input)?;
        let mut fold = TurnFold::new();
        loop {
            match rx.recv().await {
                Ok(event) => {
                    fold.push(&event);
                    if fold.is_done() {
                        return Ok(self.conversation().summarize(&fold));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return Err(SessionError::Closed),
            }
        }
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

    /// State, turns, tokens and cost (a resumed session's earlier runs included).
    pub fn status(&self) -> Status {
        let s = self.core.lock();
        let (usage, cost_usd) = s.spent();
        Status {
            state: s.state,
            turns: s.turns,
            usage,
            cost_usd,
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

    /// The directory the session works in.
    pub fn workspace(&self) -> &std::path::Path {
        &self.setup.workspace
    }

    /// The configuration the session started from (for `/permissions`, `config show`).
    pub fn config(&self) -> Option<&Config> {
        self.setup.config.as_ref()
    }

    /// Waits until the session has done what follows a turn (its checkpoint is stored), so a
    /// front end about to exit loses nothing.
    pub async fn settle(&self) {
        let _ = self.conversation().history().await;
    }

    /// Background commands still running.
    pub(crate) fn background_shells(&self) -> usize {
        self.setup.tools.shells.as_ref().map_or(0, |s| s.running())
    }

    /// octo's trash, where the files octo replaces are kept (none when tools are off).
    pub(crate) fn trash(&self) -> Option<&octo_tools::trash::Trash> {
        self.setup.tools.trash.as_ref()
    }
}
