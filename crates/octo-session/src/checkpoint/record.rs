//! A turn's checkpoint: two commits (before, and after with the turn's record as its message)
//! and a ref per session and sequence number; listing, diffing, removing and copying them.

use super::error::CheckpointError;
use super::git::{nul_list, EMPTY_TREE};
use super::snapshot::{Skipped, Snapshot};
use super::store::{ref_safe, CheckpointStore};
use serde::{Deserialize, Serialize};

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The path, relative to the workspace.
    pub path: String,
    /// `A` added, `M` modified, `D` deleted, `T` its type changed (file, link).
    pub status: String,
    /// Who changed it when not the turn's own tools (a sub-agent, by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// What a turn's checkpoint is made of.
#[derive(Debug, Clone, Copy)]
pub struct TurnRecord<'a> {
    /// The session.
    pub session: &'a str,
    /// How many turns the conversation had before this one.
    pub position: usize,
    /// The prompt (its first line is kept).
    pub prompt: &'a str,
    /// The files before the turn.
    pub before: &'a Snapshot,
    /// The files after it.
    pub after: &'a Snapshot,
    /// Paths changed by others than the turn's own tools, by who changed them.
    pub by: &'a [(String, Vec<String>)],
}

/// A turn's checkpoint as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The session.
    pub session: String,
    /// Its number within the session (1, 2, …).
    pub seq: u32,
    /// How many turns the conversation had before this one.
    pub position: usize,
    /// The prompt's first line.
    pub prompt: String,
    /// When the turn ended (seconds since the Unix epoch).
    pub time: u64,
    /// The tree before the turn.
    pub before: String,
    /// The tree after it.
    pub after: String,
    /// The files the turn changed.
    pub changed: Vec<Change>,
    /// Files the snapshots left out.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
}

impl CheckpointStore {
    /// Stores a turn's checkpoint; `None` when the turn changed no file.
    pub fn record(&self, turn: &TurnRecord<'_>) -> Result<Option<Checkpoint>, CheckpointError> {
        let mut changed = self.changes(&turn.before.tree, &turn.after.tree)?;
        if changed.is_empty() {
            return Ok(None);
        }
        for c in &mut changed {
            c.by = turn.by.iter().find(|(_, paths)| paths.contains(&c.path)).map(|(who, _)| who.clone());
        }
        let mut skipped = turn.before.skipped.clone();
        for s in &turn.after.skipped {
            if !skipped.contains(s) {
                skipped.push(s.clone());
            }
        }
        let seq = self.list(Some(turn.session))?.iter().map(|c| c.seq).max().unwrap_or(0) + 1;
        let checkpoint = Checkpoint {
            session: turn.session.to_owned(),
            seq,
            position: turn.position,
            prompt: turn.prompt.lines().next().unwrap_or_default().chars().take(200).collect(),
            time: crate::now(),
            before: turn.before.tree.clone(),
            after: turn.after.tree.clone(),
            changed,
            skipped,
        };
        let message = serde_json::to_string(&checkpoint)
            .map_err(|e| CheckpointError::Git { args: "commit-tree".into(), reason: e.to_string() })?;
        let before =
            self.git.text(None, &["commit-tree", &checkpoint.before, "-m", "before the turn"], None)?;
        let after =
            self.git.text(None, &["commit-tree", &checkpoint.after, "-p", &before, "-m", &message], None)?;
        self.git.run(None, &["update-ref", &ref_name(turn.session, seq), &after], None)?;
        Ok(Some(checkpoint))
    }

    /// The files that differ between two trees.
    pub fn changes(&self, a: &str, b: &str) -> Result<Vec<Change>, CheckpointError> {
        if a == b {
            return Ok(Vec::new());
        }
        let out =
            self.git.run(None, &["diff-tree", "-r", "-z", "--no-renames", "--name-status", a, b], None)?;
        let parts = nul_list(&out);
        Ok(parts
            .chunks(2)
            .filter_map(|pair| match pair {
                [status, path] => Some(Change { path: path.clone(), status: status.clone(), by: None }),
                _ => None,
            })
            .collect())
    }

    /// The checkpoints of `session` (every session's when `None`), oldest first within each.
    pub fn list(&self, session: Option<&str>) -> Result<Vec<Checkpoint>, CheckpointError> {
        let prefix = match session {
            Some(s) => format!("refs/octo/{}/", ref_safe(s)),
            None => "refs/octo/".to_owned(),
        };
        let out = self.git.run(None, &["for-each-ref", "--format=%(contents)%00", &prefix], None)?;
        let mut list: Vec<Checkpoint> = out
            .split(|b| *b == 0)
            .filter_map(|raw| {
                serde_json::from_slice::<Checkpoint>(String::from_utf8_lossy(raw).trim().as_bytes()).ok()
            })
            .collect();
        list.sort_by(|a, b| (a.session.as_str(), a.seq).cmp(&(b.session.as_str(), b.seq)));
        Ok(list)
    }

    /// One checkpoint of a session.
    pub fn get(&self, session: &str, seq: u32) -> Result<Checkpoint, CheckpointError> {
        self.list(Some(session))?
            .into_iter()
            .find(|c| c.seq == seq)
            .ok_or_else(|| CheckpointError::NotFound { session: session.to_owned(), seq })
    }

    /// What a checkpoint's turn changed, as a unified diff.
    pub fn diff(&self, checkpoint: &Checkpoint) -> Result<String, CheckpointError> {
        let out = self.git.run(
            None,
            &["diff", "--no-color", "--no-ext-diff", "--no-textconv", &checkpoint.before, &checkpoint.after],
            None,
        )?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Forgets checkpoints of `session` (their turns were rewound).
    pub fn remove(&self, session: &str, seqs: &[u32]) -> Result<(), CheckpointError> {
        let script: String = seqs.iter().map(|s| format!("delete {}\n", ref_name(session, *s))).collect();
        if script.is_empty() {
            return Ok(());
        }
        self.git.run(None, &["update-ref", "--stdin"], Some(script.as_bytes()))?;
        Ok(())
    }

    /// Gives `to` (a branch of `from`) copies of every checkpoint of `from`.
    pub fn copy_session(&self, from: &str, to: &str) -> Result<(), CheckpointError> {
        let out = self.git.run(
            None,
            &[
                "for-each-ref",
                "--format=%(objectname) %(refname:lstrip=3)",
                &format!("refs/octo/{}/", ref_safe(from)),
            ],
            None,
        )?;
        let script: String = String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(oid, seq)| format!("create refs/octo/{}/{seq} {oid}\n", ref_safe(to)))
            .collect();
        if !script.is_empty() {
            self.git.run(None, &["update-ref", "--stdin"], Some(script.as_bytes()))?;
        }
        Ok(())
    }

    /// The tree with no files (the state before a workspace's first file).
    pub fn empty_tree(&self) -> &'static str {
        EMPTY_TREE
    }
}

fn ref_name(session: &str, seq: u32) -> String {
    format!("refs/octo/{}/{seq:06}", ref_safe(session))
}
