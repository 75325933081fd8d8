//! Prompt and agent files a command created at the workspace's root: a mount namespace keeps the
//! existing ones read-only, but a missing one cannot be bound, so what a command creates is moved
//! away after it ends, before any later session reads it.

use super::policy::{Mode, Policy};
use std::path::{Path, PathBuf};

/// The policy's protected entries that do not exist now (none when commands cannot write the
/// workspace).
pub(super) fn missing(policy: &Policy) -> Vec<PathBuf> {
    if policy.mode != Mode::WorkspaceWrite {
        return Vec::new();
    }
    policy
        .protected_entries
        .iter()
        .map(|n| policy.workspace.join(n))
        .filter(|p| p.symlink_metadata().is_err())
        .collect()
}

/// Moves each of `missing` (from [`crate::sandbox::Sandbox::protected_missing`]) that exists
/// now into `into` (removes it when there is no such folder or the move fails); the paths that
/// were there, with where each went.
pub fn undo(missing: &[PathBuf], into: Option<&Path>) -> Vec<(PathBuf, Option<PathBuf>)> {
    let mut out = Vec::new();
    for path in missing.iter().filter(|p| p.symlink_metadata().is_ok()) {
        let moved = into.and_then(|dir| {
            std::fs::create_dir_all(dir).ok()?;
            // A folder, not a link someone planted at its name: nothing is moved through it.
            if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
                return None;
            }
            let name = path.file_name()?.to_string_lossy().into_owned();
            let to = dir.join(format!("{}-{name}", crate::unique::unique()));
            std::fs::rename(path, &to).ok().map(|()| to)
        });
        if moved.is_none() {
            let meta = path.symlink_metadata();
            let _ = if meta.is_ok_and(|m| m.is_dir()) {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
        }
        out.push((path.clone(), moved));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_command_created_is_moved_away_and_the_rest_left() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("CLAUDE.md"), "mine\n").unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, &ws);
        policy.protected_entries = vec!["CLAUDE.md".into(), "AGENTS.md".into(), "SKILLS".into()];
        let before = missing(&policy);
        assert_eq!(before, [ws.join("AGENTS.md"), ws.join("SKILLS")]);
        std::fs::create_dir_all(ws.join("SKILLS/evil")).unwrap();
        std::fs::write(ws.join("SKILLS/evil/SKILL.md"), "x").unwrap();
        let q = dir.path().join("quarantine");
        let undone = undo(&before, Some(&q));
        assert_eq!(undone.len(), 1);
        assert!(!ws.join("SKILLS").exists() && ws.join("CLAUDE.md").exists());
        assert!(undone[0].1.as_ref().unwrap().join("evil/SKILL.md").is_file());
        // Without a place to keep it, it is removed.
        std::fs::write(ws.join("AGENTS.md"), "x").unwrap();
        assert_eq!(undo(&before, None)[0].1, None);
        assert!(!ws.join("AGENTS.md").exists());
    }
}
