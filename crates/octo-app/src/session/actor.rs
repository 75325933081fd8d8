//! The session's task: it owns the agent, runs one command at a time (each in its own step),
//! saves what the agent commits and forwards every event to the front ends.

use super::options::State;
use super::setup::{Flags, Setup, TaskParts};
use super::state::{Command, Core};
use crate::fold::Change;
use crate::permissions::{PermissionEngine, Scope};
use futures_util::StreamExt;
use octo_agent::{
    Agent, AgentEvent, CancellationToken, ContentBlock, ErrorKind, Message, Sender, ToolRegistry, ToolSource,
    TurnEndReason,
};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;

/// Where the agent's tools come from, and when they were last assembled.
struct Tools {
    sources: Vec<Arc<dyn ToolSource>>,
    mcp: Option<Arc<octo_mcp::McpHub>>,
    /// How long the first request waits for sources still starting (MCP servers).
    startup_wait: Duration,
    waited: bool,
    generation: u64,
    /// The tools lent to sub-agents, kept equal to the agent's.
    lent: Option<Arc<RwLock<ToolRegistry>>>,
}

/// What the task needs besides the agent.
pub(super) struct Task {
    core: Core,
    flags: Flags,
    persist: Option<crate::persist::Persist>,
    /// Titles asked of the model in the background arrive here.
    titles: (mpsc::UnboundedSender<String>, mpsc::UnboundedReceiver<String>),
    /// The permission engine: a turn's narrowing (a skill's `allowed-tools`) ends with it.
    engine: Arc<PermissionEngine>,
    /// The hooks in force.
    hooks: Option<Arc<octo_hooks::HookCell>>,
    /// Whether SessionStart has run.
    session_started: bool,
    /// SessionStart's context, until a prompt carries it.
    start_context: Option<String>,
    /// Where every event is logged, when asked.
    event_log: Option<crate::hooks::EventLog>,
    tools: Tools,
    /// The turns' checkpoints.
    checkpoints: Option<Arc<crate::checkpoints::Recorder>>,
}

impl Task {
    /// The task of a session with this core and setup.
    pub(crate) fn new(
        core: &Core,
        engine: &Arc<PermissionEngine>,
        setup: &Setup,
        sources: Vec<Arc<dyn ToolSource>>,
        parts: TaskParts,
        home: Option<&crate::home::Home>,
    ) -> Self {
        let event_log = parts.flags.log_events.then(|| {
            // A new saved session's id is chosen at start, so the log is named after the
            // session from its first event.
            let id = core.known_id().unwrap_or_else(octo_session::new_id);
            let home = home.cloned().unwrap_or_else(crate::home::Home::from_env);
            crate::hooks::EventLog::new(&home, &id)
        });
        Self {
            core: core.clone(),
            flags: parts.flags,
            persist: parts.persist,
            titles: mpsc::unbounded_channel(),
            engine: Arc::clone(engine),
            hooks: setup.hooks.cell.clone(),
            session_started: false,
            start_context: None,
            event_log,
            tools: Tools {
                sources,
                mcp: setup.tools.mcp.clone(),
                startup_wait: parts.startup_wait,
                waited: false,
                generation: 0,
                lent: setup.tools.lent.clone(),
            },
            checkpoints: setup.tools.checkpoints.clone(),
        }
    }

    /// Runs commands until every handle to the session is gone.
    pub(crate) async fn run(mut self, mut agent: Agent, mut rx: mpsc::UnboundedReceiver<Command>) {
        loop {
            let cmd = tokio::select! {
                c = rx.recv() => match c {
                    Some(c) => c,
                    None => break,
                },
                Some(t) = self.titles.1.recv() => Command::Title(t),
            };
            match cmd {
                Command::Prompt(input, scope, model) => {
                    let back = model.map(|m| self.swap_model(&mut agent, &m));
                    self.prompt(&mut agent, input, scope).await;
                    if let Some(back) = back {
                        self.swap_model(&mut agent, &back);
                    }
                }
                Command::Compact(focus) => self.compact(&mut agent, focus).await,
                Command::SystemPrompt(text) => agent.config_mut().system_prompt = Some(text),
                Command::Title(t) => {
                    if let Some(p) = self.persist.as_mut() {
                        p.set_title(&t);
                    }
                }
                Command::SetSender(sender, label, info, max_tokens) => {
                    self.set_sender(&mut agent, sender, label, info, max_tokens);
                }
                Command::History(reply) => {
                    let _ = reply.send(agent.history().to_vec());
                }
                Command::Context(shares, reply) => {
                    let _ = reply.send(super::context::measure(&agent, shares));
                }
                Command::Truncate { keep, expect, fork, reply } => {
                    let fork = if fork { self.fork_saved(&agent, expect) } else { None };
                    let kept = self.truncate(&mut agent, keep, expect);
                    if kept {
                        self.recount(&agent);
                        // Front ends that keep the conversation (the server) follow the change.
                        let messages = agent.history().to_vec();
                        let _ = self.core.events.send(AgentEvent::HistoryReplaced { messages });
                    }
                    let _ = reply.send((kept, fork));
                }
                Command::Clear => {
                    agent.clear_history();
                    if let Some(p) = self.persist.as_mut() {
                        p.reset();
                    }
                    let _ = self.core.events.send(AgentEvent::HistoryReplaced { messages: Vec::new() });
                    let mut s = self.core.lock();
                    (s.context_tokens, s.todos) = (0, Vec::new());
                }
            }
        }
    }

    /// One prompt: its hooks, the notes it carries, then the turn with every event forwarded.
    async fn prompt(&mut self, agent: &mut Agent, mut input: Message, scope: Option<Scope>) {
        if self.dropped_as_closed() {
            return;
        }
        self.refresh_tools(agent).await;
        let cancel = CancellationToken::new();
        // Running from here: an abort also stops the prompt's hooks.
        self.set_running(Some(cancel.clone()), false);
        let refused = tokio::select! {
            r = self.prompt_hooks(&mut input) => r,
            () = cancel.cancelled() => Some("cancelled while the prompt's hooks ran".to_owned()),
        };
        if let Some(refusal) = refused {
            self.set_running(None, true);
            self.refuse(refusal, cancel.is_cancelled());
            return;
        }
        self.add_notes(&mut input);
        self.engine.clear_scopes();
        if let Some(scope) = scope {
            self.engine.grant(scope);
        }
        if let Some(message) = self.persist.as_mut().and_then(|p| p.pending(&input)) {
            self.core.notice(message);
        }
        self.set_running(Some(cancel.clone()), true);
        let position = agent.history().iter().filter(|m| super::turns::starts_turn(m)).count();
        let prompt = input.text();
        if let Some(r) = &self.checkpoints {
            r.begin(r.key(self.core.session_id())).await;
        }
        self.run_turn(agent, input, cancel).await;
        self.engine.clear_scopes();
        self.set_running(None, false);
        // After the turn's end is out: the next command waits for it, the user does not.
        if let Some(r) = &self.checkpoints {
            r.end(position, prompt).await;
            for n in r.take_notices() {
                self.core.notice(n);
            }
        }
    }

    /// A prompt queued before the session closed for good is dropped.
    fn dropped_as_closed(&self) -> bool {
        let mut s = self.core.lock();
        if s.closed {
            s.queued = s.queued.saturating_sub(1);
        }
        s.closed
    }

    /// Marks the session running (with the turn's cancel token) or idle; `dequeued` takes the
    /// prompt off the queue count.
    fn set_running(&self, current: Option<CancellationToken>, dequeued: bool) {
        let mut s = self.core.lock();
        if dequeued {
            s.queued = s.queued.saturating_sub(1);
        }
        s.state = if current.is_some() { State::Running } else { State::Idle };
        s.current = current;
    }

    /// A prompt its hooks refused: an error and the turn's end, so front ends move on.
    fn refuse(&mut self, refusal: String, cancelled: bool) {
        let reason = if cancelled { TurnEndReason::Cancelled } else { TurnEndReason::Failed };
        for ev in [
            AgentEvent::Error { kind: ErrorKind::Agent, message: refusal },
            AgentEvent::TurnEnd {
                reason,
                stop_reason: None,
                usage: octo_agent::Usage::default(),
                requests: 0,
            },
        ] {
            self.log(&ev);
            let _ = self.core.events.send(ev);
        }
    }

    /// Memory saved since the last prompt reaches the model in this message, not by changing
    /// the system prompt (whose cached prefix holds).
    fn add_notes(&self, input: &mut Message) {
        let notes = std::mem::take(&mut self.core.lock().pending_notes);
        if !notes.is_empty() {
            input
                .content
                .push(ContentBlock::text(format!("<memory-update>\n{}\n</memory-update>", notes.join("\n"))));
        }
    }

    /// The turn itself: every event is tracked, told to the hooks, logged and forwarded.
    async fn run_turn(&mut self, agent: &mut Agent, input: Message, cancel: CancellationToken) {
        let sender = Arc::clone(agent.sender());
        let mut stream = if self.flags.unattended {
            agent.turn_stream_unattended(input, cancel)
        } else {
            agent.turn_stream(input, cancel)
        };
        // The first commit of a turn carries its input: after it, nothing can be lost.
        let mut input_committed = false;
        let mut title_prompt = None;
        // What the session keeps is read from the same fold every front end draws.
        let mut fold = crate::fold::TurnFold::new();
        while let Some(ev) = stream.next().await {
            for change in fold.push(&ev) {
                self.track(&change, &mut input_committed, &mut title_prompt);
            }
            self.notify_hooks(&ev);
            self.log(&ev);
            // Nobody listening is fine: the turn goes on.
            let _ = self.core.events.send(ev);
        }
        drop(stream);
        // The title is asked for once the turn is over, so it never competes with the turn.
        if let (Some(prompt), true) = (title_prompt, self.flags.model_titles) {
            self.ask_title(sender, prompt);
        }
    }

    /// What one change of a turn means for the session: usage, the task list, the turn count,
    /// what is saved.
    fn track(&mut self, change: &Change<'_>, input_committed: &mut bool, title_prompt: &mut Option<String>) {
        match change {
            Change::Usage(usage) => {
                let mut s = self.core.lock();
                s.usage += *usage;
                s.context_tokens = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
            }
            Change::SubagentUsage { usage, cost_usd, .. } => self.core.add_child_usage(*usage, *cost_usd),
            Change::Todos(todos) => self.core.lock().todos = todos.clone(),
            Change::Ended { reason, .. } => {
                let spent = self.core.end_turn();
                if let Some(p) = self.persist.as_mut() {
                    p.turn_ended(spent, *reason, *input_committed);
                }
            }
            Change::Committed(messages) => {
                *input_committed = true;
                if let Some(p) = self.persist.as_mut() {
                    let (notice, first_prompt) = p.committed(messages);
                    if let Some(message) = notice {
                        self.core.notice(message);
                    }
                    *title_prompt = title_prompt.take().or(first_prompt);
                }
            }
            Change::HistoryReplaced(messages) => {
                if let Some(p) = self.persist.as_mut() {
                    p.replaced(messages);
                }
            }
            Change::Compacted { tokens_after, .. } => self.core.lock().context_tokens = *tokens_after,
            _ => {}
        }
    }

    /// `/compact [focus]`, after the running turn.
    async fn compact(&mut self, agent: &mut Agent, focus: Option<String>) {
        let mut stream = agent.compact_stream(focus);
        while let Some(ev) = stream.next().await {
            match (&ev, self.persist.as_mut()) {
                (AgentEvent::HistoryReplaced { messages }, Some(p)) => p.replaced(messages),
                // What `/status` says next is what the compaction reported.
                (AgentEvent::CompactionEnd { tokens_after, .. }, _) => {
                    self.core.lock().context_tokens = *tokens_after;
                }
                _ => {}
            }
            let _ = self.core.events.send(ev);
        }
    }

    /// Another model or endpoint; the conversation is kept.
    fn set_sender(
        &mut self,
        agent: &mut Agent,
        sender: Arc<dyn Sender>,
        label: String,
        info: octo_provider::ModelInfo,
        max_tokens: Option<u32>,
    ) {
        agent.set_sender(sender);
        // The new model's window and output cap, not the old one's.
        agent.config_mut().context.window = info.context_window;
        agent.config_mut().max_tokens = max_tokens;
        if let Some(p) = self.persist.as_mut() {
            p.model_changed(&label);
        }
        let mut s = self.core.lock();
        s.model = label;
        s.info = info;
        s.sender = Some(Arc::clone(agent.sender()));
    }

    /// Runs the next turn on `model` (a command's `model:`); returns the model it replaced. Not
    /// a model change of the session (nothing is saved about it).
    fn swap_model(
        &mut self,
        agent: &mut Agent,
        model: &crate::turn_models::TurnModel,
    ) -> crate::turn_models::TurnModel {
        let mut s = self.core.lock();
        let old = crate::turn_models::TurnModel {
            sender: Arc::clone(agent.sender()),
            label: std::mem::replace(&mut s.model, model.label.clone()),
            info: std::mem::replace(&mut s.info, model.info),
            max_tokens: agent.config_mut().max_tokens,
        };
        agent.set_sender(Arc::clone(&model.sender));
        agent.config_mut().context.window = model.info.context_window;
        agent.config_mut().max_tokens = model.max_tokens;
        s.sender = Some(Arc::clone(agent.sender()));
        old
    }

    /// What the history now holds, after it changed outside a turn (resumed, compacted,
    /// rewound): its estimated size, and the task list its last `todo_write` left. (A
    /// compaction reports its own size and keeps the list: the call may be folded away.)
    pub(super) fn recount(&self, agent: &Agent) {
        let tokens = agent.context_tokens();
        let todos = last_todos(agent.history(), agent.tools());
        let mut s = self.core.lock();
        (s.context_tokens, s.todos) = (tokens, todos);
    }

    /// A copy of the saved conversation as it is, as a new session (before a rewind drops turns).
    fn fork_saved(&self, agent: &Agent, expect: usize) -> Option<String> {
        let p = self.persist.as_ref()?;
        let w = p.writer.as_ref()?;
        (agent.history().len() == expect).then(|| p.store.fork(w.id(), expect).ok()).flatten()
    }

    /// Keeps the first `keep` messages, when the history still has `expect` (a rewind).
    fn truncate(&mut self, agent: &mut Agent, keep: usize, expect: usize) -> bool {
        let history = agent.history();
        let ok = history.len() == expect && keep <= history.len();
        if ok {
            let kept = history[..keep].to_vec();
            if let Some(p) = self.persist.as_mut() {
                p.replaced(&kept);
            }
            agent.set_history(kept);
        }
        ok
    }

    /// SessionStart (before the first prompt) and UserPromptSubmit: context is added to the
    /// prompt; a refusal is returned (the prompt is not sent).
    async fn prompt_hooks(&mut self, input: &mut Message) -> Option<String> {
        let hooks = self.hooks.as_ref()?.get();
        if !self.session_started {
            self.session_started = true;
            if hooks.has(octo_hooks::Event::SessionStart) {
                let source = if self.flags.resumed { "resume" } else { "startup" };
                self.start_context = hooks.session_start(source).await;
            }
        }
        let mut added = Vec::new();
        if hooks.has(octo_hooks::Event::UserPromptSubmit) {
            match hooks.user_prompt(&input.text()).await {
                // SessionStart's context waits for the first prompt that is sent.
                octo_hooks::PromptDecision::Block(reason) => {
                    return Some(format!("a UserPromptSubmit hook refused this prompt: {reason}"))
                }
                octo_hooks::PromptDecision::Proceed(c) => {
                    added.extend(c.map(|c| ("user-prompt-submit-hook", c)));
                }
            }
        }
        if let Some(c) = self.start_context.take() {
            added.insert(0, ("session-start-hook", c));
        }
        for (tag, c) in added {
            input.content.push(ContentBlock::text(format!("<{tag}>\n{c}\n</{tag}>")));
        }
        None
    }

    /// Notification hooks when an approval or a question waits for the user (not awaited).
    fn notify_hooks(&self, ev: &AgentEvent) {
        let Some(hooks) = self.hooks.as_ref().map(|h| h.get()) else { return };
        if !hooks.has(octo_hooks::Event::Notification) {
            return;
        }
        let message = match ev {
            AgentEvent::ApprovalRequired { request, .. } => {
                format!("octo needs your permission to use {}: {}", request.tool, request.summary)
            }
            AgentEvent::QuestionAsked { question, .. } => format!("octo has a question: {question}"),
            _ => return,
        };
        tokio::spawn(async move { hooks.notification(&message).await });
    }

    /// Appends `ev` to the event log, when there is one.
    fn log(&mut self, ev: &AgentEvent) {
        if let Some(message) = self.event_log.as_mut().and_then(|l| l.write(ev)) {
            self.core.notice(message);
        }
    }

    /// Before a turn: waits (once, briefly) for sources still starting, reports servers that
    /// failed, and assembles the tools again when a source's changed — so the tool list never
    /// changes within a turn.
    async fn refresh_tools(&mut self, agent: &mut Agent) {
        if self.tools.sources.len() < 2 {
            return;
        }
        if !self.tools.waited {
            self.tools.waited = true;
            let all = futures_util::future::join_all(self.tools.sources.iter().map(|s| s.ready()));
            let _ = tokio::time::timeout(self.tools.startup_wait, all).await;
        }
        if let Some(hub) = &self.tools.mcp {
            for message in hub.take_notices() {
                self.core.notice(message);
            }
        }
        let generation: u64 = self.tools.sources.iter().map(|s| s.generation()).fold(0, u64::wrapping_add);
        if generation != self.tools.generation {
            self.tools.generation = generation;
            let (registry, left_out) = crate::tools::assemble_for(&self.tools.sources, &self.engine);
            for message in left_out {
                self.core.notice(message);
            }
            self.core.lock().tool_names = registry.names().map(str::to_owned).collect();
            if let Some(lent) = &self.tools.lent {
                *lent.write().unwrap_or_else(std::sync::PoisonError::into_inner) = registry.clone();
            }
            *agent.tools_mut() = registry;
        }
    }

    /// Asks the model for a short title in the background (the first exchange is saved).
    fn ask_title(&self, sender: Arc<dyn Sender>, prompt: String) {
        let titles = self.titles.0.clone();
        tokio::spawn(async move {
            let msgs = [Message::user(crate::persist::title_request(&prompt))];
            let req = octo_agent::Request::new(&msgs).with_max_tokens(Some(40));
            let answer =
                tokio::time::timeout(Duration::from_secs(20), super::ask::ask_once(sender.as_ref(), req))
                    .await;
            if let Some(t) = answer.ok().flatten().as_deref().and_then(crate::persist::clean_title) {
                let _ = titles.send(t);
            }
        });
    }
}

/// The task list the last `todo_write` call in `history` set; empty when none did.
fn last_todos(history: &[Message], tools: &ToolRegistry) -> Vec<octo_tools::Todo> {
    #[derive(serde::Deserialize)]
    struct Input {
        todos: Vec<octo_tools::Todo>,
    }
    let is_todo_write =
        |name: &str| tools.meta(name).is_some_and(|m| m.output == octo_agent::OutputKind::Todos);
    history
        .iter()
        .rev()
        .flat_map(|m| m.content.iter().rev())
        .find_map(|b| match b {
            ContentBlock::ToolUse { name, input, .. } if is_todo_write(name) => {
                serde_json::from_value::<Input>(input.clone()).ok().map(|i| i.todos)
            }
            _ => None,
        })
        .unwrap_or_default()
}
