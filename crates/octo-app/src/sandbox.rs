//! The OS sandbox a session's commands run in, built from the configuration's settings
//! ([`crate::config::SandboxSettings`]).

use crate::config::SandboxSettings;
use octo_tools::shell::sandbox::Sandbox;
use std::path::{Path, PathBuf};

/// Where the sandbox's commands write and what they may not read or make: a session's command
/// output, its quarantine (where a prompt or agent file a command created is moved: in octo's
/// home, out of the commands' reach, so a command cannot point it elsewhere), and the secret
/// places.
#[derive(Debug, Clone, Copy)]
pub struct Places<'a> {
    /// The session's command output (writable by its commands).
    pub output: &'a Path,
    /// Where created prompt and agent files go.
    pub quarantine: &'a Path,
    /// Places commands may not read.
    pub secrets: &'a octo_tools::secrets::Secrets,
}

/// The sandbox a session's commands run in, with the notice to show when one was wanted but
/// none can be had.
pub fn build(
    settings: &SandboxSettings,
    workspace: &Path,
    places: Places<'_>,
    homes: &[PathBuf],
    simulate: Option<&str>,
    prompt_files: &[PathBuf],
) -> (std::sync::Arc<Sandbox>, Option<String>) {
    let secrets = places.secrets;
    let mut policy = settings.policy(workspace, places.output, homes, simulate);
    policy.quarantine = Some(places.quarantine.to_path_buf());
    policy.protected_entries.extend(inside(workspace, prompt_files));
    policy.secrets.extend(secrets.places());
    let sandbox = Sandbox::new(policy);
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

/// The files read into the prompt (the rule files' includes and imports) that lie in
/// `workspace`, relative to it, for the sandbox to keep read-only like the rule files.
fn inside(workspace: &Path, files: &[PathBuf]) -> Vec<String> {
    let real_ws = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut out: Vec<String> = Vec::new();
    for f in files {
        let real = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        let rel = f.strip_prefix(workspace).ok().or_else(|| real.strip_prefix(&real_ws).ok());
        let Some(rel) = rel.filter(|r| !r.as_os_str().is_empty()) else { continue };
        let name = rel.to_string_lossy().into_owned();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The sandbox for `/status`: which one and how, then each promise it does not hold here.
pub(crate) fn status_line(sandbox: &Sandbox) -> String {
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
        policy.simulate_no_supervisor = true;
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
