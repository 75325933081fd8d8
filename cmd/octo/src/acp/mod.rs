//! `octo acp`: octo as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
//! Neovim, Emacs). A front end like the others: each ACP session is one launcher call, each
//! prompt one turn whose events become `session/update` notifications, approvals become
//! `session/request_permission`, and `/commands` run through the shared vocabulary. Nothing but
//! protocol messages goes to stdout; notes go to stderr.
//!
//! The protocol library runs one dispatch loop: a prompt's turn runs in a task of its own, so
//! `session/cancel` and other requests are answered while it streams.

mod content;
mod handlers;
mod replay;
mod turn;

use crate::cli::Cli;
use octo_app::{Launcher, Session};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One ACP session: the octo session behind it, and whether a prompt is running.
pub(crate) struct Live {
    pub session: Session,
    pub busy: AtomicBool,
}

/// What every handler shares.
pub(crate) struct Acp {
    pub launcher: Launcher,
    pub cli: Cli,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
}

impl Acp {
    fn new(launcher: Launcher, cli: Cli) -> Self {
        Self { launcher, cli, sessions: Mutex::new(HashMap::new()) }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    pub fn insert(&self, id: String, session: Session) -> Arc<Live> {
        let live = Arc::new(Live { session, busy: AtomicBool::new(false) });
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).insert(id, Arc::clone(&live));
        live
    }

    pub fn remove(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id)
    }

    /// Every session, for the end of the connection.
    fn all(&self) -> Vec<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, l)| l).collect()
    }
}

impl Live {
    /// Marks a prompt running; `false` when one already is.
    pub fn start_prompt(&self) -> bool {
        !self.busy.swap(true, Ordering::SeqCst)
    }

    pub fn end_prompt(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }
}

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
            let _ = live.session.stop_processes();
        }
        match result {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(e) => {
                eprintln!("octo acp: {e}");
                Ok(ExitCode::from(crate::exit::EXIT_ERROR))
            }
        }
    })
}
