//! Chat commands: the shared vocabulary of `octo-app` that a chat can render, run on the chat's
//! session and sent back as text, and the chat's own `/file PATH` (and Telegram's `/start`).
//! Those that change the session, and `/file`, are the owner's.

use super::{lock, Bridge, Chat};
use octo_app::commands::{self, CommandSpec, Parsed, SessionCommand, Takes};
use octo_app::Mode;
use std::io::Read;
use std::sync::Arc;

/// The shared commands a chat offers.
const OFFERED: &[&str] = &[
    "/help", "/status", "/cost", "/context", "/todos", "/tools", "/model", "/mode", "/plan", "/build",
    "/compact", "/new", "/stop",
];

/// The chat's own commands.
const OWN: &[CommandSpec] = &[CommandSpec {
    name: "/file",
    usage: "/file PATH",
    about: "send a file of the workspace",
    takes: Takes::Text,
}];

/// `/help` in a chat.
fn help() -> String {
    let mut out = vec!["Send a task and octo works on it in this chat's session.".to_owned()];
    for c in commands::offered(OFFERED).into_iter().chain(OWN) {
        out.push(format!("{} — {}", c.usage, c.about));
    }
    out.join("\n")
}

const OWNER_ONLY: &str = "Only the person who started this chat's session can do that.";

impl Bridge {
    /// Runs `text` as a command if it is one; whether it was.
    pub(super) async fn command(
        &self,
        chat: &str,
        user: &str,
        text: &str,
        existing: Option<&Arc<Chat>>,
    ) -> bool {
        let not_owner = existing.is_some_and(|c| c.owner != user);
        let reply = match commands::parse(text) {
            Parsed::Message => return false,
            Parsed::Invalid(why) => why,
            // `/file@my_bot` in a Telegram group is `/file`.
            Parsed::Other(word, arg) => match word.split('@').next().unwrap_or(word) {
                "/start" => help(),
                "/file" if not_owner => OWNER_ONLY.to_owned(),
                "/file" => match self.send_file(chat, arg).await {
                    Ok(()) => return true,
                    Err(why) => why,
                },
                _ => return false,
            },
            Parsed::Command(c) if !OFFERED.contains(&c.name()) => {
                format!("{} is not available in a chat; /help lists what is.", c.name())
            }
            Parsed::Command(c) if c.changes_session() && not_owner => OWNER_ONLY.to_owned(),
            Parsed::Command(c) => self.shared(chat, c, existing).await,
        };
        self.say(chat, &reply).await;
        true
    }

    /// A shared command on the chat's session.
    async fn shared(&self, chat: &str, command: SessionCommand, existing: Option<&Arc<Chat>>) -> String {
        match (command, existing) {
            (SessionCommand::Help, _) => help(),
            (SessionCommand::New, _) => {
                let old = lock(&self.chats).remove(chat);
                if let Some(c) = old {
                    // Stopped for good: the running turn and anything queued behind it.
                    c.session.close();
                    c.closed.notify_one();
                }
                "Started over: the next message begins a new session.".to_owned()
            }
            (SessionCommand::Mode(Some(Mode::Auto)), _) => {
                "Auto mode is not available from a chat.".to_owned()
            }
            (SessionCommand::Stop, None) => "Nothing is running.".to_owned(),
            (SessionCommand::Status, None) => "No session yet: send a task.".to_owned(),
            (_, None) => "No session yet: send a task first.".to_owned(),
            (command, Some(c)) => match c.session.command(&self.launcher, command).await {
                Ok(reply) => reply.text(),
                Err(e) => e.to_string(),
            },
        }
    }

    /// Sends a file of the workspace (`/file PATH`): a regular file whose real path is inside
    /// it, within the platform's size limit, read through the handle that was checked.
    async fn send_file(&self, chat: &str, arg: &str) -> Result<(), String> {
        if arg.is_empty() {
            return Err("Usage: /file PATH (a file in the workspace)".into());
        }
        let root = self.config.workspace.clone();
        let limit = self.platform.file_limit();
        let name_of = arg.to_owned();
        let read = tokio::task::spawn_blocking(move || read_workspace_file(&root, &name_of, limit))
            .await
            .map_err(|e| e.to_string())?;
        let (name, bytes) = read.map_err(|why| why.replace("{platform}", self.platform.name()))?;
        self.platform.send_file(chat, &name, bytes).await.map_err(|e| format!("Could not send {arg}: {e}"))
    }
}

/// The file `arg` names under `root`: its name and bytes.
fn read_workspace_file(root: &std::path::Path, arg: &str, limit: u64) -> Result<(String, Vec<u8>), String> {
    let root = root.canonicalize().map_err(|e| format!("The workspace is not readable: {e}"))?;
    let path = root.join(arg).canonicalize().map_err(|_| format!("No file {arg} in the workspace."))?;
    if !path.starts_with(&root) {
        return Err(format!("{arg} is outside the workspace."));
    }
    let file = std::fs::File::open(&path).map_err(|e| format!("Could not read {arg}: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("Could not read {arg}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{arg} is not a file."));
    }
    let too_big = || format!("{arg} is over {} KB, the most {{platform}} takes.", limit / 1024);
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| format!("Could not read {arg}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
    Ok((name, bytes))
}
