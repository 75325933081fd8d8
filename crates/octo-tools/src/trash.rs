//! octo's trash: the previous content of every file the file tools changed, and a journal of the
//! changes (which file, which tool call, what it held before, what was written), so a turn's
//! changes can be undone (`/rewind`) and old contents found again (`octo trash`).
//!
//! The journal (`journal.jsonl` in the trash directory) is append-only, one JSON object per line,
//! private to the user like the copies. A line that cannot be read (a crash mid-write, a newer
//! octo) is skipped, never fatal. Contents are compared by a stable 64-bit FNV-1a hash, so a file
//! changed after octo wrote it is recognised and not overwritten without the user's say.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

const JOURNAL: &str = "journal.jsonl";

/// One change a file tool made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Unique id of the entry (`<millis>-<n>`).
    pub id: String,
    /// When, in milliseconds since the Unix epoch.
    pub time: u64,
    /// The file (absolute).
    pub path: PathBuf,
    /// The copy of its previous content in the trash (a file name there); `None` when the tool
    /// created the file.
    pub before: Option<String>,
    /// Hash of the content the tool wrote.
    pub after: String,
    /// The tool call that made the change.
    pub tool_use_id: String,
}

/// What restoring a change would do, or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Put the previous content back.
    Restore,
    /// Delete the file (the tool created it).
    Delete,
}

/// Why a change could not be undone.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UndoError {
    /// The file is not what the tool wrote (changed since, by someone else).
    #[error("{} was changed after octo wrote it; not overwritten", .0.display())]
    ChangedSince(PathBuf),
    /// The trash copy is gone (the trash was emptied).
    #[error("the trash no longer holds the old content of {}", .0.display())]
    CopyMissing(PathBuf),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(String),
}

/// A trash directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trash {
    dir: PathBuf,
}

/// FNV-1a, 64 bits, as 16 hex digits: stable across versions and platforms.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl Trash {
    /// The trash in `dir` (created on first use, private).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Records that `tool_use_id` changed `path` from `old` (`None`: it did not exist) to `new`:
    /// keeps a copy of `old` and appends to the journal. Call it before writing the new content.
    pub fn record(
        &self,
        path: &Path,
        old: Option<&[u8]>,
        new: &[u8],
        tool_use_id: &str,
    ) -> std::io::Result<Change> {
        crate::private::create_dir(&self.dir)?;
        let time = now_ms();
        let before = match old {
            Some(bytes) => Some(self.keep(path, bytes, time)?),
            None => None,
        };
        let id = format!("{time}-{:x}", crate::shell::unique());
        let change = Change {
            id,
            time,
            path: path.to_path_buf(),
            before,
            after: content_hash(new),
            tool_use_id: tool_use_id.to_owned(),
        };
        let line = serde_json::to_string(&change).map_err(std::io::Error::other)?;
        let journal = self.dir.join(JOURNAL);
        let mut f = match crate::private::new_file(&journal) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::OpenOptions::new().append(true).open(&journal)?
            }
            Err(e) => return Err(e),
        };
        // One write of the whole line: appends from two octo processes do not interleave.
        f.write_all(format!("{line}\n").as_bytes())?;
        Ok(change)
    }

    /// Copies `content` into the trash under a name made of the time and the path.
    fn keep(&self, path: &Path, content: &[u8], time: u64) -> std::io::Result<String> {
        let flat: String = path
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' { c } else { '_' })
            .collect();
        let flat: String = flat
            .trim_start_matches('_')
            .chars()
            .rev()
            .take(150)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        // A file's old content may hold secrets: the copy is the user's alone. Two copies in one
        // millisecond get their own names rather than one overwriting the other.
        for n in 0u32..100 {
            let name = if n == 0 { format!("{time}-{flat}") } else { format!("{time}-{n}-{flat}") };
            match crate::private::new_file(&self.dir.join(&name)) {
                Ok(mut f) => {
                    f.write_all(content)?;
                    return Ok(name);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("could not find a free name in the trash"))
    }

    /// Every recorded change, oldest first (unreadable lines skipped).
    pub fn changes(&self) -> Vec<Change> {
        let Ok(text) = std::fs::read_to_string(self.dir.join(JOURNAL)) else { return Vec::new() };
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// What undoing `change` does, and whether the file is still what the tool wrote.
    pub fn check(&self, change: &Change) -> (Undo, bool) {
        let undo = if change.before.is_some() { Undo::Restore } else { Undo::Delete };
        let current = std::fs::read(&change.path).ok();
        let unchanged = current.is_some_and(|c| content_hash(&c) == change.after);
        (undo, unchanged)
    }

    /// Undoes `change`: puts the old content back (or deletes a created file). Unless `force`, a
    /// file changed since is left alone ([`UndoError::ChangedSince`]). A file in `workspace` is
    /// written (or removed) beneath it on folder handles, so a folder on the way that a command
    /// swapped for a link to the outside is refused rather than followed.
    pub fn undo(&self, change: &Change, force: bool, workspace: &Path) -> Result<Undo, UndoError> {
        let ws = crate::path::real_path(workspace);
        let inside = change.path.strip_prefix(&ws).ok().or_else(|| change.path.strip_prefix(workspace).ok());
        let root = if change.path.starts_with(&ws) { ws.as_path() } else { workspace };
        let (undo, unchanged) = self.check(change);
        if !unchanged && !force {
            return Err(UndoError::ChangedSince(change.path.clone()));
        }
        let failed = |what: &str, e: std::io::Error| {
            UndoError::Io(format!("could not {what} {}: {e}", change.path.display()))
        };
        match &change.before {
            Some(name) => {
                let old = std::fs::read(self.dir.join(name))
                    .map_err(|_| UndoError::CopyMissing(change.path.clone()))?;
                match inside {
                    Some(rel) => crate::beneath::write_beneath(root, rel, &old),
                    None => crate::atomic::write_atomic(&change.path, &old),
                }
                .map_err(|e| failed("restore", e))?;
            }
            None => match inside {
                Some(rel) => crate::beneath::remove_beneath(root, rel).map_err(|e| failed("remove", e))?,
                None => match std::fs::remove_file(&change.path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(failed("remove", e)),
                },
            },
        }
        Ok(undo)
    }

    /// Deletes every copy and the journal; returns how many files were removed.
    pub fn empty(&self) -> std::io::Result<usize> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut n = 0;
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::remove_file(e.path())?;
                n += 1;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn changes_are_recorded_and_undone_unless_changed_since() {
        let tmp = tempfile::tempdir().unwrap();
        let trash = Trash::new(tmp.path().join("trash"));
        let f = tmp.path().join("a.txt");
        std::fs::write(&f, "old").unwrap();
        let edit = trash.record(&f, Some(b"old"), b"new", "t1").unwrap();
        std::fs::write(&f, "new").unwrap();
        let created = tmp.path().join("b.txt");
        let create = trash.record(&created, None, b"fresh", "t2").unwrap();
        std::fs::write(&created, "fresh").unwrap();
        assert_eq!(trash.changes(), vec![edit.clone(), create.clone()]);
        assert_eq!(trash.check(&edit), (Undo::Restore, true));
        assert_eq!(trash.undo(&edit, false, tmp.path()).unwrap(), Undo::Restore);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old");
        std::fs::write(&created, "someone else's").unwrap();
        assert!(matches!(trash.undo(&create, false, tmp.path()), Err(UndoError::ChangedSince(_))));
        assert_eq!(std::fs::read_to_string(&created).unwrap(), "someone else's", "not overwritten");
        assert_eq!(trash.undo(&create, true, tmp.path()).unwrap(), Undo::Delete);
        assert!(!created.exists());
        // A torn last line is skipped.
        let mut j =
            std::fs::OpenOptions::new().append(true).open(tmp.path().join("trash/journal.jsonl")).unwrap();
        j.write_all(b"{\"id\":\"x\",").unwrap();
        assert_eq!(trash.changes().len(), 2);
        assert_eq!(trash.empty().unwrap(), 2, "the copy and the journal");
        assert!(trash.changes().is_empty());
        assert_eq!(content_hash(b""), "cbf29ce484222325");
    }

    #[cfg(unix)]
    #[test]
    fn an_undo_through_a_folder_swapped_for_a_link_to_the_outside_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let trash = Trash::new(tmp.path().join("trash"));
        let f = ws.join("sub/a.txt");
        let edit = trash.record(&f, Some(b"old"), b"new", "t1").unwrap();
        let create = trash.record(&ws.join("sub/b.txt"), None, b"made", "t2").unwrap();
        // A command swaps the folder for a link to a folder outside holding the same contents.
        std::fs::remove_dir_all(ws.join("sub")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("sub")).unwrap();
        std::fs::write(outside.join("a.txt"), "new").unwrap();
        std::fs::write(outside.join("b.txt"), "made").unwrap();
        assert!(trash.undo(&edit, false, &ws).is_err());
        assert!(trash.undo(&create, false, &ws).is_err());
        assert_eq!(std::fs::read_to_string(outside.join("a.txt")).unwrap(), "new", "not written outside");
        assert!(outside.join("b.txt").exists(), "not removed outside");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 2, "no temporary file outside");
    }
}
