//! Running the system `git` for octo's own needs (a review's diff, worktrees) without running
//! code the repository names: `core.fsmonitor`, external diff drivers, text conversions, the
//! pager and the repository's hooks are turned off, and git never asks on the terminal.

use std::path::Path;
use std::process::Command;

/// Why a `git` run gave no output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitCliError {
    /// `git` could not be started (not installed, say).
    #[error("could not run git ({0}); install git and try again")]
    Start(String),
    /// Git ran and refused; its own message.
    #[error("{0}")]
    Refused(String),
}

/// `git args…` in `dir` with the repository's program hooks off; its standard output.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Result<String, GitCliError> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "core.fsmonitor=false", "-c", "core.pager=cat", "-c", "diff.external="])
        .args(["-c", "core.hooksPath=/dev/null", "--no-pager"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| GitCliError::Start(e.to_string()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        let err =
            if err.is_empty() { format!("git {} failed ({})", args.join(" "), out.status) } else { err };
        return Err(GitCliError::Refused(err));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
