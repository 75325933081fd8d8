//! What outlives the session: the files a hook runs as a session found them at its start or as
//! the user said yes to them, by a SHA-256 of their name and contents, per workspace, in octo's
//! home (out of the commands' reach). At a later session's start, a file git does not track
//! counts as changed unless it is as recorded — a model of an earlier session cannot leave a
//! planted script behind to run unasked in the next. The first session with hooks in a
//! workspace takes what it finds — what was there before octo first changed anything in it (or
//! in a folder around or inside it): the creation of a checkpoint store tells when that was.

use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The most answers kept per workspace (the oldest go first).
const MAX_PER_WORKSPACE: usize = 4096;

/// The approvals of one workspace, as loaded, and where they are kept.
#[derive(Debug)]
pub(super) struct Approved {
    file: Option<PathBuf>,
    workspace: String,
    known: Mutex<HashSet<String>>,
    /// Nothing was recorded for this workspace yet.
    first: bool,
}

/// A file's name (relative to the workspace) and contents, as one key.
fn key(rel: &str, contents: Option<&[u8]>) -> String {
    let mut h = Sha256::new();
    h.update(rel.as_bytes());
    h.update([0]);
    match contents {
        Some(c) => h.update(c),
        None => h.update(b"\0missing"),
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

type Store = BTreeMap<String, Vec<String>>;

fn read(file: &Path) -> Store {
    std::fs::read(file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

impl Approved {
    /// The approvals for `workspace` kept in `file` (`None`: none kept, nothing remembered).
    pub(super) fn load(file: Option<PathBuf>, workspace: &Path) -> Self {
        let workspace = workspace.display().to_string();
        let kept = file.as_deref().and_then(|f| read(f).remove(&workspace));
        let first = kept.is_none();
        let known = kept.unwrap_or_default().into_iter().collect();
        Self { file, workspace, known: Mutex::new(known), first }
    }

    /// Whether nothing was recorded for this workspace before this session.
    pub(super) fn first(&self) -> bool {
        self.first
    }

    /// Whether the user approved `rel` with these contents.
    pub(super) fn has(&self, rel: &str, contents: Option<&[u8]>) -> bool {
        self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&key(rel, contents))
    }

    /// Remembers these files as they are (a file that cannot be written only means the next
    /// session asks again).
    pub(super) fn add(&self, files: &[(String, Option<Vec<u8>>)]) {
        let keys: Vec<String> = files.iter().map(|(rel, c)| key(rel, c.as_deref())).collect();
        {
            let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // The first session writes the workspace's entry even when empty: a later one is
            // then not the first, and does not take what an earlier model left as found.
            if !self.first && keys.iter().all(|k| known.contains(k)) {
                return;
            }
            known.extend(keys.iter().cloned());
        }
        let Some(file) = &self.file else { return };
        let mut store = read(file);
        let list = store.entry(self.workspace.clone()).or_default();
        list.retain(|k| !keys.contains(k));
        list.extend(keys);
        let over = list.len().saturating_sub(MAX_PER_WORKSPACE);
        list.drain(..over);
        let Ok(text) = serde_json::to_vec_pretty(&store) else { return };
        let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
        if octo_session::private::write(&tmp, &text).is_ok() && std::fs::rename(&tmp, file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// When octo first changed files in `workspace`, a folder holding it or one inside it: the
/// earliest of their checkpoint stores (under `checkpoints`), made ahead of a turn's first
/// change. `None`: never, or checkpoints are off.
pub(super) fn octo_first_here(checkpoints: &Path, workspace: &Path) -> Option<std::time::SystemTime> {
    let entries = std::fs::read_dir(checkpoints).ok()?;
    entries
        .flatten()
        .take(10_000)
        .filter_map(|e| {
            let file = e.path().join("workspace");
            let text = std::fs::read_to_string(&file).ok()?;
            let there = PathBuf::from(text.trim_end_matches('\n'));
            (there.starts_with(workspace) || workspace.starts_with(&there))
                .then(|| std::fs::metadata(&file).and_then(|m| m.modified()).ok())
                .flatten()
        })
        .min()
}
