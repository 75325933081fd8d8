//! Undoing the last turns: the file changes their tool calls made (from octo's trash journal,
//! [`octo_tools::trash`]) are undone and the turns are dropped from the conversation. A file
//! changed after the turn by someone else is named and left alone unless the user says to
//! overwrite it; what shell commands did is not covered, and is named.

use super::error::SessionError;
use super::facade::Session;
use super::state::Command;
use octo_agent::{ContentBlock, Message, Role, Subject, ToolRegistry};
use octo_tools::trash::{Change, Trash, Undo};
use std::collections::HashSet;
use std::path::PathBuf;
use tokio::sync::oneshot;

/// What one file goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUndo {
    /// The file.
    pub path: PathBuf,
    /// Restored to its content before the turns, or deleted (they created it).
    pub undo: Undo,
    /// Changed after octo's last write to it: only overwritten when the user says so.
    pub changed_since: bool,
    /// The changes to undo, newest first.
    changes: Vec<Change>,
}

/// What `/rewind` would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPlan {
    /// Turns that will be forgotten (fewer than asked when the conversation is shorter).
    pub turns: usize,
    /// Files to restore, one entry per file.
    pub files: Vec<FileUndo>,
    /// Shell commands those turns ran: their effects are not undone.
    pub commands: Vec<String>,
    /// Messages kept.
    pub(crate) keep: usize,
}

/// What `/rewind` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewindReport {
    /// Files put back (or deleted).
    pub restored: Vec<PathBuf>,
    /// Files left alone, and why.
    pub skipped: Vec<(PathBuf, String)>,
    /// Turns forgotten.
    pub turns: usize,
}

/// Whether `m` starts a turn: a user message with something the user wrote (not only tool
/// results).
fn starts_turn(m: &Message) -> bool {
    m.role == Role::User && m.content.iter().any(|b| !matches!(b, ContentBlock::ToolResult { .. }))
}

/// Plans undoing the last `n` turns of `history`.
pub(crate) fn plan(history: &[Message], n: usize, trash: Option<&Trash>, tools: &ToolRegistry) -> RewindPlan {
    let starts: Vec<usize> =
        history.iter().enumerate().filter(|(_, m)| starts_turn(m)).map(|(i, _)| i).collect();
    let turns = n.min(starts.len());
    let keep = if turns == 0 { history.len() } else { starts[starts.len() - turns] };
    let mut ids = HashSet::new();
    let mut commands = Vec::new();
    for m in &history[keep..] {
        for b in &m.content {
            if let ContentBlock::ToolUse { id, name, input } = b {
                ids.insert(id.clone());
                if let Some(Subject::Command { field }) = tools.meta(name).map(|m| &m.subject) {
                    if let Some(c) = input.get(field).and_then(|v| v.as_str()) {
                        commands.push(c.to_owned());
                    }
                }
            }
        }
    }
    let mut files: Vec<FileUndo> = Vec::new();
    if let Some(trash) = trash {
        let mut changes: Vec<Change> =
            trash.changes().into_iter().filter(|c| ids.contains(&c.tool_use_id)).collect();
        changes.reverse();
        for c in changes {
            match files.iter_mut().find(|f| f.path == c.path) {
                // An older change of the same file: undoing it too takes the file further back.
                Some(f) => {
                    f.undo = if c.before.is_some() { Undo::Restore } else { Undo::Delete };
                    f.changes.push(c);
                }
                None => {
                    let (undo, unchanged) = trash.check(&c);
                    files.push(FileUndo {
                        path: c.path.clone(),
                        undo,
                        changed_since: !unchanged,
                        changes: vec![c],
                    });
                }
            }
        }
    }
    RewindPlan { turns, files, commands, keep }
}

/// Undoes the planned file changes; files changed since are only overwritten when listed in
/// `overwrite`.
pub(crate) fn apply_files(plan: &RewindPlan, trash: Option<&Trash>, overwrite: &[PathBuf]) -> RewindReport {
    let mut report = RewindReport { turns: plan.turns, ..RewindReport::default() };
    let Some(trash) = trash else { return report };
    for f in &plan.files {
        if f.changed_since && !overwrite.contains(&f.path) {
            report.skipped.push((f.path.clone(), "changed after the turn; left as it is".into()));
            continue;
        }
        // The newest change may be forced (the user agreed); each older one then matches.
        let mut failed = None;
        for (i, c) in f.changes.iter().enumerate() {
            if let Err(e) = trash.undo(c, i == 0 && f.changed_since) {
                failed = Some(e.to_string());
                break;
            }
        }
        match failed {
            None => report.restored.push(f.path.clone()),
            Some(why) => report.skipped.push((f.path.clone(), why)),
        }
    }
    report
}

impl Session {
    /// What undoing the last `n` turns would do: the files their tool calls changed (and
    /// whether each was changed since), the shell commands whose effects stay, the turns dropped.
    pub async fn rewind_plan(&self, n: usize) -> Result<RewindPlan, SessionError> {
        let history = self.history().await?;
        Ok(plan(&history, n, self.setup.tools.trash.as_ref(), &self.setup.tools.registry))
    }

    /// Carries out `plan`: undoes the file changes (a file changed since is only overwritten when
    /// listed in `overwrite`) and drops the turns from the conversation (and the saved session).
    /// Fails with nothing undone when the conversation moved on since the plan was made.
    pub async fn rewind(
        &self,
        plan: &RewindPlan,
        overwrite: &[PathBuf],
    ) -> Result<RewindReport, SessionError> {
        let now = self.history().await?;
        let fresh = self::plan(&now, plan.turns, self.setup.tools.trash.as_ref(), &self.setup.tools.registry);
        if fresh.keep != plan.keep || now.len() < plan.keep {
            return Err(SessionError::Moved);
        }
        let report = apply_files(plan, self.setup.tools.trash.as_ref(), overwrite);
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Truncate { keep: plan.keep, expect: now.len(), reply: tx })
            .map_err(|_| SessionError::Closed)?;
        if !rx.await.map_err(|_| SessionError::Closed)? {
            return Err(SessionError::Moved);
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn tool_use(id: &str, name: &str, input: serde_json::Value) -> ContentBlock {
        ContentBlock::ToolUse { id: id.into(), name: name.into(), input }
    }

    #[test]
    fn the_last_turns_files_and_commands_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let trash = Trash::new(tmp.path().join("trash"));
        let f = tmp.path().join("a.rs");
        trash.record(&f, Some(b"v0"), b"v1", "t1").unwrap();
        trash.record(&f, Some(b"v1"), b"v2", "t2").unwrap();
        trash.record(&f, Some(b"v2"), b"v3", "t3").unwrap();
        std::fs::write(&f, "v3").unwrap();
        let history = vec![
            Message::user("one"),
            Message { role: Role::Assistant, content: vec![tool_use("t1", "write_file", json!({}))] },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: vec![],
                    is_error: false,
                }],
            },
            Message::assistant("done"),
            Message::user("two"),
            Message {
                role: Role::Assistant,
                content: vec![
                    tool_use("t2", "edit_file", json!({})),
                    tool_use("t3", "edit_file", json!({})),
                    tool_use("t4", "terminal", json!({"command": "cargo fmt"})),
                ],
            },
        ];
        let tools = octo_tools::default_registry(octo_tools::ToolsConfig::default());
        let p = plan(&history, 1, Some(&trash), &tools);
        assert_eq!((p.turns, p.keep), (1, 4));
        assert_eq!(p.commands, ["cargo fmt"]);
        assert_eq!(p.files.len(), 1);
        assert!(!p.files[0].changed_since);
        let r = apply_files(&p, Some(&trash), &[]);
        assert_eq!(r.restored, std::slice::from_ref(&f));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "v1", "both edits of the turn undone");
        let all = plan(&history, 9, Some(&trash), &tools);
        assert_eq!((all.turns, all.keep), (2, 0));
    }
}
