//! `octo acp`: octo as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
//! Neovim, Emacs). A front end like the others: each ACP session is one launcher call, each
//! prompt one turn whose events become `session/update` notifications, approvals become
//! `session/request_permission`, and `/commands` run through the shared vocabulary. Nothing but
//! protocol messages goes to stdout; notes go to stderr.
//!
//! The protocol library runs one dispatch loop: a prompt's turn runs in a task of its own, so
//! `session/cancel` and other requests are answered while it streams.

mod buffers;
mod calls;
mod content;
mod handlers;
mod replay;
mod state;
mod turn;

use crate::cli::Cli;
use octo_app::Launcher;
use state::Acp;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs `octo acp` until the client closes stdin.
pub fn run(launcher: Launcher, cli: &Cli) -> anyhow::Result<ExitCode> {
    crate::exit::runtime()?.block_on(async move {
        let acp = Arc::new(Acp::new(launcher, cli.clone()));
        let result = handlers::serve(Arc::clone(&acp)).await;
        // The client went away (or the connection failed): running turns stop, what follows
        // them is done, and nothing the sessions started outlives octo.
        for live in acp.all() {
            live.session.abort();
            live.session.settle().await;
            let _ = live.session.tools().stop_processes();
        }
        match result {
            Ok(()) => Ok(ExitCode::SUCCESS),
            // The editor closed its end while octo was still writing: it went away, nothing failed.
            Err(e) if format!("{e:?}").contains("Broken pipe") => Ok(ExitCode::SUCCESS),
            Err(e) => {
                eprintln!("octo acp: {e}");
                Ok(ExitCode::from(crate::exit::EXIT_ERROR))
            }
        }
    })
}
