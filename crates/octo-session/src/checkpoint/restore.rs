//! Putting files back to how they were before a session's turn: every file that turn and the
//! later ones changed returns to its state before the first of them touched it. A file that
//! is no longer as the last of them left it (the user or another session changed it since) is
//! only overwritten when the caller says so; a link is restored as a link and never followed.

use super::error::CheckpointError;
use super::git::{nul_join, nul_list};
use super::record::Checkpoint;
use super::snapshot::Skipped;
use super::store::CheckpointStore;
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path};

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreAction {
    /// Written back with its old content (and mode).
    Restore,
    /// Deleted: it did not exist before.
    Delete,
}

/// One file of a restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRestore {
    /// The path, relative to the workspace.
    pub path: String,
    /// What happens to it.
    pub action: RestoreAction,
    /// Changed since the turns left it: only overwritten when the caller says so.
    pub changed_since: bool,
    /// Who changed it during the turns, when not the turns' own tools (a sub-agent).
    pub by: Option<String>,
    /// The tree its old state comes from.
    source: String,
}

/// What a restore would do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RestorePlan {
    /// The session.
    pub session: String,
    /// The checkpoints undone (their sequence numbers).
    pub checkpoints: Vec<u32>,
    /// The files, in path order.
    pub files: Vec<FileRestore>,
    /// Files the checkpoints left out (too large, unreadable): not restored.
    pub skipped: Vec<Skipped>,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RestoreReport {
    /// Files written back or deleted.
    pub restored: Vec<String>,
    /// Files left as they are, and why.
    pub left: Vec<(String, String)>,
}

type Entry = (String, String);

impl CheckpointStore {
    /// What restoring the files to before `checkpoints` (a session's, oldest first) would do.
    pub fn plan_restore(
        &self,
        session: &str,
        checkpoints: &[Checkpoint],
    ) -> Result<RestorePlan, CheckpointError> {
        let mut plan = RestorePlan {
            session: session.to_owned(),
            checkpoints: checkpoints.iter().map(|c| c.seq).collect(),
            ..RestorePlan::default()
        };
        for c in checkpoints {
            for s in &c.skipped {
                if !plan.skipped.contains(s) {
                    plan.skipped.push(s.clone());
                }
            }
        }
        // Per path: the tree before the first turn that changed it, the tree after the last.
        let mut spans: BTreeMap<String, (String, String, Option<String>)> = BTreeMap::new();
        for c in checkpoints {
            for ch in &c.changed {
                if plan.skipped.iter().any(|s| s.path == ch.path) {
                    continue;
                }
                let span =
                    spans.entry(ch.path.clone()).or_insert_with(|| (c.before.clone(), c.after.clone(), None));
                span.1.clone_from(&c.after);
                if ch.by.is_some() {
                    span.2.clone_from(&ch.by);
                }
            }
        }
        if spans.is_empty() {
            return Ok(plan);
        }
        let now = self.snapshot(session)?.tree;
        let paths: Vec<String> = spans.keys().cloned().collect();
        let mut trees: HashMap<String, HashMap<String, Entry>> = HashMap::new();
        for tree in spans.values().flat_map(|(b, a, _)| [b, a]).chain([&now]) {
            if !trees.contains_key(tree) {
                trees.insert(tree.clone(), self.entries(tree, &paths)?);
            }
        }
        for (path, (before, after, by)) in spans {
            let entry = |tree: &str| trees.get(tree).and_then(|t| t.get(&path));
            let (target, last, current) = (entry(&before), entry(&after), entry(&now));
            if target == current {
                continue;
            }
            plan.files.push(FileRestore {
                action: if target.is_some() { RestoreAction::Restore } else { RestoreAction::Delete },
                changed_since: last != current,
                path,
                by,
                source: before,
            });
        }
        Ok(plan)
    }

    /// Carries out `plan`; files changed since are only overwritten when listed in `overwrite`.
    pub fn restore(&self, plan: &RestorePlan, overwrite: &[String]) -> RestoreReport {
        let mut report = RestoreReport::default();
        let mut by_source: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for f in &plan.files {
            if f.changed_since && !overwrite.contains(&f.path) {
                report.left.push((f.path.clone(), "changed after the turn; left as it is".into()));
                continue;
            }
            if let Some(why) = unsafe_path(self.workspace(), &f.path) {
                report.left.push((f.path.clone(), why));
                continue;
            }
            match f.action {
                RestoreAction::Restore => by_source.entry(&f.source).or_default().push(f.path.clone()),
                RestoreAction::Delete => match delete(self.workspace(), &f.path) {
                    Ok(()) => report.restored.push(f.path.clone()),
                    Err(e) => report.left.push((f.path.clone(), format!("could not delete it: {e}"))),
                },
            }
        }
        for (source, paths) in by_source {
            // The shadow index is left alone: the next snapshot sees the restored files.
            let args = [
                "restore",
                "--source",
                source,
                "--worktree",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            match self.git.run(Some(&self.scratch_index()), &args, Some(&nul_join(&paths))) {
                Ok(_) => report.restored.extend(paths),
                Err(e) => report.left.extend(paths.into_iter().map(|p| (p, e.to_string()))),
            }
        }
        let _ = std::fs::remove_file(self.scratch_index());
        report.restored.sort();
        report
    }

    /// The entries (mode, object) of `paths` in `tree`.
    fn entries(&self, tree: &str, paths: &[String]) -> Result<HashMap<String, Entry>, CheckpointError> {
        let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", tree, "--"];
        args.extend(paths.iter().map(String::as_str));
        let out = self.git.run(None, &args, None)?;
        Ok(nul_list(&out)
            .into_iter()
            .filter_map(|line| {
                let (meta, path) = line.split_once('\t')?;
                let mut it = meta.split(' ');
                let (mode, _kind, oid) = (it.next()?, it.next()?, it.next()?);
                Some((path.to_owned(), (mode.to_owned(), oid.to_owned())))
            })
            .collect())
    }

    /// An index for `git restore` to use and throw away (it must not touch a session's).
    fn scratch_index(&self) -> std::path::PathBuf {
        self.dir().join(format!("octo-index-restore-{}", std::process::id()))
    }
}

/// Why `path` must not be written: it leaves the workspace, or a folder on its way is a link.
fn unsafe_path(workspace: &Path, path: &str) -> Option<String> {
    let rel = Path::new(path);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Some("its path leaves the workspace".into());
    }
    let mut at = workspace.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Some(format!("{} is now a link; nothing is written through it", at.display()));
            }
            _ => {}
        }
    }
    None
}

/// Deletes a file (a link itself, never its target) and the folders it leaves empty.
fn delete(workspace: &Path, path: &str) -> std::io::Result<()> {
    let full = workspace.join(path);
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => return Err(std::io::Error::other("it is a folder now")),
        Ok(_) => std::fs::remove_file(&full)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == workspace || !d.starts_with(workspace) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}
