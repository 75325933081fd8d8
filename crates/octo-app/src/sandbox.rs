//! The OS sandbox a session's commands run in, built from the configuration's settings
//! ([`crate::config::SandboxSettings`]).

use crate::config::SandboxSettings;
use octo_tools::shell::sandbox::Sandbox;
use std::path::{Path, PathBuf};

/// The sandbox a session's commands run in, with the notice to show when one was wanted but
/// none can be had.
pub fn build(
    settings: &SandboxSettings,
    workspace: &Path,
    output: &Path,
    homes: &[PathBuf],
    simulate: Option<&str>,
) -> (std::sync::Arc<Sandbox>, Option<String>) {
    let sandbox = Sandbox::new(settings.policy(workspace, output, homes, simulate));
    let notice = sandbox.unavailable().map(|why| {
        if settings.required {
            format!("no OS sandbox ({why}), and `sandbox = \"required\"`: commands will be refused")
        } else {
            format!(
                "no OS sandbox ({why}): commands run with your full rights. Set `sandbox = \"off\"` to silence this, or \"required\" to refuse commands instead"
            )
        }
    });
    (std::sync::Arc::new(sandbox), notice)
}

/// The sandbox for `/status`: which one and how, then each promise it does not hold here.
pub fn status_line(sandbox: &Sandbox) -> String {
    let mut text = sandbox.describe();
    if sandbox.is_active() {
        let gaps = sandbox.unheld();
        if !gaps.is_empty() {
            text.push_str(&format!("; not held here: {}", gaps.join("; ")));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::status_line;
    use octo_tools::shell::sandbox::{Mode, Policy, Sandbox};

    #[test]
    fn status_names_what_the_sandbox_does_not_hold_here() {
        let dir = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, dir.path());
        policy.simulate_no_namespaces = true;
        let fallback = Sandbox::new(policy);
        if !fallback.is_active() {
            return;
        }
        let text = status_line(&fallback);
        assert!(text.contains("not held here") && text.contains("chmod"), "{text}");
        let full = Sandbox::new(Policy::new(Mode::WorkspaceWrite, dir.path()));
        if full.unheld().is_empty() {
            assert!(!status_line(&full).contains("not held here"));
        }
    }
}
