//! The agent's state: its sender, tools, gate, history and configuration, how it is built, and
//! the accessors front ends use. The turn's steps (`turn`, `exec`, `compact`) work on it; the
//! running verbs are in `run`.

use crate::approval::{AllowAll, ApprovalBroker, PermissionGate};
use crate::event::TurnEndReason;
use crate::message::Message;
use crate::plugin::{Plugin, Plugins};
use crate::sender::{ReasoningEffort, Sender};
use crate::tool::ToolRegistry;
use crate::usage::{StopReason, Usage};
use std::path::PathBuf;
use std::sync::Arc;

/// Default cap on the model requests of one turn.
pub const DEFAULT_MAX_TURNS: u32 = 50;
/// Default cap on the text of one tool result, in bytes.
pub const DEFAULT_MAX_TOOL_OUTPUT_BYTES: usize = 64 * 1024;

/// Settings of an [`Agent`].
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// System prompt sent with every request. Kept byte-stable so provider caches hold.
    pub system_prompt: Option<String>,
    /// The most model requests one turn may make before it stops with
    /// [`TurnEndReason::MaxTurns`].
    pub max_turns: u32,
    /// Output token cap per request; `None` lets the provider choose.
    pub max_tokens: Option<u32>,
    /// The cap is the user's limit on the whole answer: a reply cut at it is neither asked
    /// again with more room nor continued (the turn ends, saying so).
    pub max_tokens_is_budget: bool,
    /// Reasoning effort per request.
    pub reasoning: ReasoningEffort,
    /// Tool result text beyond this many bytes is cut in the middle (head and tail kept).
    pub max_tool_output_bytes: usize,
    /// The workspace: tools resolve relative paths against it.
    pub cwd: PathBuf,
    /// Use streaming when the sender offers it (`false` asks for whole responses).
    pub streaming: bool,
    /// Context-window management.
    pub context: crate::context::ContextConfig,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            system_prompt: None,
            max_turns: DEFAULT_MAX_TURNS,
            max_tokens: None,
            max_tokens_is_budget: false,
            reasoning: ReasoningEffort::Off,
            max_tool_output_bytes: DEFAULT_MAX_TOOL_OUTPUT_BYTES,
            cwd: PathBuf::from("."),
            streaming: true,
            context: crate::context::ContextConfig::default(),
        }
    }
}

/// What a completed turn produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The text of the final assistant message.
    pub text: String,
    /// How the turn ended ([`TurnEndReason::Completed`] or [`TurnEndReason::MaxTurns`]).
    pub reason: TurnEndReason,
    /// Why the last response stopped.
    pub stop_reason: StopReason,
    /// Tokens of all the turn's requests.
    pub usage: Usage,
    /// How many model requests the turn made.
    pub requests: u32,
}

/// A conversation with a model that can call tools.
///
/// The agent owns its history. A turn takes `&mut self`, so two turns can never interleave on one
/// history; front ends that share an agent drive it from one task (an actor) and talk to that task
/// through channels.
///
/// ```
/// use octo_agent::{Agent, Message, Request, Response, Sender, ProviderError, StopReason, Usage};
/// use async_trait::async_trait;
/// use tokio_util::sync::CancellationToken;
///
/// struct Echo;
///
/// #[async_trait]
/// impl Sender for Echo {
///     fn name(&self) -> &str { "echo" }
///     async fn send(&self, req: Request<'_>) -> Result<Response, ProviderError> {
///         let last = req.messages.last().map(Message::text).unwrap_or_default();
///         Ok(Response { message: Message::assistant(last), usage: Usage::default(), stop_reason: StopReason::EndTurn })
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let mut agent = Agent::builder(std::sync::Arc::new(Echo)).build();
/// let outcome = agent.turn(Message::user("hello"), CancellationToken::new()).await?;
/// assert_eq!(outcome.text, "hello");
/// assert_eq!(agent.history().len(), 2);
/// # Ok(())
/// # })
/// # }
/// ```
pub struct Agent {
    pub(super) sender: Arc<dyn Sender>,
    pub(super) tools: ToolRegistry,
    pub(super) gate: Arc<dyn PermissionGate>,
    pub(super) approvals: Arc<ApprovalBroker>,
    pub(super) config: AgentConfig,
    pub(super) history: Vec<Message>,
    pub(super) occupancy: crate::context::Occupancy,
    pub(super) archiver: Option<Arc<dyn crate::context::Archiver>>,
    pub(super) compaction_sender: Option<Arc<dyn Sender>>,
    pub(super) plugins: Plugins,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("sender", &self.sender.name())
            .field("tools", &self.tools)
            .field("plugins", &self.plugins)
            .field("config", &self.config)
            .field("history_len", &self.history.len())
            .finish()
    }
}

/// Builds an [`Agent`].
pub struct AgentBuilder {
    sender: Arc<dyn Sender>,
    tools: ToolRegistry,
    gate: Arc<dyn PermissionGate>,
    config: AgentConfig,
    history: Vec<Message>,
    archiver: Option<Arc<dyn crate::context::Archiver>>,
    compaction_sender: Option<Arc<dyn Sender>>,
    plugins: Plugins,
}

impl AgentBuilder {
    /// Adds a plugin; plugins run in order of priority (see [`crate::plugin`]).
    pub fn plugin(mut self, plugin: Arc<dyn Plugin>) -> Self {
        self.plugins.add(plugin);
        self
    }

    /// Where folded messages are archived when the history is summarized.
    pub fn archiver(mut self, archiver: Arc<dyn crate::context::Archiver>) -> Self {
        self.archiver = Some(archiver);
        self
    }

    /// A cheaper model for summaries (default: the main sender).
    pub fn compaction_sender(mut self, sender: Arc<dyn Sender>) -> Self {
        self.compaction_sender = Some(sender);
        self
    }

    /// Sets the tools the model may call.
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the permission gate consulted before every tool call (default: [`AllowAll`]).
    pub fn permission_gate(mut self, gate: Arc<dyn PermissionGate>) -> Self {
        self.gate = gate;
        self
    }

    /// Sets the whole configuration.
    pub fn config(mut self, config: AgentConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.config.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the cap on model requests per turn.
    pub fn max_turns(mut self, max_turns: u32) -> Self {
        self.config.max_turns = max_turns;
        self
    }

    /// Sets the workspace directory.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.config.cwd = cwd.into();
        self
    }

    /// Starts from an existing history (a resumed session).
    pub fn history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }

    /// Builds the agent.
    pub fn build(self) -> Agent {
        Agent {
            sender: self.sender,
            tools: self.tools,
            gate: self.gate,
            approvals: Arc::new(ApprovalBroker::new()),
            config: self.config,
            history: self.history,
            occupancy: crate::context::Occupancy::default(),
            archiver: self.archiver,
            compaction_sender: self.compaction_sender,
            plugins: self.plugins,
        }
    }
}

impl Agent {
    /// Starts building an agent that talks to `sender`.
    pub fn builder(sender: Arc<dyn Sender>) -> AgentBuilder {
        AgentBuilder {
            sender,
            tools: ToolRegistry::new(),
            gate: Arc::new(AllowAll),
            config: AgentConfig::default(),
            history: Vec::new(),
            archiver: None,
            compaction_sender: None,
            plugins: Plugins::default(),
        }
    }

    /// The conversation so far (committed messages only; a turn in progress is not visible
    /// because it holds `&mut self`).
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Replaces the history (resume, compaction, branching).
    pub fn set_history(&mut self, history: Vec<Message>) {
        self.history = history;
        self.occupancy = crate::context::Occupancy::default();
    }

    /// Forgets the conversation.
    pub fn clear_history(&mut self) {
        self.history.clear();
        self.occupancy = crate::context::Occupancy::default();
    }

    /// The sender in use.
    pub fn sender(&self) -> &Arc<dyn Sender> {
        &self.sender
    }

    /// Switches model or endpoint; the history is kept.
    pub fn set_sender(&mut self, sender: Arc<dyn Sender>) {
        self.sender = sender;
    }

    /// The tools.
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// The tools, for adding or removing (MCP servers come and go).
    pub fn tools_mut(&mut self) -> &mut ToolRegistry {
        &mut self.tools
    }

    /// Adds a plugin (takes effect from the next turn).
    pub fn add_plugin(&mut self, plugin: Arc<dyn Plugin>) {
        self.plugins.add(plugin);
    }

    /// The plugins, in the order they run.
    pub fn plugins(&self) -> &Plugins {
        &self.plugins
    }

    /// Replaces the permission gate.
    pub fn set_permission_gate(&mut self, gate: Arc<dyn PermissionGate>) {
        self.gate = gate;
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The configuration, for changes that apply from the next turn.
    pub fn config_mut(&mut self) -> &mut AgentConfig {
        &mut self.config
    }

    /// The broker that answers approval requests; clone it into any front end.
    pub fn approvals(&self) -> Arc<ApprovalBroker> {
        Arc::clone(&self.approvals)
    }
    /// Estimated tokens the next request's prompt will occupy.
    pub fn context_tokens(&self) -> u64 {
        self.occupancy.tokens(&self.history, self.fixed_tokens())
    }

    /// Tokens of the system prompt and tool definitions, estimated.
    pub(super) fn fixed_tokens(&self) -> u64 {
        crate::context::estimate_fixed_tokens(self.config.system_prompt.as_deref(), self.tools.definitions())
    }
}
