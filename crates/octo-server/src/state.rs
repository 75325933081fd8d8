//! What every handler shares, and the limits they hold to.

use crate::hub::Hub;
use std::path::PathBuf;

/// The largest request body (a prompt with pasted files and a few images fits; a runaway upload
/// does not).
pub const MAX_BODY: usize = 32 << 20;

/// What every handler shares.
pub struct AppState {
    /// The sessions.
    pub hub: Hub,
    /// The access token.
    pub token: String,
    /// Host names (with port) the server answers to; empty: any (remote mode).
    pub hosts: Vec<String>,
    /// Workspace roots.
    pub roots: Vec<PathBuf>,
    /// One-time login codes and the browser sessions they were exchanged for.
    pub logins: crate::login::Logins,
}

impl AppState {
    /// The roots as real paths (those that exist).
    pub fn real_roots(&self) -> Vec<PathBuf> {
        self.roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).collect()
    }
}
