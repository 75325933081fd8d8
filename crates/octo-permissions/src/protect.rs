//! What an approval prompt shows for a call, and the paths that configure git or octo or are
//! read into a prompt (asked about even in accept-edits mode).

use super::target::Target;
use octo_agent::{PermissionQuery, Subject};
use std::path::Path;

/// What an approval prompt shows: the command, the resolved path or the URL; `None` lets the
/// loop use the tool's own summary.
pub(super) fn summary(q: &PermissionQuery<'_>, t: &Target) -> Option<String> {
    match &q.meta.subject {
        Subject::Command { .. } | Subject::Url { .. } => q.subject_value().map(str::to_owned),
        Subject::Path { .. } => t.path.as_ref().map(|p| {
            if p.real == p.lexical {
                p.real.display().to_string()
            } else {
                format!("{} (really {})", p.lexical.display(), p.real.display())
            }
        }),
        _ => None,
    }
}

/// How far a protected path is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Protection {
    /// Git runs it or reads commands from it (`.git/hooks/**`, `.git/config`, a submodule's):
    /// asked about every time; no rule and no "always" lifts it.
    GitRuns(String),
    /// Read into a later prompt or configures octo or git: asked about in every mode; an allow
    /// rule naming it, or "always", lifts it.
    Steers(String),
}

impl Protection {
    pub(super) fn name(&self) -> &str {
        match self {
            Self::GitRuns(n) | Self::Steers(n) => n,
        }
    }
}

/// The names protected on any path component, lowercased: files that configure git or octo, or
/// are read into a prompt. Editing one can run commands (a git hook, an fsmonitor) or steer every
/// later session, so a file tool writing one is asked about in every mode. They come from the
/// one list in [`crate::protected`]; the folders skills, commands, agents and memory are read
/// from (and the list's root-only names) are given to the engine by the session
/// ([`super::PermissionEngine::with_protected_dirs`]).
pub(super) fn protected_names() -> impl Iterator<Item = String> {
    crate::protected::anywhere_names()
}

/// What in `rel` (a path's components) is protected, if anything.
fn classify(rel: &Path) -> Option<Protection> {
    let names: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let lower: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
    if let Some(git) = lower.iter().position(|n| n == ".git") {
        let after = &lower[git + 1..];
        let runs = after.iter().any(|n| n == "hooks")
            || after.last().is_some_and(|n| n == "config" || n == "attributes" || n == "commondir");
        let shown = names[git..].join("/");
        return Some(if runs { Protection::GitRuns(shown) } else { Protection::Steers(shown) });
    }
    let all: Vec<String> = protected_names().collect();
    lower.iter().position(|n| all.contains(n)).map(|i| Protection::Steers(names[i].clone()))
}

/// How the call's path is protected, as written or as resolved (the graver of the two).
pub(super) fn protection(t: &Target) -> Option<Protection> {
    let p = t.path.as_ref()?;
    // Outside the workspace the whole resolved path counts: a symlink into another
    // repository's `.git` is as dangerous as this one's.
    let real = p.real_rel.as_deref().map_or_else(|| classify(&p.real), classify);
    let lexical = p.lexical_rel.as_deref().and_then(classify);
    match (real, lexical) {
        (Some(r @ Protection::GitRuns(_)), _) | (_, Some(r @ Protection::GitRuns(_))) => Some(r),
        (None, None) => hard_linked(&p.real),
        (r, l) => r.or(l),
    }
}

/// A regular file with other hard links may be a protected file under an innocent name (`ln
/// .git/hooks/pre-commit notes.txt`): which one cannot be told cheaply, so it is treated as the
/// gravest kind.
fn hard_linked(path: &Path) -> Option<Protection> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(path).ok()?;
        (meta.is_file() && meta.nlink() > 1).then(|| {
            Protection::GitRuns(format!(
                "{} (it has {} hard links: it may be a protected file under another name)",
                path.display(),
                meta.nlink()
            ))
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}
