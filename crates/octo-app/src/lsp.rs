//! The session's language servers (`octo-lsp`): the user's `[lsp.<name>]` tables and the
//! installed defaults, run in the session's sandbox with the network off and the commands'
//! filtered environment. Only the servers of languages the workspace has are offered.

use crate::config::lsp::{LspDiagnostics, LspSettings};
use octo_tools::shell::sandbox::Sandbox;
use std::path::Path;
use std::sync::Arc;

/// The servers for `workspace`, or `None` when none is installed (then there is no `lsp` tool).
pub(crate) fn servers(
    settings: &LspSettings,
    workspace: &Path,
    sandbox: &Sandbox,
    env: &octo_tools::shell::env::ShellEnv,
) -> Option<Arc<octo_lsp::Lsp>> {
    let mut resolved = octo_lsp::resolve(&settings.configured(), std::env::var_os("PATH").as_deref());
    let names = top_names(workspace);
    resolved.retain(|r| r.program.is_some() && serves(&r.config, &names));
    if resolved.is_empty() {
        return None;
    }
    let confined = sandbox.is_active().then(|| {
        let mut policy = sandbox.policy().clone();
        policy.network = false;
        Arc::new(Sandbox::new(policy))
    });
    let mut s = octo_lsp::Settings {
        warnings: settings.diagnostics == LspDiagnostics::Warnings,
        ..Default::default()
    };
    if let Some(w) = settings.wait {
        s.wait = w;
    }
    Some(Arc::new(octo_lsp::Lsp::new(workspace, resolved, confined, env.clone(), s)))
}

/// How many entries of the workspace are looked at to tell its languages.
const MAX_LOOKED_AT: usize = 400;

/// The names of the workspace's entries and of those one level down (a cheap look, bounded).
pub(crate) fn top_names(workspace: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let list = |dir: &Path| -> Vec<(String, bool)> {
        std::fs::read_dir(dir)
            .map(|rd| {
                rd.flatten()
                    .take(MAX_LOOKED_AT)
                    .map(|e| {
                        (
                            e.file_name().to_string_lossy().into_owned(),
                            e.file_type().is_ok_and(|t| t.is_dir()),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for (name, dir) in list(workspace) {
        if dir && !name.starts_with('.') && names.len() < MAX_LOOKED_AT {
            names.extend(list(&workspace.join(&name)).into_iter().map(|(n, _)| n));
        }
        names.push(name);
    }
    names
}

/// Whether the workspace has files (or a project marker) of the server's languages: a
/// server, and the `lsp` tool, are offered only where they can help.
fn serves(config: &octo_lsp::ServerConfig, names: &[String]) -> bool {
    names.iter().any(|n| {
        config.root_markers.iter().any(|m| m == n)
            || n.rsplit_once('.')
                .is_some_and(|(_, ext)| config.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    })
}

/// `octo doctor`'s lines (good or not, and what): each configured server found or missing, the
/// installed defaults, or that there are none.
pub fn doctor_lines(settings: &LspSettings) -> Vec<(bool, String)> {
    let resolved = octo_lsp::resolve(&settings.configured(), std::env::var_os("PATH").as_deref());
    if resolved.is_empty() {
        return vec![(
            true,
            "language servers: none installed (an edit's result gets a server's errors when one is; see dev-docs/code-intelligence.md)"
                .to_owned(),
        )];
    }
    resolved
        .iter()
        .map(|r| {
            let exts = r.config.extensions.join(" .");
            match &r.program {
                Some(p) => (true, format!("language server {}: {} (for .{exts})", r.name, p.display())),
                None => (
                    false,
                    format!(
                        "language server {}: `{}` is not on PATH (configured for .{exts})",
                        r.name, r.config.command
                    ),
                ),
            }
        })
        .collect()
}
