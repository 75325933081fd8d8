//! Whether a folder is inside a linked git worktree, read from the files git keeps (no `git`
//! child process): a linked worktree's `.git` is a file naming its git directory under the main
//! repository's `.git/worktrees/`, whose `commondir` leads back to the main `.git`.

use std::path::{Path, PathBuf};

/// A linked worktree a folder is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    /// The worktree's top folder.
    pub root: PathBuf,
    /// The main working tree of the repository it belongs to.
    pub main: PathBuf,
}

impl Linked {
    /// The worktree's name: its folder's.
    pub(crate) fn name(&self) -> String {
        self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// Where `path` (inside this worktree) sits in the main working tree.
    pub(crate) fn in_main(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.root) {
            Ok(rest) if rest.as_os_str().is_empty() => self.main.clone(),
            Ok(rest) => self.main.join(rest),
            Err(_) => path.to_path_buf(),
        }
    }
}

/// The linked worktree `cwd` is in; `None` in a main working tree, a submodule, or outside git.
pub fn linked(cwd: &Path) -> Option<Linked> {
    for dir in cwd.ancestors() {
        let dot = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot) else { continue };
        if !meta.is_file() {
            return None;
        }
        let text = std::fs::read_to_string(&dot).ok()?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        let gitdir = dir.join(target);
        // Submodules have no `commondir`; a linked worktree's names the main `.git`.
        let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
        let common = std::fs::canonicalize(gitdir.join(common.trim())).ok()?;
        if common.file_name().is_none_or(|n| n != ".git") {
            return None;
        }
        let main = common.parent()?.to_path_buf();
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        return Some(Linked { root, main });
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_linked_worktree_leads_to_its_main_tree_and_others_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("repo/.git/worktrees/wt")).unwrap();
        std::fs::write(root.join("repo/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(root.join("wt/src")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: ../repo/.git/worktrees/wt\n").unwrap();
        let l = linked(&root.join("wt/src")).unwrap();
        assert_eq!((l.root.clone(), l.main.clone()), (root.join("wt"), root.join("repo")));
        assert_eq!(l.name(), "wt");
        assert_eq!(l.in_main(&root.join("wt/src")), root.join("repo/src"));
        assert_eq!(linked(&root.join("repo")), None, "the main tree is not a linked worktree");
        // A submodule's `.git` file names a git directory without `commondir`.
        std::fs::create_dir_all(root.join("repo/.git/modules/sub")).unwrap();
        std::fs::create_dir_all(root.join("repo/sub")).unwrap();
        std::fs::write(root.join("repo/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        assert_eq!(linked(&root.join("repo/sub")), None);
        assert_eq!(linked(&root.join("nowhere")), None);
    }
}
