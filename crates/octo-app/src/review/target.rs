//! What `/review` looks at, and why a review could not happen.

use std::path::PathBuf;
use thiserror::Error;

/// What to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewTarget {
    /// Everything not committed: staged, unstaged and untracked files.
    WorkingTree,
    /// The staged changes only.
    Staged,
    /// The current branch against this one (from where they part).
    Base(String),
    /// One commit.
    Commit(String),
}

impl ReviewTarget {
    /// The target in words ("the uncommitted changes", "commit 1a2b3c").
    pub fn describe(&self) -> String {
        match self {
            Self::WorkingTree => "the uncommitted changes".into(),
            Self::Staged => "the staged changes".into(),
            Self::Base(b) => format!("this branch's changes against {b}"),
            Self::Commit(c) => format!("commit {}", c.get(..12).unwrap_or(c)),
        }
    }

    /// Reads `/review`'s argument: nothing (the working tree), `--staged`, `--base REF`,
    /// `--commit SHA`, or a bare name — a branch is a base, anything else a commit.
    pub fn parse(arg: &str, workspace: &std::path::Path) -> Result<Self, ReviewError> {
        let words: Vec<&str> = arg.split_whitespace().collect();
        Ok(match words.as_slice() {
            [] => Self::WorkingTree,
            ["--staged" | "staged"] => Self::Staged,
            ["--base", r] => Self::Base((*r).to_owned()),
            ["--commit", c] => Self::Commit((*c).to_owned()),
            [name] if !name.starts_with('-') => {
                let branch = std::process::Command::new("git")
                    .current_dir(workspace)
                    .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
                    .arg(format!("refs/heads/{name}"))
                    .output()
                    .is_ok_and(|o| o.status.success());
                let remote = name.contains('/')
                    && std::process::Command::new("git")
                        .current_dir(workspace)
                        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
                        .arg(format!("refs/remotes/{name}"))
                        .output()
                        .is_ok_and(|o| o.status.success());
                if branch || remote {
                    Self::Base((*name).to_owned())
                } else {
                    Self::Commit((*name).to_owned())
                }
            }
            _ => return Err(ReviewError::Usage(arg.to_owned())),
        })
    }
}

/// Why there is no review.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// The workspace is not in a git repository.
    #[error("{} is not in a git repository, so there is no diff to review (run git init, or review a file by asking for it)", .0.display())]
    NotARepository(PathBuf),
    /// Git refused (an unknown ref, a broken repository); its message.
    #[error("git: {0}")]
    Git(String),
    /// An argument `/review` does not take.
    #[error("`/review {0}` is not a review target. Usage: /review [--staged | --base REF | --commit SHA | BRANCH | SHA]")]
    Usage(String),
    /// The turn could not run.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    /// The user's `review` command could not be prepared (or asks what nobody can answer here).
    #[error("the review command: {0}")]
    Command(String),
}
