//! `octo mcp list|get|add|remove|serve` (`login|logout` in `mcp_login`).

use crate::cli::{Cli, McpAction};
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::toml_edit;
use octo_app::Launcher;
use std::process::ExitCode;

/// Runs `octo mcp …`.
pub async fn run(launcher: &Launcher, cli: &Cli, action: &McpAction) -> anyhow::Result<ExitCode> {
    let ws = launcher.workspace(cli.workspace.as_deref())?;
    Ok(match action {
        McpAction::Serve { allow_writes } => {
            match octo_app::mcp_serve::serve(launcher, Some(&ws), *allow_writes).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    out::error(&e.to_string());
                    ExitCode::from(EXIT_ERROR)
                }
            }
        }
        McpAction::List => show(launcher, cli, &ws, None).await,
        McpAction::Get { name } => show(launcher, cli, &ws, Some(name)).await,
        McpAction::Add { name, url, env, headers, bearer_env, command } => {
            let table = match server_table(url.as_deref(), command, env, headers, bearer_env.as_deref()) {
                Ok(t) => t,
                Err(why) => {
                    out::error(&visible(&why));
                    return Ok(ExitCode::from(EXIT_USAGE));
                }
            };
            add(launcher, name, &table)
        }
        McpAction::Remove { name } => remove(launcher, name),
        McpAction::Login { name, token } => crate::mcp_login::login(launcher, cli, &ws, name, *token).await,
        McpAction::Logout { name } => crate::mcp_login::logout(launcher, cli, &ws, name),
    })
}

/// `octo mcp list` (every server) and `octo mcp get NAME`: each server started, then its state.
async fn show(launcher: &Launcher, cli: &Cli, ws: &std::path::Path, name: Option<&str>) -> ExitCode {
    let config = match launcher.config(ws, &crate::launch::overrides(cli)) {
        Ok(c) => c,
        Err(e) => {
            out::error(&e.to_string());
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for w in &config.warnings {
        out::status(&visible(&format!("octo: note: {w}")));
    }
    let Some(hub) = octo_app::mcp::hub(&config.mcp_servers, launcher.home(), ws, launcher.env()) else {
        out::status("no MCP servers configured (add one: octo mcp add NAME -- COMMAND ARGS, or a .mcp.json in the project)");
        return ExitCode::SUCCESS;
    };
    hub.start();
    hub.wait_ready(std::time::Duration::from_secs(60)).await;
    let status = hub.status();
    let code = match name {
        Some(name) => match status.iter().find(|s| s.name == name) {
            Some(s) => {
                one(s);
                ExitCode::SUCCESS
            }
            None => {
                out::error(&visible(&format!("no MCP server `{name}`; `octo mcp list` shows them")));
                ExitCode::from(EXIT_USAGE)
            }
        },
        None => {
            status.iter().for_each(line);
            ExitCode::SUCCESS
        }
    };
    hub.shutdown();
    code
}

/// One server, in full (`octo mcp get`).
fn one(s: &octo_app::McpServerStatus) {
    let origin = match s.origin {
        octo_app::McpOrigin::User => "the user config",
        octo_app::McpOrigin::ProjectJson => "the project's .mcp.json",
        octo_app::McpOrigin::ProjectConfig => "the project's .octo/config.toml",
    };
    out::stdout(&visible(&format!(
        "{}: {} ({})\n  configured in {origin}\n  runs: {}\n",
        s.name, s.state, s.transport, s.target
    )));
    if let Some(e) = &s.error {
        out::stdout(&visible(&format!("  error: {e}\n")));
    }
    for t in &s.tools {
        out::stdout(&visible(&format!("  tool: {t}\n")));
    }
}

/// One server's line in `octo mcp list`.
fn line(s: &octo_app::McpServerStatus) {
    let tools = if s.state == "ready" { format!("{} tools", s.tools.len()) } else { String::new() };
    out::stdout(&visible(&format!(
        "{:<16} {:<15} {:<6} {:<10} {}\n",
        s.name, s.state, s.transport, tools, s.target
    )));
    if let Some(e) = &s.error {
        out::stdout(&visible(&format!("    {}\n", e.lines().next().unwrap_or(""))));
    }
}

/// The `[mcp_servers.NAME]` table `octo mcp add` writes; the error says what is wrong.
fn server_table(
    url: Option<&str>,
    command: &[String],
    env: &[String],
    headers: &[String],
    bearer_env: Option<&str>,
) -> Result<toml_edit::Table, String> {
    let mut t = toml_edit::Table::new();
    match (url, command.split_first()) {
        (Some(u), None) => t["url"] = toml_edit::value(u),
        (None, Some((cmd, args))) => {
            t["command"] = toml_edit::value(cmd.as_str());
            if !args.is_empty() {
                let mut a = toml_edit::Array::new();
                for x in args {
                    a.push(x.as_str());
                }
                t["args"] = toml_edit::value(a);
            }
        }
        _ => return Err("give either --url URL or `-- COMMAND ARGS`".to_owned()),
    }
    for (key, pairs) in [("env", env), ("headers", headers)] {
        if pairs.is_empty() {
            continue;
        }
        let mut inline = toml_edit::InlineTable::new();
        for p in pairs {
            let Some((k, v)) = p.split_once('=') else { return Err(format!("`{p}` is not KEY=VALUE")) };
            inline.insert(k, v.into());
        }
        t[key] = toml_edit::value(inline);
    }
    if let Some(b) = bearer_env {
        t["bearer_token_env"] = toml_edit::value(b);
    }
    Ok(t)
}

/// `octo mcp add`: the table written into the user's config.
fn add(launcher: &Launcher, name: &str, table: &toml_edit::Table) -> ExitCode {
    let path = launcher.home().config_file();
    match octo_app::mcp::add_server(&path, name, table) {
        Ok(()) => {
            out::status(&visible(&format!("added MCP server `{name}` to {}", path.display())));
            ExitCode::SUCCESS
        }
        Err(e) => {
            out::error(&e.to_string());
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `octo mcp remove`.
fn remove(launcher: &Launcher, name: &str) -> ExitCode {
    let path = launcher.home().config_file();
    match octo_app::mcp::remove_server(&path, name) {
        Ok(true) => {
            out::status(&visible(&format!("removed MCP server `{name}` from {}", path.display())));
            ExitCode::SUCCESS
        }
        Ok(false) => {
            out::error(&visible(&format!("{} has no MCP server `{name}`", path.display())));
            ExitCode::from(EXIT_USAGE)
        }
        Err(e) => {
            out::error(&e.to_string());
            ExitCode::from(EXIT_ERROR)
        }
    }
}
