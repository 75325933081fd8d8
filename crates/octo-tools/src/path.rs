//! Resolving the paths a model gives against the workspace, and deciding whether a write stays
//! inside it.

use crate::error::ToolError;
use octo_agent::{AnsweredBy, ApprovalDecision, ApprovalRequest, ToolContext};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// Joins `raw` (absolute, relative, or starting with `~/`) to the workspace and removes `.` and
/// `..` lexically. Symlinks are not followed here; see [`real_path`].
pub fn resolve(workspace: &Path, raw: &str) -> PathBuf {
    let expanded = match raw.strip_prefix("~/") {
        Some(rest) => home_dir().map(|h| h.join(rest)).unwrap_or_else(|| PathBuf::from(raw)),
        None if raw == "~" => home_dir().unwrap_or_else(|| PathBuf::from(raw)),
        None => PathBuf::from(raw),
    };
    let joined = if expanded.is_absolute() { expanded } else { workspace.join(expanded) };
    normalize(&joined)
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from)
}

/// Removes `.` and `..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The path with every symlink in it resolved, also for paths that do not exist yet: the deepest
/// existing ancestor is canonicalized and the rest appended.
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canon) = existing.canonicalize() {
            let mut out = canon;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize(&out);
        }
        match (existing.file_name().map(std::ffi::OsStr::to_os_string), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return normalize(path),
        }
    }
}

/// Whether `path` (after resolving symlinks) lies inside `root` (also resolved).
pub fn is_within(path: &Path, root: &Path) -> bool {
    real_path(path).starts_with(real_path(root))
}

/// Checks that a tool may write `path`: inside the workspace or one of `extra_roots`, else only
/// when the user approves through the front end (or already approved this very call). Returns
/// the refusal text otherwise.
pub async fn check_writable(
    ctx: &ToolContext,
    tool: &str,
    input: &Value,
    path: &Path,
    extra_roots: &[PathBuf],
) -> Result<(), ToolError> {
    // The user already approved this exact call, path included: asking again about the same
    // write would be noise.
    if ctx.user_approved() || is_within(path, ctx.cwd()) || extra_roots.iter().any(|r| is_within(path, r)) {
        return Ok(());
    }
    let shown = path.display();
    let mut req = ApprovalRequest::new(
        ctx.tool_use_id(),
        tool,
        input.clone(),
        format!("{tool} outside the workspace: {shown}"),
    );
    req.reason = Some(format!(
        "{shown} is outside the workspace {} (directly, through `..`, or through a symlink)",
        ctx.cwd().display()
    ));
    let (decision, by) = ctx.ask_approval(req).await;
    match decision {
        ApprovalDecision::Allow | ApprovalDecision::AllowAlways => Ok(()),
        ApprovalDecision::Deny { .. }
        | ApprovalDecision::DenyAlways { .. }
        | ApprovalDecision::Edited { .. } => {
            let message = match decision {
                ApprovalDecision::Deny { message } | ApprovalDecision::DenyAlways { message } => message,
                _ => Some("an edited call cannot be taken here".to_owned()),
            };
            let text = format!(
                "refused to write {shown}: it is outside the workspace {} and was not approved{}. \
                 Write inside the workspace instead.",
                ctx.cwd().display(),
                message.map(|m| format!(" ({m})")).unwrap_or_default()
            );
            Err(match by {
                AnsweredBy::User => ToolError::NotApproved(text),
                AnsweredBy::Nobody => ToolError::Unattended(text),
                _ => ToolError::Interrupted(text),
            })
        }
    }
}

/// `path` relative to `base` when it is inside it, for compact output.
pub fn display_relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_absolute_and_dotdot() {
        let ws = Path::new("/work/ws");
        assert_eq!(resolve(ws, "src/lib.rs"), PathBuf::from("/work/ws/src/lib.rs"));
        assert_eq!(resolve(ws, "./a/../b"), PathBuf::from("/work/ws/b"));
        assert_eq!(resolve(ws, "../other"), PathBuf::from("/work/other"));
        assert_eq!(resolve(ws, "/etc/passwd"), PathBuf::from("/etc/passwd"));
    }

    #[test]
    fn symlinks_that_point_out_are_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let out = tmp.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        assert!(is_within(&ws.join("new/file.txt"), &ws));
        assert!(!is_within(&ws.join("../outside/x"), &ws));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&out, ws.join("link")).unwrap();
            assert!(!is_within(&ws.join("link/file.txt"), &ws), "a symlink out of the workspace");
            assert!(!is_within(&ws.join("link/deeper/new.txt"), &ws));
        }
    }
}
