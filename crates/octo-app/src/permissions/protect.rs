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

/// Files that configure git or octo, or are read into a prompt: editing them can run commands
/// (a git hook, an fsmonitor) or steer every later session, so they are asked about in
/// accept-edits mode. Matched on any path component, without regard to case.
pub(super) const PROTECTED: &[&str] =
    &[".git", ".octo", ".claude", ".mcp.json", ".octorules", "claude.md", "claude.local.md", "agents.md"];

/// Whether the call touches a protected path, as written or as resolved.
pub(super) fn protected(t: &Target) -> Option<String> {
    let p = t.path.as_ref()?;
    let hit = |rel: &Path| {
        rel.components().find_map(|c| {
            let name = c.as_os_str().to_string_lossy().to_ascii_lowercase();
            PROTECTED.contains(&name.as_str()).then(|| c.as_os_str().to_string_lossy().into_owned())
        })
    };
    // Outside the workspace the whole resolved path counts: a symlink into another
    // repository's `.git` is as dangerous as this one's.
    let real = p.real_rel.as_deref().map_or_else(|| hit(&p.real), hit);
    real.or_else(|| p.lexical_rel.as_deref().and_then(hit))
}
