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
