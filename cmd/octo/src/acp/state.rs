//! What the protocol's handlers share: the live sessions by id, the launcher and flags, and the
//! commands offered.

use crate::cli::Cli;
use octo_app::{Launcher, Session};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// An editor, as the command table sees it: it shows a command's reply and nothing more (it
/// starts sessions and cancels turns itself, and a prompt cannot stop to ask a yes before a
/// command acts).
pub(super) const FRONT: octo_app::commands::FrontEnd =
    octo_app::commands::FrontEnd::new("an editor", octo_app::commands::Capabilities::NONE);

/// One ACP session: the octo session behind it, and whether a prompt is running.
pub(crate) struct Live {
    pub session: Session,
    pub busy: AtomicBool,
    /// MCP servers whose failure the editor was told of.
    pub told: Mutex<Vec<String>>,
}

/// What every handler shares.
pub(crate) struct Acp {
    pub launcher: Launcher,
    pub cli: Cli,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
    /// The client offered `fs/read_text_file`: files are read through its buffers.
    pub client_reads: AtomicBool,
    /// The client offered `fs/write_text_file`: edits of existing files land in its buffers.
    pub client_writes: AtomicBool,
}

impl Acp {
    pub fn new(launcher: Launcher, cli: Cli) -> Self {
        Self {
            launcher,
            cli,
            sessions: Mutex::new(HashMap::new()),
            client_reads: AtomicBool::new(false),
            client_writes: AtomicBool::new(false),
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    pub fn insert(&self, id: String, session: Session) -> Arc<Live> {
        let live = Arc::new(Live { session, busy: AtomicBool::new(false), told: Mutex::new(Vec::new()) });
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).insert(id, Arc::clone(&live));
        live
    }

    pub fn remove(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(id)
    }

    /// Every session, for the end of the connection.
    pub fn all(&self) -> Vec<Arc<Live>> {
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

    /// MCP servers that failed and were not yet named to the editor, each with why.
    pub fn new_failures(&self) -> Vec<String> {
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        for s in self.session.servers().mcp().into_iter().filter(|s| s.state == "failed") {
            if !told.contains(&s.name) {
                out.push(format!(
                    "the MCP server `{}` could not be used: {}",
                    s.name,
                    s.error.unwrap_or_default()
                ));
                told.push(s.name);
            }
        }
        out
    }
}
