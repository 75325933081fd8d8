//! A bridge between one chat platform and octo sessions: each chat is a session in the
//! configured workspace; only allow-listed users are answered; approvals are buttons only the
//! session's owner can press; answers stream by editing one message and are split at the
//! platform's limit.

use crate::platform::{Incoming, Platform, PlatformError, Sent};
use octo_app::{AgentEvent, Launch, Launcher, Mode, Session, SessionOptions};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a bridge runs.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// The channel's name (for logs).
    pub name: String,
    /// The user ids allowed to talk to octo.
    pub allow: Vec<String>,
    /// Where sessions work.
    pub workspace: PathBuf,
    /// Their permission mode (never auto: it is lowered to default).
    pub mode: Mode,
    /// The least time between two edits of a streaming answer.
    pub edit_every: Duration,
}

struct Chat {
    session: Session,
    owner: String,
    /// Approval messages by approval id (to mark them answered).
    approvals: Mutex<HashMap<String, (Sent, String)>>,
    /// A question the model asked, waiting for the owner's next message.
    question: Mutex<Option<String>>,
    /// Prompts sent and not yet finished.
    pending: AtomicUsize,
    /// Told when the chat starts over: its event pump stops.
    closed: tokio::sync::Notify,
}

/// One platform's bridge.
pub struct Bridge {
    platform: Arc<dyn Platform>,
    launcher: Arc<Launcher>,
    config: BridgeConfig,
    chats: Mutex<HashMap<String, Arc<Chat>>>,
    refused: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

const HELP: &str = "Send a task and octo works on it in this chat's session. /new starts over, /stop cancels the running turn, /status shows where things stand, /mode MODE and /model ENDPOINT:MODEL switch, /file PATH sends a file of the workspace.";

/// The longest message taken as a prompt (a pasted log fits; a flood does not).
pub const MAX_PROMPT: usize = 256 * 1024;

impl Bridge {
    /// A bridge for `platform`.
    pub fn new(platform: Arc<dyn Platform>, launcher: Arc<Launcher>, mut config: BridgeConfig) -> Arc<Self> {
        if config.mode == Mode::Auto {
            config.mode = Mode::Default;
        }
        Arc::new(Self {
            platform,
            launcher,
            config,
            chats: Mutex::new(HashMap::new()),
            refused: Mutex::new(HashSet::new()),
        })
    }

    /// Polls and answers until the platform refuses the token; network failures are retried
    /// with a growing pause.
    pub async fn run(self: Arc<Self>) -> Result<(), PlatformError> {
        let mut pause = Duration::from_millis(500);
        loop {
            match self.platform.poll().await {
                Ok(list) => {
                    pause = Duration::from_millis(500);
                    for i in list {
                        Arc::clone(&self).handle(i).await;
                    }
                }
                Err(e @ PlatformError::Unauthorized(_)) => return Err(e),
                Err(e) => {
                    eprintln!("octo channels: {}: {e}; retrying in {:?}", self.config.name, pause);
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(30));
                }
            }
        }
    }

    fn allowed(&self, user: &str) -> bool {
        self.config.allow.iter().any(|a| a == user)
    }

    async fn say(&self, chat: &str, text: &str) {
        for part in crate::split::split(text, self.platform.message_limit()) {
            if let Err(e) = self.platform.send(chat, &part, &[]).await {
                eprintln!("octo channels: {}: cannot send to {chat}: {e}", self.config.name);
            }
        }
    }

    /// Handles one update.
    pub async fn handle(self: Arc<Self>, i: Incoming) {
        match i {
            Incoming::Message { chat, user, text } => self.message(chat, user, text).await,
            Incoming::Button { chat, user, data, press } => self.button(&chat, &user, &data, &press).await,
        }
    }

    async fn message(self: Arc<Self>, chat: String, user: String, text: String) {
        if !self.allowed(&user) {
            eprintln!("octo channels: {}: refused a message from user {user} in chat {chat} (not on the allow-list)", self.config.name);
            if lock(&self.refused).insert(user) {
                self.say(&chat, "This bot answers only the users its owner allowed.").await;
            }
            return;
        }
        if text.len() > MAX_PROMPT {
            let msg = format!(
                "That message is {} KB; octo takes at most {} KB from a chat. Put the text in a file in the workspace and name it instead.",
                text.len() / 1024,
                MAX_PROMPT / 1024
            );
            return self.say(&chat, &msg).await;
        }
        let existing = lock(&self.chats).get(&chat).cloned();
        let word = text.split_whitespace().next().unwrap_or("");
        let arg = text[word.len()..].trim();
        match word {
            "/start" | "/help" => return self.say(&chat, HELP).await,
            "/new" => {
                if let Some(c) = lock(&self.chats).remove(&chat) {
                    c.session.abort();
                    c.closed.notify_one();
                }
                return self.say(&chat, "Started over: the next message begins a new session.").await;
            }
            "/stop" => {
                if let Some(c) = &existing {
                    c.session.abort();
                }
                return self.say(&chat, "Stopped.").await;
            }
            "/status" => {
                let text = match &existing {
                    Some(c) => {
                        let s = c.session.status();
                        let cost = s.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
                        format!(
                            "model {}, mode {}, {} turns, {} tokens of context{cost}",
                            s.model, s.mode, s.turns, s.context_tokens
                        )
                    }
                    None => "No session yet: send a task.".into(),
                };
                return self.say(&chat, &text).await;
            }
            "/mode" => {
                let reply = match (existing.as_ref(), arg.parse::<Mode>()) {
                    (_, Ok(Mode::Auto)) => "Auto mode is not available from a chat.".to_owned(),
                    (Some(c), Ok(m)) => {
                        c.session.set_mode(m);
                        format!("Mode: {m}")
                    }
                    (None, Ok(_)) => "No session yet: send a task first.".to_owned(),
                    (_, Err(e)) => e.to_string(),
                };
                return self.say(&chat, &reply).await;
            }
            "/model" => {
                let reply = match existing.as_ref() {
                    Some(c) => {
                        match c.session.set_model(arg, self.launcher.credentials(), self.launcher.env()) {
                            Ok(label) => format!("Model: {label}"),
                            Err(e) => e.to_string(),
                        }
                    }
                    None => "No session yet: send a task first.".to_owned(),
                };
                return self.say(&chat, &reply).await;
            }
            "/file" => return self.send_file(&chat, arg).await,
            _ => {}
        }
        // A question the model asked takes the owner's next message as its answer.
        if let Some(c) = &existing {
            if let Some(q) = lock(&c.question).take() {
                let _ = c.session.answer(&q, &text);
                return;
            }
        }
        let c = match existing {
            Some(c) => c,
            None => match Arc::clone(&self).start(&chat, &user).await {
                Ok(c) => c,
                Err(e) => return self.say(&chat, &format!("octo could not start a session: {e}")).await,
            },
        };
        let queued = c.pending.fetch_add(1, Ordering::SeqCst) > 0;
        if let Err(e) = c.session.prompt(text) {
            c.pending.fetch_sub(1, Ordering::SeqCst);
            return self.say(&chat, &e.to_string()).await;
        }
        if queued {
            self.say(&chat, "Queued: octo takes this once the current task is done (/stop cancels it).")
                .await;
        }
    }

    async fn start(self: Arc<Self>, chat: &str, user: &str) -> Result<Arc<Chat>, String> {
        let launcher = Arc::clone(&self.launcher);
        let launch = Launch {
            workspace: Some(self.config.workspace.clone()),
            options: SessionOptions { mode: Some(self.config.mode), save: true, ..SessionOptions::default() },
            ..Launch::default()
        };
        let handle = tokio::runtime::Handle::current();
        let session = tokio::task::spawn_blocking(move || {
            let _g = handle.enter();
            launcher.start(launch)
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        let c = Arc::new(Chat {
            session,
            owner: user.to_owned(),
            approvals: Mutex::new(HashMap::new()),
            question: Mutex::new(None),
            pending: AtomicUsize::new(0),
            closed: tokio::sync::Notify::new(),
        });
        let events = c.session.subscribe();
        lock(&self.chats).insert(chat.to_owned(), Arc::clone(&c));
        tokio::spawn(Arc::clone(&self).pump(chat.to_owned(), Arc::clone(&c), events));
        Ok(c)
    }

    /// Shows a chat's session as it works, turn after turn: a message edited as the answer
    /// streams, a line per tool call, buttons for approvals, the answer split at the end.
    async fn pump(
        self: Arc<Self>,
        chat: String,
        c: Arc<Chat>,
        mut events: tokio::sync::broadcast::Receiver<AgentEvent>,
    ) {
        let limit = self.platform.message_limit();
        let mut live: Option<Sent> = None;
        let (mut answer, mut shown, mut last_edit) = (String::new(), String::new(), Instant::now());
        loop {
            let ev = tokio::select! {
                ev = events.recv() => ev,
                () = c.closed.notified() => break,
            };
            let ev = match ev {
                Ok(ev) => ev,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            };
            match ev {
                AgentEvent::TurnStart { .. } => {
                    (answer, shown, last_edit) = (String::new(), String::new(), Instant::now());
                    live = self.platform.send(&chat, "…", &[]).await.ok();
                }
                AgentEvent::TextDelta { text } => {
                    answer.push_str(&text);
                    if live.is_none() {
                        // The answer after a tool call goes to a message of its own.
                        live = self.platform.send(&chat, "…", &[]).await.ok();
                    }
                    if last_edit.elapsed() >= self.config.edit_every {
                        if let Some(m) = &live {
                            let preview: String = answer.chars().take(limit).collect();
                            if preview != shown && self.platform.edit(m, &preview).await.is_ok() {
                                shown = preview;
                            }
                        }
                        last_edit = Instant::now();
                    }
                }
                AgentEvent::ToolCallStart { name, summary, .. } => {
                    self.say(&chat, &format!("▸ {name} {summary}")).await;
                    // The answer after the tool goes to a new message.
                    if !answer.is_empty() {
                        self.finish(&chat, live.take(), &answer, &shown).await;
                        answer.clear();
                        shown.clear();
                    }
                }
                AgentEvent::ApprovalRequired { approval_id, request } => {
                    let why = request.reason.map(|r| format!("\n({r})")).unwrap_or_default();
                    let text = format!("Allow {}?\n{}{why}", request.tool, request.summary);
                    let buttons = vec![
                        ("Allow".to_owned(), format!("ok:{approval_id}")),
                        ("Deny".to_owned(), format!("no:{approval_id}")),
                    ];
                    if let Ok(m) = self.platform.send(&chat, &text, &buttons).await {
                        lock(&c.approvals).insert(approval_id, (m, text));
                    }
                }
                AgentEvent::QuestionAsked { question_id, question, options, .. } => {
                    *lock(&c.question) = Some(question_id);
                    let opts = if options.is_empty() {
                        String::new()
                    } else {
                        format!("\n({})", options.join(" / "))
                    };
                    self.say(&chat, &format!("{question}{opts}")).await;
                }
                AgentEvent::Error { message, .. } => self.say(&chat, &format!("Error: {message}")).await,
                AgentEvent::TurnEnd { .. } => {
                    let _ = c.pending.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
                    if !answer.is_empty() || live.is_some() {
                        let text = if answer.trim().is_empty() {
                            "(done)".to_owned()
                        } else {
                            std::mem::take(&mut answer)
                        };
                        self.finish(&chat, live.take(), &text, &shown).await;
                    }
                }
                _ => {}
            }
        }
    }

    /// The final text: the live message edited to the first part, the rest sent after it.
    async fn finish(&self, chat: &str, live: Option<Sent>, text: &str, shown: &str) {
        let mut parts = crate::split::split(text, self.platform.message_limit()).into_iter();
        if let Some(m) = live {
            if let Some(first) = parts.next() {
                if first != shown && self.platform.edit(&m, &first).await.is_err() {
                    let _ = self.platform.send(chat, &first, &[]).await;
                }
            }
        }
        for p in parts {
            let _ = self.platform.send(chat, &p, &[]).await;
        }
    }

    /// Sends a file of the workspace (`/file PATH`): only a regular file inside it, within the
    /// platform's size limit.
    async fn send_file(&self, chat: &str, arg: &str) {
        let reply = match self.workspace_file(arg) {
            Ok((path, name)) => match tokio::fs::read(&path).await {
                Ok(bytes) => match self.platform.send_file(chat, &name, bytes).await {
                    Ok(()) => return,
                    Err(e) => format!("Could not send {arg}: {e}"),
                },
                Err(e) => format!("Could not read {arg}: {e}"),
            },
            Err(why) => why,
        };
        self.say(chat, &reply).await;
    }

    fn workspace_file(&self, arg: &str) -> Result<(PathBuf, String), String> {
        if arg.is_empty() {
            return Err("Usage: /file PATH (a file in the workspace)".into());
        }
        let root = self
            .config
            .workspace
            .canonicalize()
            .map_err(|e| format!("The workspace is not readable: {e}"))?;
        let path = root.join(arg).canonicalize().map_err(|_| format!("No file {arg} in the workspace."))?;
        if !path.starts_with(&root) {
            return Err(format!("{arg} is outside the workspace."));
        }
        let meta = std::fs::metadata(&path).map_err(|e| format!("Could not read {arg}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("{arg} is not a file."));
        }
        let limit = self.platform.file_limit();
        if meta.len() > limit {
            return Err(format!(
                "{arg} is {} KB; {} takes files up to {} KB.",
                meta.len() / 1024,
                self.platform.name(),
                limit / 1024
            ));
        }
        let name =
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
        Ok((path, name))
    }

    async fn button(&self, chat: &str, user: &str, data: &str, press: &str) {
        // Acknowledged first: platforms want an answer to a press within seconds.
        let (note, answered) = self.press(chat, user, data);
        let _ = self.platform.acknowledge(press, &note).await;
        if let Some((m, asked)) = answered {
            let _ = self.platform.edit(&m, &format!("{asked}\n→ {note}")).await;
        }
    }

    /// The note for the presser, and the approval message to mark answered.
    fn press(&self, chat: &str, user: &str, data: &str) -> (String, Option<(Sent, String)>) {
        let Some(c) = lock(&self.chats).get(chat).cloned() else {
            return ("This session is gone.".into(), None);
        };
        if user != c.owner || !self.allowed(user) {
            eprintln!(
                "octo channels: {}: user {user} pressed a button of another user's session in chat {chat}",
                self.config.name
            );
            return ("Only the person who started this session can answer it.".into(), None);
        }
        let (verdict, id) = match data.split_once(':') {
            Some(("ok", id)) => (true, id),
            Some(("no", id)) => (false, id),
            _ => return ("Unknown button.".into(), None),
        };
        let done = if verdict { c.session.approve(id) } else { c.session.reject(id, None) };
        let sent = lock(&c.approvals).remove(id);
        match done {
            Ok(()) => ((if verdict { "Allowed" } else { "Denied" }).to_owned(), sent),
            Err(_) => ("This request is no longer waiting.".into(), None),
        }
    }
}
