//! Worktrees made, reused, listed and removed with the real `git`, and the places and names
//! refused.
//!
//! Compiled only for tests: `#[cfg(test)] mod tests;` in the module beside it.

#![allow(clippy::unwrap_used)]
use super::*;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit, in a folder of its own under a fresh temp dir.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let main = std::fs::canonicalize(tmp.path()).unwrap().join("proj");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q"]);
    std::fs::write(main.join("README.md"), "hello\n").unwrap();
    git(&main, &["add", "."]);
    git(&main, &["commit", "-qm", "first"]);
    (tmp, main)
}

#[test]
fn a_worktree_is_made_beside_the_repository_reused_and_listed() {
    let (tmp, main) = repo();
    let e = enter(&main.join("."), Some("feat"), None).unwrap();
    let expected = std::fs::canonicalize(tmp.path()).unwrap().join("proj.worktrees/feat");
    assert!(e.created);
    assert_eq!(e.worktree.path, expected);
    assert_eq!(e.worktree.branch.as_deref(), Some("octo/feat"));
    assert!(expected.join("README.md").is_file(), "checked out from HEAD");
    assert_eq!(git(&expected, &["branch", "--show-current"]).trim(), "octo/feat");
    // Asked again (from inside the worktree, too): the same one, not a second.
    let again = enter(&expected, Some("feat"), None).unwrap();
    assert!(!again.created);
    assert_eq!(again.worktree.path, expected);
    // An unnamed one gets a fresh name.
    let fresh = enter(&main, None, None).unwrap();
    assert!(fresh.worktree.name.starts_with("task-"), "{}", fresh.worktree.name);
    let names: Vec<String> = list(&main, None).unwrap().into_iter().map(|l| l.worktree.name).collect();
    assert_eq!(names, vec!["feat".to_owned(), fresh.worktree.name]);
    assert_eq!(linked(&expected).unwrap().main, main);
    assert_eq!(memory_path(&expected.join("src")), main.join("src"), "memory is the repository's");
    assert_eq!(memory_path(&main), main);
}

#[test]
fn a_configured_folder_is_used_and_a_relative_one_is_the_repositorys() {
    let (tmp, main) = repo();
    let e = enter(&main, Some("a"), Some(Path::new(".trees"))).unwrap();
    assert_eq!(e.worktree.path, main.join(".trees/a"));
    let abs = std::fs::canonicalize(tmp.path()).unwrap().join("elsewhere");
    let e = enter(&main, Some("b"), Some(&abs)).unwrap();
    assert_eq!(e.worktree.path, abs.join("b"));
    assert_eq!(list(&main, Some(&abs)).unwrap().len(), 1, "each folder lists its own");
}

#[test]
fn removing_refuses_uncommitted_changes_unless_forced_and_keeps_the_branch() {
    let (_tmp, main) = repo();
    let wt = enter(&main, Some("fix"), None).unwrap().worktree.path;
    std::fs::write(wt.join("new.txt"), "work in progress\n").unwrap();
    let listed = list(&main, None).unwrap();
    assert_eq!(listed[0].changes, Some(1));
    let err = remove(&main, "fix", false, None).unwrap_err();
    assert!(matches!(err, WorktreeError::Dirty { .. }), "{err}");
    assert!(err.to_string().contains("new.txt") && err.to_string().contains("--force"), "{err}");
    assert!(wt.join("new.txt").is_file(), "nothing is lost on a refusal");
    let removed = remove(&main, "fix", true, None).unwrap();
    assert_eq!(removed.path, wt);
    assert!(!wt.exists());
    assert!(list(&main, None).unwrap().is_empty());
    assert!(git(&main, &["branch", "--list", "octo/fix"]).contains("octo/fix"), "the branch is kept");
    // The kept branch is checked out again when the name is asked for again.
    let back = enter(&main, Some("fix"), None).unwrap();
    assert!(back.created);
    assert_eq!(back.worktree.branch.as_deref(), Some("octo/fix"));
    let err = remove(&main, "nope", false, None).unwrap_err();
    assert!(matches!(err, WorktreeError::NoSuch { .. }), "{err}");
}

#[test]
fn bad_places_and_names_are_refused_with_nothing_made() {
    let tmp = tempfile::tempdir().unwrap();
    let err = enter(tmp.path(), Some("x"), None).unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepository(_)), "{err}");
    assert!(err.to_string().contains("not in a git repository"));
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    assert!(matches!(enter(&empty, Some("x"), None).unwrap_err(), WorktreeError::NoCommit(_)));

    let (tmp, main) = repo();
    for bad in ["../up", "a b", "-rf", ".hidden", "x.lock", "a/b", &"n".repeat(65)] {
        assert!(matches!(enter(&main, Some(bad), None), Err(WorktreeError::BadName(_))), "{bad}");
    }
    // The branch is checked out in the main tree already.
    git(&main, &["checkout", "-qb", "octo/busy"]);
    let err = enter(&main, Some("busy"), None).unwrap_err();
    assert!(matches!(err, WorktreeError::BranchInUse { .. }), "{err}");
    assert!(!tmp.path().join("proj.worktrees/busy").exists());
    // A folder that is not a worktree is in the way.
    std::fs::create_dir_all(tmp.path().join("proj.worktrees/taken")).unwrap();
    std::fs::write(tmp.path().join("proj.worktrees/taken/mine.txt"), "keep").unwrap();
    let err = enter(&main, Some("taken"), None).unwrap_err();
    assert!(matches!(err, WorktreeError::Occupied(_)), "{err}");
    assert!(tmp.path().join("proj.worktrees/taken/mine.txt").is_file());
    // The folder cannot be made: a file sits where it would go.
    let blocked = tmp.path().join("blocked");
    std::fs::write(&blocked, "a file").unwrap();
    let err = enter(&main, Some("x"), Some(&blocked.join("trees"))).unwrap_err();
    assert!(matches!(err, WorktreeError::Folder { .. }), "{err}");
    assert!(err.to_string().contains("worktree_dir"), "{err}");
}
