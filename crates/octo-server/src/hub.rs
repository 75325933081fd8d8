//! The sessions a server runs, each with the numbered log of its events, so a client that
//! reconnects gets what it missed.

use octo_app::{Launch, Launcher, Resume, Session, SessionOptions};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Events kept per session for clients that reconnect.
const KEPT: usize = 20_000;

/// One event: its number (from 1) and its JSON.
pub type Numbered = (u64, Arc<str>);

/// A session the server runs.
pub struct Entry {
    /// The server's id for it.
    pub id: String,
    /// Where it works.
    pub workspace: PathBuf,
    /// The session.
    pub session: Session,
    log: Arc<Mutex<Log>>,
    live: broadcast::Sender<Numbered>,
    pump: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct Log {
    events: VecDeque<Numbered>,
    last: u64,
    /// The conversation as committed so far (kept from the events, so reading it never waits
    /// for a running turn).
    history: Vec<octo_app::Message>,
    /// Prompts sent and not yet started, shown as `user_prompt` events when their turn starts.
    prompts: VecDeque<serde_json::Value>,
    /// The number of the event that last changed `history`: the events after it are the turn
    /// under way, which a client that reloads follows again.
    committed_at: u64,
    /// The pump fell behind the session and lost events: `history` is read again from the
    /// session before it is given out.
    stale: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Entry {
    /// The events after `since`, and a receiver for the ones to come (no gap, no repeat: a
    /// client skips numbers it has). `missed` is true when some were dropped from the log.
    pub fn follow(&self, since: u64) -> (Vec<Numbered>, bool, broadcast::Receiver<Numbered>) {
        let log = lock(&self.log);
        let rx = self.live.subscribe();
        let first = log.events.front().map_or(log.last + 1, |e| e.0);
        let missed = since + 1 < first && since < log.last;
        let past = log.events.iter().filter(|e| e.0 > since).cloned().collect();
        (past, missed, rx)
    }

    /// Records a prompt this server sent, so its turn's events begin with a `user_prompt` event
    /// (`{"type": "user_prompt", "text", "images"}`) that every tab draws, a reloaded one too.
    pub fn announce_prompt(&self, text: &str, images: usize) {
        lock(&self.log)
            .prompts
            .push_back(serde_json::json!({"type": "user_prompt", "text": text, "images": images}));
    }

    /// The number of the last event.
    pub fn last_event(&self) -> u64 {
        lock(&self.log).last
    }

    /// The committed conversation and the number of the last event it includes: a client
    /// renders it, then follows the events after that number (the running turn's text so far,
    /// its pending approvals and questions among them).
    pub async fn history(&self) -> (Vec<octo_app::Message>, u64) {
        if lock(&self.log).stale {
            // Events were lost on the way in (a Committed among them, maybe): the session's own
            // history is the truth. It is read after the running turn, if any, ends.
            if let Ok(fresh) = self.session.conversation().history().await {
                let mut log = lock(&self.log);
                log.history = fresh;
                log.committed_at = log.last;
                log.stale = false;
            }
        }
        let log = lock(&self.log);
        (log.history.clone(), log.committed_at)
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.session.abort();
        self.pump.abort();
    }
}

/// Why a session could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The launcher refused (no endpoint, a bad workspace, a session in use…).
    #[error("{0}")]
    Launch(#[from] octo_app::LaunchError),
    /// Too many sessions.
    #[error("too many sessions ({0}); delete some first")]
    Full(usize),
}

/// The most sessions at once.
pub const MAX_SESSIONS: usize = 256;

/// The server's sessions.
pub struct Hub {
    launcher: Launcher,
    sessions: Mutex<HashMap<String, Arc<Entry>>>,
    next: AtomicU64,
}

impl Hub {
    /// No sessions yet.
    pub fn new(launcher: Launcher) -> Self {
        Self { launcher, sessions: Mutex::new(HashMap::new()), next: AtomicU64::new(1) }
    }

    /// The launcher (credentials and environment for model switches).
    pub fn launcher(&self) -> &Launcher {
        &self.launcher
    }

    /// Starts a session in `workspace` (continuing the saved one `resume` names).
    pub fn create(
        &self,
        workspace: PathBuf,
        resume: Option<String>,
        options: SessionOptions,
    ) -> Result<Arc<Entry>, HubError> {
        let count = lock(&self.sessions).len();
        if count >= MAX_SESSIONS {
            return Err(HubError::Full(count));
        }
        let launch = Launch {
            workspace: Some(workspace.clone()),
            overrides: octo_app::config::Overrides::default(),
            resume: resume.map_or(Resume::New, Resume::Id),
            options,
        };
        let session = self.launcher.start(launch)?;
        // A resumed conversation: what the session starts with (it is idle, this is at once).
        let initial = tokio::runtime::Handle::try_current()
            .ok()
            .and_then(|h| h.block_on(session.conversation().history()).ok())
            .unwrap_or_default();
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let id = format!("s{n}");
        let log = Arc::new(Mutex::new(Log { history: initial, ..Log::default() }));
        let (live, _) = broadcast::channel(4096);
        let pump = tokio::spawn(pump(session.subscribe(), Arc::clone(&log), live.clone()));
        let entry = Arc::new(Entry { id: id.clone(), workspace, session, log, live, pump });
        lock(&self.sessions).insert(id, Arc::clone(&entry));
        Ok(entry)
    }

    /// The session `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Entry>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// The live session saved as `saved` (a session file's id).
    pub fn by_saved(&self, saved: &str) -> Option<Arc<Entry>> {
        lock(&self.sessions)
            .values()
            .find(|e| e.session.conversation().id().as_deref() == Some(saved))
            .cloned()
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Vec<Arc<Entry>> {
        let mut all: Vec<Arc<Entry>> = lock(&self.sessions).values().cloned().collect();
        all.sort_by_key(|e| e.id.trim_start_matches('s').parse::<u64>().unwrap_or(0));
        all
    }

    /// Stops and forgets the session `id` (its saved conversation stays on disk).
    pub fn remove(&self, id: &str) -> bool {
        lock(&self.sessions).remove(id).is_some()
    }

    /// Cancels every running turn (at shutdown).
    pub fn shutdown(&self) {
        for e in lock(&self.sessions).drain() {
            e.1.session.abort();
        }
    }
}

/// Numbers the session's events into the log and sends them on to the clients following. The
/// turn's fold reads them too: what it says changed in the history is kept, and a reply that
/// broke off is announced (`answer_restarted`, with the answer that stands) before the retry, so
/// a client replaces what it showed instead of adding to it.
async fn pump(
    mut rx: broadcast::Receiver<octo_app::AgentEvent>,
    log: Arc<Mutex<Log>>,
    live: broadcast::Sender<Numbered>,
) {
    let mut fold = octo_app::TurnFold::new();
    loop {
        let ev = match rx.recv().await {
            Ok(ev) => ev,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                // Told to every client as the event stream tells one that fell behind: what
                // the lost events said is in the history, which is read again.
                let mut l = lock(&log);
                l.stale = true;
                push(&mut l, &live, lagged(n));
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if matches!(ev, octo_app::AgentEvent::TurnStart { .. }) {
            fold = octo_app::TurnFold::new();
        }
        let mut l = lock(&log);
        let mut committed = false;
        for change in fold.push(&ev) {
            match change {
                octo_app::Change::Committed(m) => {
                    l.history.extend_from_slice(m);
                    committed = true;
                }
                octo_app::Change::HistoryReplaced(m) => {
                    l.history = m.to_vec();
                    committed = true;
                }
                octo_app::Change::AnswerRestarted { kept }
                    if matches!(ev, octo_app::AgentEvent::Retry { .. }) =>
                {
                    let restarted = serde_json::json!({"type": "answer_restarted", "kept": kept});
                    push(&mut l, &live, restarted.to_string().into());
                }
                _ => {}
            }
        }
        push(&mut l, &live, serde_json::to_string(&ev).unwrap_or_default().into());
        if committed {
            l.committed_at = l.last;
        }
        if matches!(ev, octo_app::AgentEvent::TurnStart { .. }) {
            if let Some(p) = l.prompts.pop_front() {
                push(&mut l, &live, p.to_string().into());
            }
        }
    }
}

fn push(l: &mut Log, live: &broadcast::Sender<Numbered>, json: Arc<str>) {
    l.last += 1;
    let item = (l.last, json);
    l.events.push_back(item.clone());
    if l.events.len() > KEPT {
        l.events.pop_front();
    }
    let _ = live.send(item);
}

/// The event telling a client it missed `n` events that are no longer kept.
pub(crate) fn lagged(n: u64) -> Arc<str> {
    serde_json::json!({
        "type": "lagged",
        "missed": n,
        "message": format!("{n} events were missed and are no longer kept: fetch the history again (GET /api/sessions/{{id}}/history)")
    })
    .to_string()
    .into()
}
