//! Gathering what to review with `git` — octo does this, not the model. Git runs through
//! [`crate::git_cli`], with the repository's own programs turned off (`core.fsmonitor`,
//! external diff drivers, text conversions, hooks), so reading a diff never runs code the
//! repository names.

use super::target::{ReviewError, ReviewTarget};
use std::path::Path;

/// The most diff text put in the prompt; the model reads the rest with its tools.
pub(crate) const MAX_DIFF: usize = 200 * 1024;
/// The most of one untracked file shown.
const MAX_NEW_FILE: usize = 16 * 1024;

/// The changes to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// What they are ("the uncommitted changes", "commit 1a2b3c4", …).
    pub description: String,
    /// The unified diff (cut at 200 KB, saying so).
    pub text: String,
    /// Files changed.
    pub files: usize,
}

/// `git` in `workspace` with the repository's program hooks off.
fn git(workspace: &Path, args: &[&str]) -> Result<String, ReviewError> {
    crate::git_cli::run(workspace, args).map_err(|e| ReviewError::Git(e.to_string()))
}

const DIFF: &[&str] = &["diff", "--no-ext-diff", "--no-textconv", "--no-color", "--find-renames"];

/// What `target` amounts to in `workspace`; `None` when there is nothing to review.
pub fn gather(workspace: &Path, target: &ReviewTarget) -> Result<Option<Diff>, ReviewError> {
    match git(workspace, &["rev-parse", "--is-inside-work-tree"]) {
        Ok(s) if s.trim() == "true" => {}
        _ => return Err(ReviewError::NotARepository(workspace.to_path_buf())),
    }
    let has_head = git(workspace, &["rev-parse", "--verify", "--quiet", "HEAD"]).is_ok();
    let with = |extra: &[&str]| -> Result<String, ReviewError> {
        let args: Vec<&str> = DIFF.iter().copied().chain(extra.iter().copied()).collect();
        git(workspace, &args)
    };
    let (description, mut text) = match target {
        ReviewTarget::WorkingTree => {
            // Staged and unstaged changes against the last commit, and files git does not track.
            let tracked = if has_head { with(&["HEAD"])? } else { with(&["--cached"])? };
            (target.describe(), tracked + &untracked(workspace)?)
        }
        ReviewTarget::Staged => (target.describe(), with(&["--cached"])?),
        ReviewTarget::Base(base) => {
            check_ref(base)?;
            let range = format!("{base}...HEAD");
            (target.describe(), with(&[range.as_str()])?)
        }
        ReviewTarget::Commit(sha) => {
            check_ref(sha)?;
            let text = git(
                workspace,
                &[
                    "show",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-color",
                    "--format=commit %H%nAuthor: %an%n%n%B",
                    sha,
                ],
            )?;
            (target.describe(), text)
        }
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let files = text.lines().filter(|l| l.starts_with("diff --git ")).count();
    if text.len() > MAX_DIFF {
        let mut cut = MAX_DIFF;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[the diff is cut here; read the remaining files with the tools]\n");
    }
    Ok(Some(Diff { description, text, files }))
}

/// A ref or commit a user typed: never an option git would read as one.
fn check_ref(r: &str) -> Result<(), ReviewError> {
    if r.is_empty() || r.starts_with('-') || r.chars().any(char::is_whitespace) {
        return Err(ReviewError::Git(format!("`{r}` is not a branch, tag or commit")));
    }
    Ok(())
}

/// New files git does not track (and does not ignore), as diffs from nothing.
fn untracked(workspace: &Path) -> Result<String, ReviewError> {
    let list = git(workspace, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    let mut out = String::new();
    for name in list.split('\0').filter(|n| !n.is_empty()) {
        let Ok(bytes) = std::fs::read(workspace.join(name)) else { continue };
        out.push_str(&format!(
            "diff --git a/{name} b/{name}\nnew file (untracked)\n--- /dev/null\n+++ b/{name}\n"
        ));
        if bytes.contains(&0) {
            out.push_str("[binary file]\n");
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut shown = 0;
        for line in text.lines() {
            if shown + line.len() > MAX_NEW_FILE {
                out.push_str("[the rest of the file is cut]\n");
                break;
            }
            shown += line.len() + 1;
            out.push('+');
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}
