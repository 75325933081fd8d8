//! `octo mcp login NAME [--token]` and `octo mcp logout NAME`: an HTTP server's OAuth login (or
//! a bearer token the user has), kept in octo's key store.

use crate::cli::Cli;
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use crate::sanitize::visible;
use octo_app::Launcher;
use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::ExitCode;

/// How long a login waits for the browser's answer.
const LOGIN_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// The configured HTTP server `name`: its URL and OAuth settings; the error is for the user.
fn http_server(
    launcher: &Launcher,
    cli: &Cli,
    ws: &Path,
    name: &str,
) -> Result<(String, octo_app::mcp::OAuthSettings), String> {
    let config = launcher.config(ws, &crate::launch::overrides(cli)).map_err(|e| e.to_string())?;
    let server = config
        .mcp_servers
        .iter()
        .rev()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no MCP server `{name}`; `octo mcp list` shows them"))?;
    match server.spec.transport(launcher.env()) {
        Ok(octo_app::mcp::Transport::Http { url, oauth, .. }) => Ok((url, oauth)),
        Ok(_) => Err(format!("`{name}` is a stdio server: only HTTP servers log in")),
        Err(e) => Err(format!("`{name}` cannot be used as configured: {e}")),
    }
}

fn store_or_explain(launcher: &Launcher) -> Option<std::sync::Arc<dyn octo_app::mcp::SecretStore>> {
    if launcher.key_store().persists() {
        Some(octo_app::mcp::secrets(launcher.env()))
    } else {
        out::error("OCTO_NO_KEYRING is set, so there is nowhere to keep a login; unset it, or set OCTO_KEYRING_FILE to keep it in a file");
        None
    }
}

/// `octo mcp login NAME [--token]`.
pub async fn login(launcher: &Launcher, cli: &Cli, ws: &Path, name: &str, token: bool) -> ExitCode {
    let (url, settings) = match http_server(launcher, cli, ws, name) {
        Ok(s) => s,
        Err(why) => {
            out::error(&visible(&why));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let Some(store) = store_or_explain(launcher) else { return ExitCode::from(EXIT_USAGE) };
    if token {
        return store_token(&*store, launcher, name, &url);
    }
    let attended = std::io::stderr().is_terminal();
    let say = |m: &str| out::status(&visible(m));
    let done = octo_app::mcp::login(octo_app::mcp::Login {
        server: name,
        url: &url,
        settings: &settings,
        store,
        open: &octo_app::mcp::open_browser,
        say: &say,
        attended,
        wait: LOGIN_WAIT,
    })
    .await;
    match done {
        Ok(()) => {
            out::status(&format!(
                "logged in to `{name}`; the tokens are kept in {}",
                launcher.key_store().describe()
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            out::error(&visible(&format!("login to `{name}` failed: {e}")));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `--token`: a bearer token read hidden from the terminal, or from stdin.
fn store_token(
    store: &dyn octo_app::mcp::SecretStore,
    launcher: &Launcher,
    name: &str,
    url: &str,
) -> ExitCode {
    let read = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("bearer token for `{name}` (input hidden): "))
    } else {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map(|_| s)
    };
    let token = match read {
        Ok(t) => t.trim().to_owned(),
        Err(e) => {
            out::error(&format!("could not read the token: {e}"));
            return ExitCode::from(EXIT_ERROR);
        }
    };
    if token.is_empty() {
        out::error("no token given");
        return ExitCode::from(EXIT_USAGE);
    }
    match store.set(&octo_app::mcp::token_entry(name, url), &token) {
        Ok(()) => {
            out::status(&format!("stored the token for `{name}` in {}", launcher.key_store().describe()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            out::error(&e.to_string());
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `octo mcp logout NAME`.
pub fn logout(launcher: &Launcher, cli: &Cli, ws: &Path, name: &str) -> ExitCode {
    let url = match http_server(launcher, cli, ws, name) {
        Ok((u, _)) => u,
        Err(why) => {
            out::error(&visible(&why));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let Some(store) = store_or_explain(launcher) else { return ExitCode::from(EXIT_USAGE) };
    match octo_app::mcp::logout(&*store, name, &url) {
        Ok(true) => {
            out::status(&format!("forgot the login of `{name}`"));
            ExitCode::SUCCESS
        }
        Ok(false) => {
            out::status(&format!("no login was stored for `{name}`"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            out::error(&e.to_string());
            ExitCode::from(EXIT_ERROR)
        }
    }
}
