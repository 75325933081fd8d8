//! Chat commands: the shared commands the table offers a chat (one that can start over and stop
//! a turn by command; those needing a terminal or a yes first are refused with the reason), run
//! on the chat's session and sent back as text; the chat's own `/file PATH` (and Telegram's
//! `/start`); and skills and custom commands, run where nothing needs a yes. Those that change
//! the session, and `/file`, are the owner's.

use super::slash::Slash;
use super::{lock, Bridge, Chat};
use octo_app::commands::{Capabilities, CommandSpec, FrontEnd, Parsed, SessionCommand, Takes};
use octo_app::Mode;
use std::io::Read;
use std::sync::Arc;

/// A chat, as the command table sees it.
pub(super) const FRONT: FrontEnd =
    FrontEnd::new("a chat", Capabilities::START_OVER.and(Capabilities::STOP_BY_COMMAND));

/// The chat's own commands.
const OWN: &[CommandSpec] = &[CommandSpec {
    name: "/file",
    aliases: &[],
    usage: "/file PATH",
    about: "send a file of the workspace",
    takes: Takes::Text,
    needs: Capabilities::NONE,
    parse: |_| Err("read by the chat itself".to_owned()),
}];

/// `/help` in a chat.
fn help() -> String {
    let mut out = vec!["Send a task and octo works on it in this chat's session.".to_owned()];
    out.extend(FRONT.help_lines());
    out.extend(OWN.iter().map(|c| format!("{} — {}", c.usage, c.about)));
    out.push("/name args — a skill or custom command of the workspace".to_owned());
    out.join("\n")
}

const OWNER_ONLY: &str = "Only the person who started this chat's session can do that.";

impl Bridge {
    /// Runs `text` as a command if it is one.
    pub(super) async fn command<'a>(
        &self,
        chat: &str,
        user: &str,
        text: &'a str,
        existing: Option<&Arc<Chat>>,
    ) -> Slash<'a> {
        let not_owner = existing.is_some_and(|c| c.owner != user);
        let reply = match FRONT.read(text) {
            Parsed::Message => return Slash::Message,
            Parsed::Invalid(why) => why,
            Parsed::Refused(why) => format!("{why}. /help lists what a chat offers."),
            // `/file@my_bot` in a Telegram group is `/file`.
            Parsed::Other(word, arg) => match word.split('@').next().unwrap_or(word) {
                "/start" => help(),
                "/file" if not_owner => OWNER_ONLY.to_owned(),
                "/file" => match self.send_file(chat, arg).await {
                    Ok(()) => return Slash::Handled,
                    Err(why) => why,
                },
                word => return Slash::Other(word, arg),
            },
            Parsed::Command(c) if c.changes_session() && not_owner => OWNER_ONLY.to_owned(),
            Parsed::Command(c) => self.shared(chat, c, existing).await,
        };
        self.say(chat, &reply).await;
        Slash::Handled
    }

    /// `/word args` on the chat's session: a skill or custom command becomes the prompt (when
    /// nothing in it needs a yes); anything else is answered with the nearest names.
    pub(super) async fn skill(
        &self,
        chat: &str,
        c: &Chat,
        word: &str,
        arg: &str,
    ) -> Option<octo_app::skills::Prepared> {
        let cancel = octo_app::CancellationToken::new();
        match c.session.skills().invoke_unattended(word, arg, "in a chat", cancel).await {
            Some(Ok(prepared)) => return Some(prepared),
            Some(Err(e)) => self.say(chat, &e.to_string()).await,
            None => {
                let skills: Vec<String> = c
                    .session
                    .skills()
                    .catalog()
                    .iter()
                    .filter(|s| s.user_invocable)
                    .map(|s| format!("/{}", s.name))
                    .collect();
                let names = skills.iter().map(String::as_str).chain(OWN.iter().map(|o| o.name));
                self.say(chat, &FRONT.unknown(word, names)).await;
            }
        }
        None
    }

    /// A shared command on the chat's session.
    async fn shared(&self, chat: &str, command: SessionCommand, existing: Option<&Arc<Chat>>) -> String {
        match (command, existing) {
            (SessionCommand::Help, _) => help(),
            (SessionCommand::New | SessionCommand::Clear, _) => {
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
