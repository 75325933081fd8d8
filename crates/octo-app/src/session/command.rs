//! The session's shared commands: one call, a typed reply (the table and its verbs are in
//! [`crate::commands`]).

use super::facade::Session;
use crate::commands::{CommandError, Reply, SessionCommand};
use crate::launcher::Launcher;

impl Session {
    /// Runs a shared command (`/status`, `/mode plan`, …; see [`crate::commands`]) and returns
    /// what it amounts to. `launcher` is the one the session came from (for `/model`'s keys and
    /// the saved sessions of `/history` and `/resume`).
    pub async fn command(&self, launcher: &Launcher, command: SessionCommand) -> Result<Reply, CommandError> {
        crate::commands::run::run(self, launcher, command).await
    }
}
