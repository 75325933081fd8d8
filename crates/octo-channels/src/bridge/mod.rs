//! A bridge between one chat platform and octo sessions: each chat is a session in the
//! configured workspace; only allow-listed users are answered; approvals are buttons only the
//! session's owner can press; answers stream by editing one message and are split at the
//! platform's limit.
//!
//! Events are dispatched without waiting on their handling, so the platform's connection keeps
//! its heartbeats and acknowledgements: button presses are handled at once, messages in order
//! by one worker per chat.

mod commands;
mod press;
mod pump;
mod shown;
mod slash;

use crate::platform::{lock, Incoming, Platform, PlatformError};
use octo_app::{Launch, Launcher, Mode, Session, SessionOptions};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

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

/// The longest message taken as a prompt (a pasted log fits; a flood does not).
pub const MAX_PROMPT: usize = 256 * 1024;

/// One chat's session.
struct Chat {
    session: Session,
    owner: String,
    /// Marks this session's buttons: a button of an earlier session of the chat (before `/new`
    /// or a restart) cannot answer this one's approvals.
    nonce: String,
    /// Approvals shown with buttons, by approval id (kept from before the message is sent, so a
    /// press that arrives before the platform has answered the send still finds it).
    approvals: Mutex<HashMap<String, shown::Shown>>,
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
    /// Each chat's worker, taking its messages in order.
    workers: Mutex<HashMap<String, mpsc::UnboundedSender<(String, String)>>>,
    refused: Mutex<HashSet<String>>,
}

/// A value no earlier session of the process or of an earlier run is likely to share.
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_usize(COUNT.fetch_add(1, Ordering::SeqCst));
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
    );
    format!("{:08x}", h.finish() as u32)
}

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
            workers: Mutex::new(HashMap::new()),
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
                        self.dispatch(i);
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

    /// Hands an event to whoever handles it, without waiting.
    fn dispatch(self: &Arc<Self>, i: Incoming) {
        match i {
            Incoming::Button { chat, user, data, press } => {
                let me = Arc::clone(self);
                tokio::spawn(async move { me.button(&chat, &user, &data, &press).await });
            }
            Incoming::Message { chat, user, text } => {
                if !self.allowed(&user) {
                    let me = Arc::clone(self);
                    tokio::spawn(async move { me.refuse(&chat, &user).await });
                    return;
                }
                let mut workers = lock(&self.workers);
                if workers.get(&chat).is_some_and(mpsc::UnboundedSender::is_closed) {
                    // Its worker is gone (it cannot end on its own, but if it did): a new one.
                    workers.remove(&chat);
                }
                let tx = workers.entry(chat.clone()).or_insert_with(|| {
                    let (tx, mut rx) = mpsc::unbounded_channel::<(String, String)>();
                    let me = Arc::clone(self);
                    let chat = chat.clone();
                    tokio::spawn(async move {
                        while let Some((user, text)) = rx.recv().await {
                            Arc::clone(&me).message(chat.clone(), user, text).await;
                        }
                    });
                    tx
                });
                let _ = tx.send((user, text));
            }
        }
    }

    /// Handles one event and waits for it (the platform's poll loop does not: see `run`).
    pub async fn handle(self: Arc<Self>, i: Incoming) {
        match i {
            Incoming::Message { chat, user, text } => {
                if self.allowed(&user) {
                    self.message(chat, user, text).await;
                } else {
                    self.refuse(&chat, &user).await;
                }
            }
            Incoming::Button { chat, user, data, press } => self.button(&chat, &user, &data, &press).await,
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

    /// A user off the allow-list: logged each time, told once.
    async fn refuse(&self, chat: &str, user: &str) {
        eprintln!(
            "octo channels: {}: refused a message from user {user} in chat {chat} (not on the allow-list)",
            self.config.name
        );
        let first = {
            let mut refused = lock(&self.refused);
            if refused.len() >= 10_000 {
                refused.clear();
            }
            refused.insert(user.to_owned())
        };
        if first {
            self.say(chat, "This bot answers only the users its owner allowed.").await;
        }
    }

    /// A message from an allowed user: a command, an answer to the model's question, or a
    /// prompt.
    async fn message(self: Arc<Self>, chat: String, user: String, text: String) {
        if text.trim().is_empty() {
            let note = "octo reads the text of messages (attachments and stickers are not read). /help lists the commands.";
            return self.say(&chat, note).await;
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
        let slash = match self.command(&chat, &user, &text, existing.as_ref()).await {
            slash::Slash::Handled => return,
            slash::Slash::Other(word, arg) => Some((word, arg)),
            slash::Slash::Message => None,
        };
        if let Some(c) = &existing {
            // A question the model asked takes the owner's next message as its answer.
            if user == c.owner {
                let asked = lock(&c.question).take();
                if let Some(q) = asked {
                    if c.session.approvals().answer(&q, &text).is_ok() {
                        return;
                    }
                }
            }
        }
        let c = match existing {
            Some(c) => c,
            None => match Arc::clone(&self).start(&chat, &user).await {
                Ok(c) => c,
                Err(e) => return self.say(&chat, &format!("octo could not start a session: {e}")).await,
            },
        };
        let prepared = match slash {
            Some((word, arg)) => match self.skill(&chat, &c, word, arg).await {
                Some(p) => p,
                None => return,
            },
            None => octo_app::Message::user(text.as_str()).into(),
        };
        let queued = c.pending.fetch_add(1, Ordering::SeqCst) > 0;
        if let Err(e) = c.session.prompt(prepared) {
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
            nonce: nonce(),
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
}
