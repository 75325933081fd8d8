//! The folders a task runs in: a fresh copy of its starting files for the agent (without what
//! it must not see), and for each verification a second copy of the agent's work with the hidden
//! tests laid over it, so the agent's folder never holds them.

use crate::task::Task;
use std::io;
use std::path::{Path, PathBuf};

/// Copies the tree at `from` into `to` (made), leaving out `skip` (paths relative to `from`).
/// Symbolic links are copied as links; file modes are kept.
pub fn copy_tree(from: &Path, to: &Path, skip: &[PathBuf]) -> io::Result<()> {
    copy_below(from, to, Path::new(""), skip)
}

fn copy_below(root: &Path, to: &Path, rel: &Path, skip: &[PathBuf]) -> io::Result<()> {
    std::fs::create_dir_all(to.join(rel))?;
    for entry in std::fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let rel = rel.join(entry.file_name());
        if skip.contains(&rel) {
            continue;
        }
        let kind = entry.file_type()?;
        // Whatever sits where this goes is replaced, and a link there is never followed.
        let dest = to.join(&rel);
        if let Ok(m) = std::fs::symlink_metadata(&dest) {
            if !m.is_dir() {
                // Links (symbolic or hard) and files alike: written anew, never through.
                std::fs::remove_file(&dest)?;
            } else if m.is_dir() && !kind.is_dir() {
                std::fs::remove_dir_all(&dest)?;
            }
        }
        if kind.is_dir() {
            copy_below(root, to, &rel, skip)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(entry.path())?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(target, &dest)?;
            #[cfg(not(unix))]
            let _ = target;
        } else {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

/// Lays `pairs` (a file or folder, and where it goes relative to `into`) over `into`.
pub fn overlay(pairs: &[(PathBuf, PathBuf)], into: &Path) -> io::Result<()> {
    for (from, rel) in pairs {
        // A link the agent planted on the way would send the files elsewhere: it goes.
        let mut partial = into.to_path_buf();
        for c in rel.components() {
            partial.push(c);
            if std::fs::symlink_metadata(&partial).is_ok_and(|m| m.file_type().is_symlink()) {
                std::fs::remove_file(&partial)?;
            }
        }
        let to = into.join(rel);
        if from.is_dir() {
            copy_tree(from, &to, &[])?;
        } else {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            if std::fs::symlink_metadata(&to).is_ok_and(|m| m.is_file()) {
                std::fs::remove_file(&to)?;
            }
            std::fs::copy(from, &to)?;
        }
    }
    Ok(())
}

/// The agent's starting folder for `task`, in `dir` (made), a git repository of its own.
pub fn prepare(task: &Task, dir: &Path) -> io::Result<()> {
    copy_tree(&task.start, dir, &task.withheld)?;
    init_git(dir);
    Ok(())
}

/// Makes `dir` a repository with one commit of the task's start (when git is there and `dir`
/// is not one already): git run by the agent sees the task, never a repository the folder
/// happens to lie inside, and the agent can diff its own work. No hook of any kind runs.
fn init_git(dir: &Path) {
    if dir.join(".git").exists() {
        return;
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=octo-eval", "-c", "user.email=eval@octo.invalid"])
            .args(["-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if git(&["init", "-q"]) && git(&["add", "-A"]) {
        let _ = git(&["commit", "-q", "--no-verify", "--allow-empty", "-m", "the task's start"]);
    }
}

/// A copy of the agent's folder `work` at `dir` with the hidden tests laid over it and the
/// tests the suite skips turned on: where the verify command runs.
pub fn verify_copy(task: &Task, work: &Path, dir: &Path) -> io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    copy_tree(work, dir, &[])?;
    overlay(&task.hidden, dir)?;
    if !task.unskip.is_empty() {
        for (_, rel) in &task.hidden {
            let path = dir.join(rel);
            let Ok(mut text) = std::fs::read_to_string(&path) else { continue };
            for (from, to) in &task.unskip {
                text = text.replace(from.as_str(), to);
            }
            std::fs::write(&path, text)?;
        }
    }
    Ok(())
}
