//! `octo trust [--yes]`: what this project brings that waits for the user's yes — MCP servers,
//! hooks, commands and skills that grant tools, Claude Code settings that allow — listed, and with
//! `--yes` trusted as the REPL's questions at start would (remembered for these exact files; a
//! change asks again). Headless runs (CI scripts, `octo -p`) then use them, as Claude Code's
//! `-p` uses a project's settings.

use crate::cli::Cli;
use crate::exit::EXIT_ERROR;
use crate::out;
use crate::sanitize::visible;
use octo_app::{Launcher, Session};
use std::process::ExitCode;

/// One kind of thing waiting for trust: its heading, its entries, and how to trust it.
struct Pending<'a> {
    heading: &'static str,
    entries: Vec<String>,
    trust: Box<dyn FnOnce() -> Result<(), String> + 'a>,
}

/// Lists what waits for the user's trust in this workspace; trusts it all with `yes`.
pub async fn run(launcher: &Launcher, cli: &Cli, yes: bool) -> anyhow::Result<ExitCode> {
    let session = match crate::launch::start(launcher, cli, true, None) {
        Ok(s) => s,
        Err(e) => {
            out::error(&e.to_string());
            return Ok(ExitCode::from(crate::launch::exit_code(&e)));
        }
    };
    let pending: Vec<Pending<'_>> = pending(&session).into_iter().filter(|p| !p.entries.is_empty()).collect();
    let code = if pending.is_empty() {
        out::status(&visible(&format!(
            "octo: nothing in {} waits for your trust",
            session.workspace().display()
        )));
        ExitCode::SUCCESS
    } else {
        let mut failed = false;
        for p in pending {
            println!("{}", p.heading);
            for e in &p.entries {
                println!("  {}", one_line(e));
            }
            if yes {
                match (p.trust)() {
                    Ok(()) => println!("  trusted"),
                    Err(why) => {
                        out::error(&visible(&why));
                        failed = true;
                    }
                }
            }
        }
        if !yes {
            out::status(
                "octo: none of this is used until you trust it: run `octo trust --yes` here to trust it all \
                 (remembered for these exact files; a change asks again), or answer the REPL's questions",
            );
            ExitCode::SUCCESS
        } else if failed {
            ExitCode::from(EXIT_ERROR)
        } else {
            ExitCode::SUCCESS
        }
    };
    crate::launch::stop_processes(&session);
    Ok(code)
}

/// Each kind of thing the project brings, with what waits in it (possibly nothing).
fn pending(session: &Session) -> Vec<Pending<'_>> {
    let servers: Vec<octo_app::McpServerStatus> =
        session.servers().mcp().into_iter().filter(|s| s.state == "needs approval").collect();
    let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    vec![
        Pending {
            heading: "MCP servers the project configures (started once approved):",
            entries: servers
                .iter()
                .map(|s| match s.definition.is_empty() {
                    true => format!("{}: {}", s.name, s.target),
                    false => format!("{}: {}, with {}", s.name, s.target, s.definition),
                })
                .collect(),
            trust: Box::new(move || {
                names.iter().try_for_each(|n| session.servers().approve_mcp(n).map_err(|e| e.to_string()))
            }),
        },
        Pending {
            heading: "hooks the project configures (commands octo runs at its seats):",
            entries: session.trust().untrusted_hooks(),
            trust: Box::new(|| session.trust().trust_hooks().map_err(|e| e.to_string())),
        },
        Pending {
            heading: "the project's commands and skills would run these tools without asking while active:",
            entries: session.trust().untrusted_grants(),
            trust: Box::new(|| session.trust().trust_grants().map_err(|e| e.to_string())),
        },
        Pending {
            heading: "the project's Claude Code settings allow these without asking:",
            entries: session.trust().untrusted_settings(),
            trust: Box::new(|| session.trust().trust_settings().map_err(|e| e.to_string())),
        },
    ]
}

/// An entry on one line, as it is shown: escapes made visible, line breaks written `\n`, so a
/// file's text cannot add lines of its own to the listing.
fn one_line(entry: &str) -> String {
    visible(&entry.replace('\r', "\\r").replace('\n', "\\n"))
}
