//! A session's checkpoints: the workspace is snapshotted before the first call of a turn that
//! may change files (a plugin at the seat before each tool call), before and after each
//! sub-agent's work (to name what it changed), and after the turn; the pair is stored as the
//! turn's checkpoint ([`octo_session::checkpoint`]). Turns that only read cost nothing. A store
//! that cannot be used turns checkpoints off for the session with a notice; the turn goes on.

use crate::config::CheckpointSettings;
use async_trait::async_trait;
use octo_agent::plugin::ToolCallInfo;
use octo_agent::{BeforeTool, Plugin};
use octo_session::checkpoint::{Checkpoint, CheckpointError, CheckpointStore, Snapshot, TurnRecord};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The turn being recorded.
#[derive(Default)]
struct Turn {
    /// The session the turn belongs to; `None` between turns.
    session: Option<String>,
    before: Option<Snapshot>,
    /// Paths changed by sub-agents, by who.
    by: Vec<(String, Vec<String>)>,
}

/// Records a session's turns as checkpoints.
pub struct Recorder {
    root: PathBuf,
    workspace: PathBuf,
    settings: CheckpointSettings,
    store: tokio::sync::OnceCell<Option<Arc<CheckpointStore>>>,
    turn: tokio::sync::Mutex<Turn>,
    notices: Arc<Mutex<Vec<String>>>,
    off: AtomicBool,
    /// The id turns are kept under while the session is not saved.
    unsaved: String,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("workspace", &self.workspace).finish_non_exhaustive()
    }
}

/// Runs blocking checkpoint work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, CheckpointError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(CheckpointError::Io { path: String::new(), reason: e.to_string() }))
}

impl Recorder {
    /// A recorder for `workspace`, its stores under `root`; `None` when checkpoints are off.
    pub(crate) fn new(root: PathBuf, workspace: PathBuf, settings: CheckpointSettings) -> Option<Arc<Self>> {
        settings.enabled.then(|| {
            Arc::new(Self {
                root,
                workspace,
                settings,
                store: tokio::sync::OnceCell::new(),
                turn: tokio::sync::Mutex::new(Turn::default()),
                notices: Arc::new(Mutex::new(Vec::new())),
                off: AtomicBool::new(false),
                unsaved: octo_session::new_id(),
            })
        })
    }

    /// The workspace's store, opened at the first need (old checkpoints are pruned then, in the
    /// background).
    pub(crate) async fn store(&self) -> Option<Arc<CheckpointStore>> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let (root, ws) = (self.root.clone(), self.workspace.clone());
        let opened = self
            .store
            .get_or_init(|| async move {
                match blocking(move || CheckpointStore::open(&root, &ws)).await {
                    Ok(s) => Some(Arc::new(s)),
                    Err(e) => {
                        self.fail(&e);
                        None
                    }
                }
            })
            .await
            .clone();
        if opened.is_some() {
            self.prune_once();
        }
        opened
    }

    /// Drops checkpoints past the age and size limits, once per process, in the background.
    fn prune_once(&self) {
        static PRUNED: AtomicBool = AtomicBool::new(false);
        if PRUNED.swap(true, Ordering::Relaxed) {
            return;
        }
        let (root, notices) = (self.root.clone(), Arc::clone(&self.notices));
        let (age, bytes) = (self.settings.keep_days * 86_400, self.settings.max_mb * 1024 * 1024);
        std::thread::spawn(move || {
            if let Ok(r) = octo_session::checkpoint::prune(&root, age, bytes) {
                if r.removed > 0 {
                    let s = if r.removed == 1 { "" } else { "s" };
                    notices.lock().unwrap_or_else(PoisonError::into_inner).push(format!(
                        "pruned {} old checkpoint{s} (checkpoint_keep_days, checkpoint_max_mb)",
                        r.removed
                    ));
                }
            }
        });
    }

    /// Checkpoints stop for this session; the user is told why.
    fn fail(&self, e: &CheckpointError) {
        if !self.off.swap(true, Ordering::Relaxed) {
            let what = match e {
                CheckpointError::ReadOnly { .. } | CheckpointError::NoGit => e.to_string(),
                other => {
                    format!("{other}; checkpoints are off for this session (/rewind cannot restore files)")
                }
            };
            self.notices.lock().unwrap_or_else(PoisonError::into_inner).push(what);
        }
    }

    /// The id a session's checkpoints are kept under: the saved session's, else one of its own.
    pub(crate) fn key(&self, saved: Option<String>) -> String {
        saved.unwrap_or_else(|| self.unsaved.clone())
    }

    /// Notices for the user since the last call.
    pub(crate) fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *self.notices.lock().unwrap_or_else(PoisonError::into_inner))
    }

    async fn snapshot(&self, session: &str) -> Option<Snapshot> {
        let store = self.store().await?;
        let session = session.to_owned();
        match blocking(move || store.snapshot(&session)).await {
            Ok(s) => Some(s),
            Err(e) => {
                self.fail(&e);
                None
            }
        }
    }

    /// A turn of `session` starts.
    pub(crate) async fn begin(&self, session: String) {
        *self.turn.lock().await = Turn { session: Some(session), ..Turn::default() };
    }

    /// The state before the turn, taken before its first call that may change files.
    pub(crate) async fn ensure_before(&self) {
        let mut turn = self.turn.lock().await;
        if turn.before.is_some() || self.off.load(Ordering::Relaxed) {
            return;
        }
        let Some(session) = turn.session.clone() else { return };
        turn.before = self.snapshot(&session).await;
    }

    /// A sub-agent starts its work: the state now, to tell its changes from the turn's.
    pub(crate) async fn child_start(&self) -> Option<Snapshot> {
        self.ensure_before().await;
        let session = self.turn.lock().await.session.clone()?;
        self.snapshot(&session).await
    }

    /// A sub-agent ended: what changed since `start` is put down to `who`.
    pub(crate) async fn child_end(&self, who: String, start: Option<Snapshot>) {
        let Some(start) = start else { return };
        let paths = self.changed_since(start).await;
        if !paths.is_empty() {
            self.turn.lock().await.by.push((who, paths));
        }
    }

    /// The paths (relative to the workspace) that changed since `start` was taken.
    pub(crate) async fn changed_since(&self, start: Snapshot) -> Vec<String> {
        let Some(session) = self.turn.lock().await.session.clone() else { return Vec::new() };
        let (Some(now), Some(store)) = (self.snapshot(&session).await, self.store().await) else {
            return Vec::new();
        };
        let from = start.tree;
        match blocking(move || store.changes(&from, &now.tree)).await {
            Ok(changes) => changes.into_iter().map(|c| c.path).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The turn ended: its checkpoint, when it changed files.
    pub(crate) async fn end(&self, position: usize, prompt: String) -> Option<Checkpoint> {
        let turn = std::mem::take(&mut *self.turn.lock().await);
        let (session, before) = (turn.session?, turn.before?);
        let after = self.snapshot(&session).await?;
        let store = self.store().await?;
        let by = turn.by;
        let result = blocking(move || {
            store.record(&TurnRecord {
                session: &session,
                position,
                prompt: &prompt,
                before: &before,
                after: &after,
                by: &by,
            })
        })
        .await;
        match result {
            Ok(c) => c,
            Err(e) => {
                self.fail(&e);
                None
            }
        }
    }
}

/// The plugin that takes the turn's "before" snapshot ahead of its first call that may change
/// files. It runs first, so a hook that changes files is inside the checkpoint too.
pub(crate) struct CheckpointPlugin(pub Arc<Recorder>);

#[async_trait]
impl Plugin for CheckpointPlugin {
    fn name(&self) -> &str {
        "checkpoints"
    }

    fn priority(&self) -> i32 {
        i32::MAX
    }

    async fn before_tool(&self, call: ToolCallInfo<'_>) -> BeforeTool {
        if !call.meta.read_only {
            self.0.ensure_before().await;
        }
        BeforeTool::proceed()
    }
}
