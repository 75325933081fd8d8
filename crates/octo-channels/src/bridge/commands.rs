//! Chat commands: `/new`, `/stop`, `/status`, `/mode`, `/model`, `/file`, `/help`. Those that
//! change or read from a session are the owner's.

use super::{lock, Bridge, Chat, HELP};
use octo_app::Mode;
use std::io::Read;
use std::sync::Arc;

impl Bridge {
    /// Runs `text` as a command if it is one; whether it was.
    pub(super) async fn command(
        &self,
        chat: &str,
        user: &str,
        text: &str,
        existing: Option<&Arc<Chat>>,
    ) -> bool {
        let trimmed = text.trim();
        let (word, arg) = trimmed.split_once(char::is_whitespace).unwrap_or((trimmed, ""));
        let arg = arg.trim();
        if !word.starts_with('/') {
            return false;
        }
        // `/status@my_bot` in a Telegram group is `/status`.
        let word = word.split('@').next().unwrap_or(word);
        let owner_only = matches!(word, "/new" | "/stop" | "/mode" | "/model" | "/file");
        if owner_only && existing.is_some_and(|c| c.owner != user) {
            self.say(chat, "Only the person who started this chat's session can do that.").await;
            return true;
        }
        let reply = match word {
            "/start" | "/help" => HELP.to_owned(),
            "/new" => {
                let old = lock(&self.chats).remove(chat);
                if let Some(c) = old {
                    // Stopped for good: the running turn and anything queued behind it.
                    c.session.close();
                    c.closed.notify_one();
                }
                "Started over: the next message begins a new session.".to_owned()
            }
            "/stop" => {
                if let Some(c) = existing {
                    c.session.abort();
                }
                "Stopped.".to_owned()
            }
            "/status" => match existing {
                Some(c) => {
                    let s = c.session.status();
                    let cost = s.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
                    format!(
                        "model {}, mode {}, {} turns, {} tokens of context{cost}",
                        s.model, s.mode, s.turns, s.context_tokens
                    )
                }
                None => "No session yet: send a task.".into(),
            },
            "/mode" => match (existing, arg.parse::<Mode>()) {
                (_, Ok(Mode::Auto)) => "Auto mode is not available from a chat.".to_owned(),
                (Some(c), Ok(m)) => {
                    c.session.set_mode(m);
                    format!("Mode: {m}")
                }
                (None, Ok(_)) => "No session yet: send a task first.".to_owned(),
                (_, Err(e)) => e.to_string(),
            },
            "/model" => match existing {
                Some(c) => match c.session.set_model(arg, self.launcher.credentials(), self.launcher.env()) {
                    Ok(label) => format!("Model: {label}"),
                    Err(e) => e.to_string(),
                },
                None => "No session yet: send a task first.".to_owned(),
            },
            "/file" => match self.send_file(chat, arg).await {
                Ok(()) => return true,
                Err(why) => why,
            },
            _ => return false,
        };
        self.say(chat, &reply).await;
        true
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
