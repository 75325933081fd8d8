//! The session's task: it owns the agent, runs one command at a time, saves what the agent
//! commits and forwards every event to the front ends.

use super::{Command, SessionError, SessionOptions, Shared, State};
use crate::config::Config;
use crate::factory::Resolved;
use futures_util::StreamExt;
use octo_agent::{Agent, AgentEvent, CancellationToken, Message, Sender, TurnEndReason};
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, mpsc};

/// Opens the session store for saving or resuming, and loads a resumed history.
pub(super) fn persistence(
    config: &Config,
    options: &SessionOptions,
    workspace: &std::path::Path,
    resolved: &Resolved,
    session_id: &Arc<Mutex<Option<String>>>,
    notes: &mut Vec<String>,
) -> Result<Resumed, SessionError> {
    if !options.save && options.resume.is_none() {
        return Ok(Resumed::default());
    }
    let mut p = crate::persist::Persist {
        store: octo_session::SessionStore::new(crate::home::Home::new(&config.home).sessions()),
        writer: None,
        cwd: workspace.to_path_buf(),
        endpoint: resolved.endpoint.clone(),
        model: resolved.model.clone(),
        failed: false,
        titled: false,
        id: Arc::clone(session_id),
    };
    let mut history = Vec::new();
    let mut unanswered = None;
    if let Some(id) = &options.resume {
        let loaded = p.store.load(id)?;
        if loaded.meta.cwd != workspace {
            return Err(SessionError::OtherDirectory {
                id: id.clone(),
                dir: loaded.meta.cwd.display().to_string(),
            });
        }
        let (loaded, writer) = p.store.resume(id)?;
        notes.extend(loaded.warnings.iter().cloned());
        history = loaded.messages;
        unanswered = loaded.unanswered.map(|m| m.text());
        p.titled = loaded.title.is_some();
        *session_id.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(id.clone());
        p.writer = Some(writer);
    }
    Ok(Resumed { persist: Some(p), history, unanswered })
}

/// What a session starts from when it is saved or resumed.
#[derive(Default)]
pub(super) struct Resumed {
    pub persist: Option<crate::persist::Persist>,
    pub history: Vec<Message>,
    /// The last message sent in the resumed session whose turn never completed a round.
    pub unanswered: Option<String>,
}

/// How the task behaves.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Flags {
    pub unattended: bool,
    pub model_titles: bool,
}

/// Where the agent's tools come from, and when they were last assembled.
pub(super) struct Tools {
    pub sources: Vec<Arc<dyn octo_agent::ToolSource>>,
    pub mcp: Option<Arc<octo_mcp::McpHub>>,
    /// How long the first request waits for sources still starting (MCP servers).
    pub startup_wait: std::time::Duration,
    pub waited: bool,
    pub generation: u64,
}

/// What the task needs besides the agent.
pub(super) struct Task {
    pub events: broadcast::Sender<AgentEvent>,
    pub shared: Arc<Mutex<Shared>>,
    pub flags: Flags,
    pub persist: Option<crate::persist::Persist>,
    pub titles: mpsc::UnboundedSender<String>,
    /// The permission engine: a turn's narrowing (a skill's `allowed-tools`) ends with it.
    pub engine: Arc<crate::permissions::PermissionEngine>,
    /// The tools lent to sub-agents, kept equal to the agent's.
    pub lent_tools: Option<Arc<std::sync::RwLock<octo_agent::ToolRegistry>>>,
    /// The hooks in force.
    pub hooks: Option<Arc<octo_hooks::HookCell>>,
    /// Whether SessionStart has run.
    pub session_started: bool,
    /// SessionStart's context, until a prompt carries it.
    pub start_context: Option<String>,
    /// Whether the session continues a saved one.
    pub resumed: bool,
    /// Where every event is logged, when asked.
    pub event_log: Option<crate::hooks::EventLog>,
    pub tools: Tools,
}

impl Task {
    /// SessionStart (before the first prompt) and UserPromptSubmit: context is added to the
    /// prompt; a refusal is returned (the prompt is not sent).
    async fn prompt_hooks(&mut self, input: &mut Message) -> Option<String> {
        let hooks = self.hooks.as_ref()?.get();
        if !self.session_started {
            self.session_started = true;
            if hooks.has(octo_hooks::Event::SessionStart) {
                let source = if self.resumed { "resume" } else { "startup" };
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
            input.content.push(octo_agent::ContentBlock::text(format!("<{tag}>\n{c}\n</{tag}>")));
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
            let _ = self.events.send(AgentEvent::Notice { message });
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
                let _ = self.events.send(AgentEvent::Notice { message });
            }
        }
        let generation: u64 = self.tools.sources.iter().map(|s| s.generation()).fold(0, u64::wrapping_add);
        if generation != self.tools.generation {
            self.tools.generation = generation;
            let (registry, left_out) = crate::tools::assemble(&self.tools.sources);
            for message in left_out {
                let _ = self.events.send(AgentEvent::Notice { message });
            }
            self.lock().tool_names = registry.names().map(str::to_owned).collect();
            if let Some(lent) = &self.lent_tools {
                *lent.write().unwrap_or_else(std::sync::PoisonError::into_inner) = registry.clone();
            }
            *agent.tools_mut() = registry;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Saves committed messages; may start a background title request.
    fn committed(&mut self, messages: &[Message], sender: &Arc<dyn Sender>) {
        let Some(p) = self.persist.as_mut() else { return };
        let (notice, first_prompt) = p.committed(messages);
        if let Some(message) = notice {
            let _ = self.events.send(AgentEvent::Notice { message });
        }
        if let (Some(prompt), true) = (first_prompt, self.flags.model_titles) {
            let sender = Arc::clone(sender);
            let titles = self.titles.clone();
            tokio::spawn(async move {
                let msgs = [Message::user(crate::persist::title_request(&prompt))];
                let req = octo_agent::Request::new(&msgs).with_max_tokens(Some(40));
                let answer =
                    tokio::time::timeout(std::time::Duration::from_secs(20), ask_once(sender.as_ref(), req))
                        .await;
                if let Some(t) = answer.ok().flatten().as_deref().and_then(crate::persist::clean_title) {
                    let _ = titles.send(t);
                }
            });
        }
    }
}

/// One short request, streamed when the sender can (some servers only stream), as plain text.
pub(super) async fn ask_once(sender: &dyn Sender, req: octo_agent::Request<'_>) -> Option<String> {
    match sender.as_streaming() {
        Some(s) => {
            let mut stream = s.send_stream(req).await.ok()?;
            let mut text = String::new();
            while let Some(item) = stream.next().await {
                if let octo_agent::StreamEvent::TextDelta(t) = item.ok()? {
                    text.push_str(&t);
                }
            }
            Some(text)
        }
        None => sender.send(req).await.ok().map(|r| r.message.text()),
    }
}

/// Runs commands until every handle to the session is gone.
pub(super) async fn actor(
    mut agent: Agent,
    mut rx: mpsc::UnboundedReceiver<Command>,
    mut titles: mpsc::UnboundedReceiver<String>,
    mut task: Task,
) {
    loop {
        let cmd = tokio::select! {
            c = rx.recv() => match c {
                Some(c) => c,
                None => break,
            },
            Some(t) = titles.recv() => Command::Title(t),
        };
        match cmd {
            Command::Prompt(mut input, scope) => {
                {
                    let mut s = task.lock();
                    if s.closed {
                        s.queued = s.queued.saturating_sub(1);
                        continue;
                    }
                }
                task.refresh_tools(&mut agent).await;
                let cancel = CancellationToken::new();
                {
                    // Running from here: an abort also stops the prompt's hooks.
                    let mut s = task.lock();
                    s.state = State::Running;
                    s.current = Some(cancel.clone());
                }
                let refused = tokio::select! {
                    r = task.prompt_hooks(&mut input) => r,
                    () = cancel.cancelled() => Some("cancelled while the prompt's hooks ran".to_owned()),
                };
                if let Some(refusal) = refused {
                    {
                        let mut s = task.lock();
                        s.queued = s.queued.saturating_sub(1);
                        s.state = State::Idle;
                        s.current = None;
                    }
                    for ev in [
                        AgentEvent::Error { kind: octo_agent::ErrorKind::Agent, message: refusal },
                        AgentEvent::TurnEnd {
                            reason: if cancel.is_cancelled() {
                                TurnEndReason::Cancelled
                            } else {
                                TurnEndReason::Failed
                            },
                            stop_reason: None,
                            usage: octo_agent::Usage::default(),
                            requests: 0,
                        },
                    ] {
                        task.log(&ev);
                        let _ = task.events.send(ev);
                    }
                    continue;
                }
                // Memory saved since the last prompt reaches the model in this message, not by
                // changing the system prompt (whose cached prefix holds).
                let notes = std::mem::take(&mut task.lock().pending_notes);
                if !notes.is_empty() {
                    input.content.push(octo_agent::ContentBlock::text(format!(
                        "<memory-update>\n{}\n</memory-update>",
                        notes.join("\n")
                    )));
                }
                task.engine.clear_scopes();
                if let Some(scope) = scope {
                    task.engine.narrow(scope);
                }
                if let Some(message) = task.persist.as_mut().and_then(|p| p.pending(&input)) {
                    let _ = task.events.send(AgentEvent::Notice { message });
                }
                {
                    let mut s = task.lock();
                    s.queued = s.queued.saturating_sub(1);
                    s.state = State::Running;
                    s.current = Some(cancel.clone());
                }
                let sender = Arc::clone(agent.sender());
                let mut stream = if task.flags.unattended {
                    agent.turn_stream_unattended(input, cancel)
                } else {
                    agent.turn_stream(input, cancel)
                };
                // The first commit of a turn carries its input: after it, nothing can be lost.
                let mut input_committed = false;
                while let Some(ev) = stream.next().await {
                    match &ev {
                        AgentEvent::Usage { usage } => {
                            let mut s = task.lock();
                            s.usage += *usage;
                            s.context_tokens =
                                usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
                        }
                        AgentEvent::ToolUpdate { kind, data, .. }
                            if kind == crate::subagents::USAGE_UPDATE =>
                        {
                            if let Ok(u) = serde_json::from_value::<octo_agent::Usage>(data.clone()) {
                                task.lock().usage += u;
                            }
                        }
                        AgentEvent::ToolUpdate { kind, data, .. } if kind == "todos" => {
                            if let Ok(todos) = serde_json::from_value::<Vec<octo_tools::Todo>>(data.clone()) {
                                task.lock().todos = todos;
                            }
                        }
                        AgentEvent::TurnEnd { reason, .. } => {
                            task.lock().turns += 1;
                            if !input_committed {
                                let why = match reason {
                                    TurnEndReason::Cancelled => Some("cancelled"),
                                    TurnEndReason::Failed => Some("failed"),
                                    _ => None,
                                };
                                if let (Some(why), Some(p)) = (why, task.persist.as_mut()) {
                                    p.rolled_back(why);
                                }
                            }
                        }
                        AgentEvent::Committed { messages } => {
                            input_committed = true;
                            task.committed(messages, &sender);
                        }
                        AgentEvent::HistoryReplaced { messages } => {
                            if let Some(p) = task.persist.as_mut() {
                                p.replaced(messages);
                            }
                        }
                        _ => {}
                    }
                    task.notify_hooks(&ev);
                    task.log(&ev);
                    // Nobody listening is fine: the turn goes on.
                    let _ = task.events.send(ev);
                }
                drop(stream);
                task.engine.clear_scopes();
                let mut s = task.lock();
                s.state = State::Idle;
                s.current = None;
            }
            Command::Compact(focus) => {
                let mut stream = agent.compact_stream(focus);
                while let Some(ev) = stream.next().await {
                    if let (AgentEvent::HistoryReplaced { messages }, Some(p)) = (&ev, task.persist.as_mut())
                    {
                        p.replaced(messages);
                    }
                    let _ = task.events.send(ev);
                }
            }
            Command::SystemPrompt(text) => {
                agent.config_mut().system_prompt = Some(text);
            }
            Command::Title(t) => {
                if let Some(p) = task.persist.as_mut() {
                    p.set_title(&t);
                }
            }
            Command::SetSender(sender, label, info, max_tokens) => {
                agent.set_sender(sender);
                // The new model's window and output cap, not the old one's.
                agent.config_mut().context.window = info.context_window;
                agent.config_mut().max_tokens = max_tokens;
                if let Some(p) = task.persist.as_mut() {
                    p.model_changed(&label);
                }
                let mut s = task.lock();
                s.model = label;
                s.info = info;
                s.sender = Some(Arc::clone(agent.sender()));
            }
            Command::History(reply) => {
                let _ = reply.send(agent.history().to_vec());
            }
            Command::Truncate { keep, expect, reply } => {
                let history = agent.history();
                let ok = history.len() == expect && keep <= history.len();
                if ok {
                    let kept = history[..keep].to_vec();
                    if let Some(p) = task.persist.as_mut() {
                        p.replaced(&kept);
                    }
                    agent.set_history(kept);
                }
                let _ = reply.send(ok);
            }
            Command::Clear => {
                agent.clear_history();
                if let Some(p) = task.persist.as_mut() {
                    p.reset();
                }
            }
        }
    }
}
