//! `octo plugin list|enable|disable|install`: Claude Code plugins, read by octo-app's
//! `plugins` module.

use crate::cli::{Cli, MarketplaceAction, PluginAction};
use crate::exit::EXIT_ERROR;
use crate::out;
use crate::sanitize::visible;
use octo_app::claude_plugins::PluginFrom;
use octo_app::plugins::PluginError;
use octo_app::Launcher;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs `octo plugin …`.
pub fn run(launcher: &Launcher, cli: &Cli, action: &PluginAction) -> ExitCode {
    let home = launcher.home();
    let user_home = launcher.env()("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let result = match action {
        PluginAction::List => {
            let mut notes = Vec::new();
            let ws = launcher.workspace(cli.workspace.as_deref()).ok();
            let all = octo_app::plugins::all(
                home,
                (user_home.as_deref(), ws.as_deref()),
                &cli.plugin_dirs,
                &mut notes,
            );
            for n in &notes {
                out::status(&visible(&format!("warning: {n}")));
            }
            if all.is_empty() {
                out::status(
                    "no plugins: install one with `octo plugin install PATH|URL`, or use a folder for one run with --plugin-dir",
                );
            }
            for l in &all {
                let from = match l.plugin.from {
                    PluginFrom::Claude => "Claude Code",
                    PluginFrom::Octo => "octo",
                    PluginFrom::Dir => "--plugin-dir",
                    PluginFrom::Project => "the project",
                };
                let state = if l.enabled { "on " } else { "off" };
                let parts = octo_app::plugin_parts::summary(&l.plugin);
                out::stdout(&visible(&format!(
                    "{state}  {:<28} {from:<12} {}  ({parts})\n",
                    l.plugin.id,
                    l.plugin.root.display()
                )));
            }
            Ok(())
        }
        PluginAction::Enable { name } | PluginAction::Disable { name } => {
            let on = matches!(action, PluginAction::Enable { .. });
            octo_app::plugins::set_enabled(home, user_home.as_deref(), name, on).map(|id| {
                out::status(&format!("the plugin {id} is {} for octo", if on { "on" } else { "off" }));
            })
        }
        PluginAction::Install { source } => {
            let claude = user_home.as_deref().map(|h| h.join(".claude"));
            octo_app::plugins::install(home, claude.as_deref(), source).map(|p| {
                out::status(&visible(&format!(
                    "installed the plugin {} in {} ({})",
                    p.name,
                    p.root.display(),
                    octo_app::plugin_parts::summary(&p)
                )));
            })
        }
        PluginAction::Marketplace(action) => marketplace(home, user_home.as_deref(), action),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            out::error(&e.to_string());
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Runs `octo plugin marketplace …`.
fn marketplace(
    home: &octo_app::Home,
    user_home: Option<&Path>,
    action: &MarketplaceAction,
) -> Result<(), PluginError> {
    let claude = user_home.map(|h| h.join(".claude"));
    match action {
        MarketplaceAction::Add { source } => {
            let m = octo_app::marketplaces::add(home, source)?;
            let names = octo_app::marketplaces::plugin_names(&m.location);
            out::status(&visible(&format!(
                "added the marketplace {} ({}); install its plugins with `octo plugin install NAME@{}`: {}",
                m.name,
                m.location.display(),
                m.name,
                if names.is_empty() { "it lists none".to_owned() } else { names.join(", ") }
            )));
        }
        MarketplaceAction::List => {
            let all = octo_app::marketplaces::list(home, claude.as_deref());
            if all.is_empty() {
                out::status(
                    "no marketplaces: add one with `octo plugin marketplace add PATH|URL|owner/repo`",
                );
            }
            for m in &all {
                let by = if m.by_claude { "Claude Code" } else { "octo" };
                let names = octo_app::marketplaces::plugin_names(&m.location);
                out::stdout(&visible(&format!(
                    "{:<24} {by:<12} {}  ({})\n",
                    m.name,
                    m.location.display(),
                    names.join(", ")
                )));
            }
        }
        MarketplaceAction::Remove { name } => {
            let m = octo_app::marketplaces::remove(home, name)?;
            out::status(&visible(&format!(
                "removed the marketplace {}; plugins installed from it stay (`octo plugin list`)",
                m.name
            )));
        }
    }
    Ok(())
}
