//! `octo mcp serve`: octo's own tools offered to another agent over MCP on stdio.

use std::path::Path;
use std::sync::Arc;

/// Why `octo mcp serve` could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The workspace or the configuration is unusable.
    #[error(transparent)]
    Launch(#[from] crate::launcher::LaunchError),
    /// The MCP connection failed.
    #[error(transparent)]
    Mcp(#[from] octo_mcp::ServeError),
}

/// `octo mcp serve`: octo's built-in tools over MCP on stdio, in `workspace`, behind the
/// permission engine with the user's rules. Read-only tools only, unless `allow_writes` (then
/// every tool, in auto mode: deny rules and the hard limits still hold). Nobody can be asked, so
/// what would need a question is refused.
pub async fn serve(
    launcher: &crate::Launcher,
    workspace: Option<&Path>,
    allow_writes: bool,
) -> Result<(), ServeError> {
    let ws = launcher.workspace(workspace)?;
    let config = launcher.config(&ws, &crate::config::Overrides::default())?;
    let home = launcher.home().clone();
    let env = launcher.env();
    let path_env = |name: &str| env(name).filter(|v| !v.is_empty()).map(std::path::PathBuf::from);
    let secrets = home.secrets(path_env("HOME"), path_env("OCTO_KEYRING_FILE"));
    let mut settings = crate::tools::BuiltinSettings::from_config(&config, secrets.clone());
    // The client's commands run in the same OS sandbox as a session's (it has no one to ask,
    // so running outside it is refused).
    let homes: Vec<std::path::PathBuf> = path_env("HOME").into_iter().chain([config.home.clone()]).collect();
    let simulate = env("OCTO_SANDBOX_SIMULATE");
    let quarantine = config.home.join("quarantine").join(format!("mcp-serve-{}", std::process::id()));
    let output = home.output();
    let places = crate::sandbox::Places { output: &output, quarantine: &quarantine, secrets: &secrets };
    let (sandbox, notice) =
        crate::sandbox::build(&config.sandbox, &ws, places, &homes, simulate.as_deref(), &[]);
    if let Some(n) = notice {
        eprintln!("octo mcp serve: {n}");
    }
    settings.sandbox = Some(Arc::clone(&sandbox));
    let builtin = crate::tools::builtin(&home, &settings);
    let mut registry = octo_agent::ToolRegistry::new();
    // Compacting belongs to a conversation, which an MCP client has and octo does not.
    let compact = octo_agent::ToolExecutor::definition(&octo_agent::context::CompactTool).name;
    for tool in octo_agent::ToolSource::tools(&builtin.tools) {
        if tool.definition().name != compact && (allow_writes || tool.meta().read_only) {
            registry.register(tool);
        }
    }
    let mode = if allow_writes { crate::Mode::Auto } else { crate::Mode::Default };
    let engine = crate::PermissionEngine::new(config.rules.clone(), mode)
        .with_secrets(secrets)
        .with_sandbox(sandbox.is_active())
        .with_sandbox_gap({
            let sandbox = Arc::clone(&sandbox);
            move || sandbox.accept_edits_gap()
        })
        .with_socket_gap({
            let sandbox = Arc::clone(&sandbox);
            move || sandbox.socket_gap()
        });
    octo_mcp::serve::OctoServer::new(registry, Arc::new(engine), ws).serve_stdio().await?;
    builtin.shells.stop_all();
    Ok(())
}
