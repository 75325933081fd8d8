//! The branch a workspace is on, read from the repository's `HEAD` file: no `git` child process
//! on the way to the first request. A linked worktree's `.git` is a file naming its git
//! directory (`gitdir: …`); a detached `HEAD` is named by its commit.

use std::path::{Path, PathBuf};

/// Where the repository holding `cwd` keeps its `HEAD`: the nearest `.git` directory above (or
/// at) `cwd`, or the directory a `.git` file points to.
fn git_dir(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let dot = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot) else { continue };
        if meta.is_dir() {
            return Some(dot);
        }
        // A linked worktree or a submodule: `gitdir: <path>`, relative to where the file is.
        let text = std::fs::read_to_string(&dot).ok()?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        return Some(dir.join(target));
    }
    None
}

/// `branch main`, `detached at 1a2b3c4`, or `None` outside a repository (or with a `HEAD` that
/// cannot be read).
pub(crate) fn describe(cwd: &Path) -> Option<String> {
    let head = std::fs::read_to_string(git_dir(cwd)?.join("HEAD")).ok()?;
    let head = head.trim();
    if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        let name = reference.strip_prefix("refs/heads/").unwrap_or(reference);
        return (!name.is_empty()).then(|| format!("branch {name}"));
    }
    let hex = head.len() >= 7 && head.chars().all(|c| c.is_ascii_hexdigit());
    hex.then(|| format!("detached at {}", &head[..7]))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::describe;

    #[test]
    fn a_branch_a_worktree_a_detached_head_and_no_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        assert_eq!(describe(root), None, "not a repository");
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.join("repo/src/deep")).unwrap();
        std::fs::write(root.join("repo/.git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(describe(&root.join("repo/src/deep")).as_deref(), Some("branch feature/x"), "from below");
        // A linked worktree: `.git` is a file naming the git directory, relative to it.
        std::fs::create_dir_all(root.join("repo/.git/worktrees/wt")).unwrap();
        std::fs::write(
            root.join("repo/.git/worktrees/wt/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: ../repo/.git/worktrees/wt\n").unwrap();
        assert_eq!(describe(&root.join("wt")).as_deref(), Some("detached at 0123456"));
        std::fs::write(root.join("wt/.git"), "not a gitdir line\n").unwrap();
        assert_eq!(describe(&root.join("wt")), None, "a broken .git file is no repository");
        std::fs::write(root.join("repo/.git/HEAD"), "garbage").unwrap();
        assert_eq!(describe(&root.join("repo")), None, "an unreadable HEAD names nothing");
    }
}
