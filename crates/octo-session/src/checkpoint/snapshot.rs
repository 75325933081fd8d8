//! Taking a snapshot: the files git's index cache says changed since the session's last one are
//! hashed into the store, then the index is written as a tree. Files too large or unreadable,
//! and folders that are repositories of their own, are left out and named.

use super::error::{io_err, CheckpointError};
use super::git::{nul_join, nul_list};
use super::store::CheckpointStore;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A file a snapshot left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The path, relative to the workspace.
    pub path: String,
    /// Why it was left out.
    pub why: String,
}

/// The workspace's files at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The git tree holding them.
    pub tree: String,
    /// What was left out.
    pub skipped: Vec<Skipped>,
}

impl CheckpointStore {
    /// Records the workspace's files as they are now, in the index of `session`.
    pub fn snapshot(&self, session: &str) -> Result<Snapshot, CheckpointError> {
        let _one = self.lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let index = self.index(session);
        match self.snapshot_with(&index) {
            Ok(s) => Ok(s),
            Err(CheckpointError::NoGit) => Err(CheckpointError::NoGit),
            // A damaged index (or one naming objects pruned since) is rebuilt once.
            Err(first) => {
                let _ = std::fs::remove_file(&index);
                self.snapshot_with(&index).map_err(|_| first)
            }
        }
    }

    fn snapshot_with(&self, index: &Path) -> Result<Snapshot, CheckpointError> {
        if !index.exists() {
            seed(index)?;
        }
        let listed = self.git.run(
            Some(index),
            &["ls-files", "-z", "--others", "--modified", "--exclude-standard"],
            None,
        )?;
        let mut update: Vec<String> = Vec::new();
        let mut remove: Vec<String> = Vec::new();
        let mut skipped = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for path in nul_list(&listed) {
            if !seen.insert(path.clone()) {
                continue;
            }
            if let Some(dir) = path.strip_suffix('/') {
                skipped.push(Skipped { path: dir.to_owned(), why: "a git repository of its own".into() });
                continue;
            }
            let full = self.git.work_tree.join(&path);
            match std::fs::symlink_metadata(&full) {
                Ok(m) if m.is_file() && m.len() > self.max_file_bytes => {
                    let mb = self.max_file_bytes / (1024 * 1024);
                    skipped.push(Skipped { path: path.clone(), why: format!("larger than {mb} MB") });
                    remove.push(path);
                }
                Ok(m) if m.is_file() && std::fs::File::open(&full).is_err() => {
                    skipped.push(Skipped { path: path.clone(), why: "not readable".into() });
                    remove.push(path);
                }
                // A file that became a folder leaves the index; the folder's files are listed.
                Ok(m) if m.is_dir() => remove.push(path),
                // Changed, new, or gone (then it leaves the snapshot).
                _ => update.push(path),
            }
        }
        if !update.is_empty() {
            self.git.run(
                Some(index),
                &["update-index", "--add", "--remove", "-z", "--stdin"],
                Some(&nul_join(&update)),
            )?;
        }
        if !remove.is_empty() {
            self.git.run(
                Some(index),
                &["update-index", "--force-remove", "-z", "--stdin"],
                Some(&nul_join(&remove)),
            )?;
        }
        let tree = self.git.text(Some(index), &["write-tree"], None)?;
        Ok(Snapshot { tree, skipped })
    }
}

/// A new session's index starts as a copy of the newest one in the store: its file stats are
/// valid for the same workspace, so only what changed since is hashed again.
fn seed(index: &Path) -> Result<(), CheckpointError> {
    let Some(dir) = index.parent() else { return Ok(()) };
    crate::private::create_dir(dir).map_err(|e| io_err(dir, &e))?;
    let newest = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".lock"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(t, _)| *t);
    if let Some((_, from)) = newest {
        let _ = std::fs::copy(from, index);
    }
    Ok(())
}
