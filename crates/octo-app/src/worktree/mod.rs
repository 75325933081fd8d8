//! Git worktrees for parallel sessions (`octo --worktree [NAME]`, `octo worktrees list|remove`):
//! each session works in its own checkout of the repository on its own branch, so several can
//! run at once without stepping on each other.
//!
//! A worktree `NAME` lives in `<folder>/NAME` on branch `octo/NAME`, made from the current
//! `HEAD`. The folder sits beside the main working tree (`<repo>.worktrees/`) unless
//! `worktree_dir` in the user's config names another. Asking for a worktree that exists reuses
//! it. Sessions and checkpoints are kept per worktree (they are keyed by the folder a session
//! works in); memory is the repository's, shared by all its worktrees (see `memory_path`).
//! Removing one with uncommitted changes is refused unless forced; its branch is always kept.
//!
//! Git runs through `git_cli`, so no hook or fsmonitor program of the repository runs.

mod linked;

pub use linked::{linked, Linked};

use crate::git_cli::{self, GitCliError};
use std::path::{Path, PathBuf};

/// The prefix of a worktree's branch.
pub(crate) const BRANCH_PREFIX: &str = "octo/";

/// Why a worktree could not be made, listed or removed; each says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorktreeError {
    /// Not inside a git working tree.
    #[error("{} is not in a git repository; worktrees are made from the repository you are in (cd into one, or run git init and commit)", .0.display())]
    NotARepository(PathBuf),
    /// A repository without a commit has nothing to check out.
    #[error("the repository at {} has no commit yet; commit once, then make a worktree", .0.display())]
    NoCommit(PathBuf),
    /// A name git or the file system would misread.
    #[error("`{0}` is not a worktree name: use letters, digits, `.`, `_` and `-` (at most 64, not starting with `.` or `-`); to start an unnamed worktree with a prompt, write `octo --worktree -- \"prompt\"`")]
    BadName(String),
    /// The worktree folder cannot be made or written.
    #[error("cannot make the worktree folder {} ({source}); choose another with `worktree_dir = \"…\"` in the user config", .path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The branch is checked out elsewhere already.
    #[error("branch {branch} is already checked out at {}; choose another name, or work there (octo --workspace {})", .path.display(), .path.display())]
    BranchInUse {
        /// The branch.
        branch: String,
        /// Where it is checked out.
        path: PathBuf,
    },
    /// Something that is not a worktree of this repository is in the way.
    #[error("{} exists and is not a worktree of this repository; choose another name or move it", .0.display())]
    Occupied(PathBuf),
    /// No worktree of that name.
    #[error("no worktree named `{name}` in {} (octo worktrees list shows them)", .folder.display())]
    NoSuch {
        /// The name asked for.
        name: String,
        /// Where octo's worktrees are.
        folder: PathBuf,
    },
    /// Uncommitted changes would be lost.
    #[error("worktree `{name}` has uncommitted changes:\n{changes}\ncommit or stash them first, or remove it anyway with --force (they are lost)")]
    Dirty {
        /// The worktree.
        name: String,
        /// `git status --short` lines (the first few).
        changes: String,
    },
    /// Git refused.
    #[error("git: {0}")]
    Git(#[from] GitCliError),
}

/// One of octo's worktrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its name (its folder's).
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// The branch checked out there (`None`: a detached `HEAD`).
    pub branch: Option<String>,
}

/// A worktree with its state, as `octo worktrees list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The worktree.
    pub worktree: Worktree,
    /// Uncommitted changes (files), `None` when git could not tell (the folder is gone).
    pub changes: Option<usize>,
}

/// What `--worktree` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entered {
    /// The worktree to work in.
    pub worktree: Worktree,
    /// Made now (not reused).
    pub created: bool,
}

/// The repository `cwd` is in: its main working tree.
fn main_tree(cwd: &Path) -> Result<PathBuf, WorktreeError> {
    let not_repo = || WorktreeError::NotARepository(cwd.to_path_buf());
    match git_cli::run(cwd, &["rev-parse", "--is-inside-work-tree"]) {
        Ok(s) if s.trim() == "true" => {}
        _ => return Err(not_repo()),
    }
    let common = git_cli::run(cwd, &["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .map_err(|_| not_repo())?;
    let common = PathBuf::from(common.trim());
    let common = std::fs::canonicalize(&common).unwrap_or(common);
    match common.file_name() {
        Some(n) if n == ".git" => common.parent().map(Path::to_path_buf).ok_or_else(not_repo),
        _ => Err(not_repo()),
    }
}

/// The folder octo's worktrees of the repository at `main` go in: `configured` (relative to
/// `main` when not absolute), else `<main>.worktrees` beside it.
pub(crate) fn folder(main: &Path, configured: Option<&Path>) -> PathBuf {
    match configured {
        Some(c) if c.is_absolute() => c.to_path_buf(),
        Some(c) => main.join(c),
        None => {
            let name = main.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match main.parent() {
                Some(parent) if !name.is_empty() => parent.join(format!("{name}.worktrees")),
                _ => main.join(".octo").join("worktrees"),
            }
        }
    }
}

/// Where memory of `workspace` is kept: a linked worktree's memory is its main tree's, so every
/// worktree of a repository shares one (as Claude Code's auto memory does).
pub(crate) fn memory_path(workspace: &Path) -> PathBuf {
    linked(workspace).map_or_else(|| workspace.to_path_buf(), |l| l.in_main(workspace))
}

/// Checks a worktree name.
pub(crate) fn check_name(name: &str) -> Result<(), WorktreeError> {
    let ok_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let ok = !name.is_empty()
        && name.len() <= 64
        && ok_chars
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".lock")
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(WorktreeError::BadName(name.to_owned()))
    }
}

/// Every worktree git knows for the repository at `main`: (path, branch).
fn registered(main: &Path) -> Result<Vec<(PathBuf, Option<String>)>, WorktreeError> {
    let text = git_cli::run(main, &["worktree", "list", "--porcelain", "-z"])?;
    let mut out = Vec::new();
    let mut current: Option<(PathBuf, Option<String>)> = None;
    for field in text.split('\0') {
        if let Some(p) = field.strip_prefix("worktree ") {
            out.extend(current.take());
            let p = PathBuf::from(p);
            current = Some((std::fs::canonicalize(&p).unwrap_or(p), None));
        } else if let (Some(b), Some(c)) = (field.strip_prefix("branch "), current.as_mut()) {
            c.1 = Some(b.strip_prefix("refs/heads/").unwrap_or(b).to_owned());
        }
    }
    out.extend(current);
    Ok(out)
}

/// A name for an unnamed worktree: `task-` and the time, made unique in `folder`.
fn fresh_name(folder: &Path) -> String {
    let secs = octo_session::now();
    let (y, m, d) = octo_session::civil_from_days(i64::try_from(secs / 86_400).unwrap_or(0));
    let (hh, mm, ss) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    let base = format!("task-{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}");
    let mut name = base.clone();
    let mut n = 2;
    while folder.join(&name).exists() {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// Makes (or reuses) the worktree `name` (a fresh one when `None`) of the repository `cwd` is in.
pub fn enter(cwd: &Path, name: Option<&str>, configured: Option<&Path>) -> Result<Entered, WorktreeError> {
    let main = main_tree(cwd)?;
    let folder = folder(&main, configured);
    let name = match name.filter(|n| !n.is_empty()) {
        Some(n) => {
            check_name(n)?;
            n.to_owned()
        }
        None => fresh_name(&folder),
    };
    let path = folder.join(&name);
    let branch = format!("{BRANCH_PREFIX}{name}");
    let known = registered(&main)?;
    let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    if let Some((p, b)) = known.iter().find(|(p, _)| *p == real) {
        if p.is_dir() {
            let worktree = Worktree { name, path: p.clone(), branch: b.clone() };
            return Ok(Entered { worktree, created: false });
        }
    }
    if path.exists() {
        return Err(WorktreeError::Occupied(path));
    }
    if let Some((p, _)) = known.iter().find(|(_, b)| b.as_deref() == Some(branch.as_str())) {
        return Err(WorktreeError::BranchInUse { branch, path: p.clone() });
    }
    if git_cli::run(&main, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_err() {
        return Err(WorktreeError::NoCommit(main));
    }
    std::fs::create_dir_all(&folder)
        .map_err(|source| WorktreeError::Folder { path: folder.clone(), source })?;
    // Made here (not by git) so an unwritable folder is named as such.
    std::fs::create_dir(&path).map_err(|source| WorktreeError::Folder { path: folder.clone(), source })?;
    let shown = path.to_string_lossy().into_owned();
    let exists =
        git_cli::run(&main, &["rev-parse", "--verify", "--quiet", &format!("refs/heads/{branch}")]).is_ok();
    let made = if exists {
        git_cli::run(&main, &["worktree", "add", "--", &shown, &branch])
    } else {
        git_cli::run(&main, &["worktree", "add", "-b", &branch, "--", &shown, "HEAD"])
    };
    if let Err(e) = made {
        // Only the empty folder made above is taken back.
        let _ = std::fs::remove_dir(&path);
        return Err(e.into());
    }
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    Ok(Entered { worktree: Worktree { name, path, branch: Some(branch) }, created: true })
}

/// octo's worktrees of the repository `cwd` is in (those in its worktree folder).
pub fn list(cwd: &Path, configured: Option<&Path>) -> Result<Vec<Listed>, WorktreeError> {
    let main = main_tree(cwd)?;
    let folder = folder(&main, configured);
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let mut out = Vec::new();
    for (path, branch) in registered(&main)? {
        if path.parent() != Some(folder.as_path()) {
            continue;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let changes = status(&path).ok().map(|s| s.lines().count());
        out.push(Listed { worktree: Worktree { name, path, branch }, changes });
    }
    out.sort_by(|a, b| a.worktree.name.cmp(&b.worktree.name));
    Ok(out)
}

/// `git status --short` in `path` (untracked files count).
fn status(path: &Path) -> Result<String, WorktreeError> {
    if !path.is_dir() {
        return Err(WorktreeError::Occupied(path.to_path_buf()));
    }
    Ok(git_cli::run(path, &["status", "--short", "--untracked-files=normal"])?)
}

/// Removes octo's worktree `name`; refused with uncommitted changes unless `force`. Its branch
/// is kept (commits are never lost). The removed worktree is returned.
pub fn remove(
    cwd: &Path,
    name: &str,
    force: bool,
    configured: Option<&Path>,
) -> Result<Worktree, WorktreeError> {
    check_name(name)?;
    let main = main_tree(cwd)?;
    let found = list(cwd, configured)?.into_iter().find(|l| l.worktree.name == name);
    let Some(found) = found else {
        return Err(WorktreeError::NoSuch { name: name.to_owned(), folder: folder(&main, configured) });
    };
    if !force && found.worktree.path.is_dir() {
        let changes = status(&found.worktree.path)?;
        if !changes.trim().is_empty() {
            let mut shown: Vec<&str> = changes.lines().take(10).collect();
            let more = changes.lines().count().saturating_sub(shown.len());
            let tail = format!("… and {more} more");
            if more > 0 {
                shown.push(&tail);
            }
            return Err(WorktreeError::Dirty { name: name.to_owned(), changes: shown.join("\n") });
        }
    }
    let shown = found.worktree.path.to_string_lossy().into_owned();
    let mut args = vec!["worktree", "remove"];
    if force {
        args.push("--force");
    }
    args.extend(["--", shown.as_str()]);
    git_cli::run(&main, &args)?;
    Ok(found.worktree)
}

#[cfg(test)]
mod tests;
