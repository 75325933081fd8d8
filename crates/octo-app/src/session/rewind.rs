//! Going back: the last turns' file changes are undone from their checkpoints (whoever made
//! them: octo's file tools, shell commands, sub-agents, hooks), the turns are dropped from the
//! conversation (the old branch is kept as a forked session), or both. A file changed after the
//! turns by someone else is named and left alone unless the user says to overwrite it.

use super::error::SessionError;
use super::handles::Conversation;
use super::state::Command;
use super::turns::{first_line, starts};
use octo_agent::{ContentBlock, Message, Subject, ToolRegistry};
use octo_session::checkpoint::{Checkpoint, RestoreAction, RestorePlan};
use octo_tools::trash::Undo;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::oneshot;

/// What a rewind puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RewindWhat {
    /// The files and the conversation.
    #[default]
    Both,
    /// Only the files.
    Code,
    /// Only the conversation.
    Conversation,
}

impl RewindWhat {
    /// Whether files are restored.
    pub(crate) fn code(self) -> bool {
        matches!(self, Self::Both | Self::Code)
    }

    /// Whether turns are dropped from the conversation.
    pub(crate) fn conversation(self) -> bool {
        matches!(self, Self::Both | Self::Conversation)
    }

    /// The word for it, as typed after `/rewind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Both => "both",
            Self::Code => "code",
            Self::Conversation => "conversation",
        }
    }
}

/// What one file goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUndo {
    /// The file.
    pub path: PathBuf,
    /// Restored to its content before the turns, or deleted (they created it).
    pub undo: Undo,
    /// Changed after the turns left it: only overwritten when the user says so.
    pub changed_since: bool,
    /// Who changed it when not the turn's own tools (a sub-agent).
    pub by: Option<String>,
}

/// What `/rewind` would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPlan {
    /// Turns gone back over (fewer than asked when the conversation is shorter).
    pub turns: usize,
    /// Files, conversation or both.
    pub what: RewindWhat,
    /// Files to restore, one entry per file.
    pub files: Vec<FileUndo>,
    /// Files the checkpoints left out (too large, unreadable), which stay as they are.
    pub skipped: Vec<(PathBuf, String)>,
    /// Shell commands of those turns whose effects cannot be undone (checkpoints are off).
    pub commands: Vec<String>,
    /// Why files are not restored, when they are not.
    pub note: Option<String>,
    /// Messages kept.
    pub(crate) keep: usize,
    pub(crate) restore: Option<RestorePlan>,
}

/// What `/rewind` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewindReport {
    /// Files put back (or deleted).
    pub restored: Vec<PathBuf>,
    /// Files left alone, and why.
    pub skipped: Vec<(PathBuf, String)>,
    /// Turns dropped from the conversation.
    pub turns: usize,
    /// The saved session that keeps the conversation as it was.
    pub fork: Option<String>,
}

/// One turn of the conversation, for choosing where to go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInfo {
    /// How many turns back it is (1 is the last).
    pub back: usize,
    /// The prompt's first line.
    pub prompt: String,
    /// Files it changed (from its checkpoint).
    pub files: Vec<String>,
}

/// The checkpoints of the turns from `from` on (by position), matched by their prompt so a
/// checkpoint of a turn that was compacted away is never taken for another.
fn matching(history: &[Message], from: usize, all: Vec<Checkpoint>) -> Vec<Checkpoint> {
    let starts = starts(history);
    all.into_iter()
        .filter(|c| {
            c.position >= from && starts.get(c.position).is_some_and(|&i| first_line(&history[i]) == c.prompt)
        })
        .collect()
}

/// The shell commands run in `history[keep..]`.
fn commands(history: &[Message], tools: &ToolRegistry) -> Vec<String> {
    let mut out = Vec::new();
    for b in history.iter().flat_map(|m| &m.content) {
        if let ContentBlock::ToolUse { name, input, .. } = b {
            if let Some(Subject::Command { field }) = tools.meta(name).map(|m| &m.subject) {
                if let Some(c) = input.get(field).and_then(|v| v.as_str()) {
                    out.push(c.to_owned());
                }
            }
        }
    }
    out
}

impl Conversation<'_> {
    fn checkpoint_key(self) -> Option<(Arc<crate::checkpoints::Recorder>, String)> {
        let r = self.session.setup.tools.checkpoints.clone()?;
        let key = r.key(self.session.core.session_id());
        Some((r, key))
    }

    /// The conversation's last turns (newest first, at most `limit`) with the files each changed.
    pub async fn turns(self, limit: usize) -> Result<Vec<TurnInfo>, SessionError> {
        let history = self.history().await?;
        let starts = starts(&history);
        let mut checkpoints = Vec::new();
        if let Some((r, key)) = self.checkpoint_key() {
            if let Some(store) = r.store().await {
                checkpoints = matching(&history, 0, store.list(Some(&key)).unwrap_or_default());
            }
        }
        Ok(starts
            .iter()
            .enumerate()
            .rev()
            .take(limit)
            .map(|(pos, &i)| TurnInfo {
                back: starts.len() - pos,
                prompt: first_line(&history[i]),
                files: checkpoints
                    .iter()
                    .filter(|c| c.position == pos)
                    .flat_map(|c| c.changed.iter().map(|ch| ch.path.clone()))
                    .collect(),
            })
            .collect())
    }

    /// What going back over the last `n` turns would do: the files their checkpoints restore
    /// (and whether each was changed since), the turns dropped.
    pub async fn rewind_plan(self, n: usize, what: RewindWhat) -> Result<RewindPlan, SessionError> {
        let history = self.history().await?;
        let starts = starts(&history);
        let turns = n.min(starts.len());
        let keep = if turns == 0 { history.len() } else { starts[starts.len() - turns] };
        let mut plan = RewindPlan {
            turns,
            what,
            files: Vec::new(),
            skipped: Vec::new(),
            commands: Vec::new(),
            note: None,
            keep,
            restore: None,
        };
        if !what.code() || turns == 0 {
            return Ok(plan);
        }
        let Some((r, key)) = self.checkpoint_key() else {
            plan.note = Some("checkpoints are off, so files are not restored (`octo trash` keeps what octo's file tools replaced)".into());
            plan.commands = commands(&history[keep..], &self.session.setup.tools.registry);
            return Ok(plan);
        };
        let Some(store) = r.store().await else {
            let why = r.take_notices().join("; ");
            plan.note = Some(format!("files cannot be restored: {why}"));
            return Ok(plan);
        };
        let ws = store.workspace().to_path_buf();
        let list = store.list(Some(&key)).map_err(|e| SessionError::Checkpoint(e.to_string()))?;
        let chosen = matching(&history, starts.len() - turns, list);
        let store2 = Arc::clone(&store);
        let restore = tokio::task::spawn_blocking(move || store2.plan_restore(&key, &chosen))
            .await
            .map_err(|e| SessionError::Checkpoint(e.to_string()))?
            .map_err(|e| SessionError::Checkpoint(e.to_string()))?;
        plan.files = restore
            .files
            .iter()
            .map(|f| FileUndo {
                path: ws.join(&f.path),
                undo: if f.action == RestoreAction::Restore { Undo::Restore } else { Undo::Delete },
                changed_since: f.changed_since,
                by: f.by.clone(),
            })
            .collect();
        plan.skipped = restore.skipped.iter().map(|s| (ws.join(&s.path), s.why.clone())).collect();
        plan.restore = Some(restore);
        Ok(plan)
    }

    /// Carries out `plan`: restores the files (one changed since is only overwritten when listed
    /// in `overwrite`) and drops the turns from the conversation, the old one kept as a forked
    /// session. Fails with nothing done when the conversation moved on since the plan was made.
    pub async fn rewind(
        self,
        plan: &RewindPlan,
        overwrite: &[PathBuf],
    ) -> Result<RewindReport, SessionError> {
        let now = self.history().await?;
        let fresh = starts(&now);
        let keep = if plan.turns == 0 {
            now.len()
        } else {
            fresh.get(fresh.len().wrapping_sub(plan.turns)).copied().unwrap_or(usize::MAX)
        };
        if keep != plan.keep || plan.turns > fresh.len() {
            return Err(SessionError::Moved);
        }
        let mut report = RewindReport::default();
        let checkpoints = self.checkpoint_key();
        let store = match &checkpoints {
            Some((r, _)) => r.store().await,
            None => None,
        };
        if let (Some(restore), Some(store), true) = (&plan.restore, &store, plan.what.code()) {
            let ws = store.workspace().to_path_buf();
            let over: Vec<String> = overwrite
                .iter()
                .filter_map(|p| p.strip_prefix(&ws).ok().map(|r| r.to_string_lossy().into_owned()))
                .collect();
            let (store2, restore2) = (Arc::clone(store), restore.clone());
            let done = tokio::task::spawn_blocking(move || store2.restore(&restore2, &over))
                .await
                .map_err(|e| SessionError::Checkpoint(e.to_string()))?;
            report.restored = done.restored.iter().map(|p| ws.join(p)).collect();
            report.skipped = done.left.into_iter().map(|(p, why)| (ws.join(p), why)).collect();
        }
        if plan.what.conversation() && plan.turns > 0 {
            let (tx, rx) = oneshot::channel();
            self.session
                .commands
                .send(Command::Truncate { keep: plan.keep, expect: now.len(), fork: true, reply: tx })
                .map_err(|_| SessionError::Closed)?;
            let (kept, fork) = rx.await.map_err(|_| SessionError::Closed)?;
            if !kept {
                return Err(SessionError::Moved);
            }
            report.turns = plan.turns;
            // The branch keeps every checkpoint; this session forgets those of the dropped turns.
            if let (Some((_, key)), Some(store)) = (&checkpoints, &store) {
                if let Some(fork) = &fork {
                    let _ = store.copy_session(key, fork);
                }
                if let Ok(list) = store.list(Some(key)) {
                    let dropped: Vec<u32> =
                        matching(&now, fresh.len() - plan.turns, list).iter().map(|c| c.seq).collect();
                    let _ = store.remove(key, &dropped);
                }
            }
            report.fork = fork;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn checkpoint(position: usize, prompt: &str) -> Checkpoint {
        Checkpoint {
            session: "s".into(),
            seq: u32::try_from(position).unwrap() + 1,
            position,
            prompt: prompt.into(),
            time: 0,
            before: String::new(),
            after: String::new(),
            changed: Vec::new(),
            skipped: Vec::new(),
        }
    }

    #[test]
    fn checkpoints_match_their_turns_by_position_and_prompt() {
        let history = vec![
            Message::user("one"),
            Message::assistant("done"),
            Message::user("two\nmore"),
            Message::assistant("done"),
            Message::user("three"),
        ];
        let all = vec![checkpoint(0, "one"), checkpoint(1, "two"), checkpoint(2, "an older, compacted turn")];
        let got: Vec<usize> = matching(&history, 1, all).iter().map(|c| c.position).collect();
        assert_eq!(got, [1], "turn 3's checkpoint is from another conversation: not taken");
        assert_eq!(starts(&history), [0, 2, 4]);
    }

    #[test]
    fn what_a_rewind_covers() {
        assert!(RewindWhat::Both.code() && RewindWhat::Both.conversation());
        assert!(RewindWhat::Code.code() && !RewindWhat::Code.conversation());
        assert!(!RewindWhat::Conversation.code() && RewindWhat::Conversation.conversation());
    }
}
