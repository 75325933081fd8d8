//! Running a shared command on a session: one call, a typed reply. Front ends only render it
//! (and, for the few that need a yes first — `/dream`, `/rewind` — ask, then call the
//! session's verb that carries it out).

use super::command::{permissions_usage, MemoryAction, PermissionsChange, SessionCommand};
use super::reply::{Reply, StatusReport};
use super::spec::COMMANDS;
use crate::launcher::{LaunchError, Launcher};
use crate::memory::MemoryActionError;
use crate::permissions::{Mode, Rule};
use crate::session::{Session, SessionError};
use octo_agent::AgentEvent;
use std::time::Duration;
use thiserror::Error;
use tokio::sync::broadcast::error::RecvError;

/// Why a shared command did nothing; the message says what to do.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The session could not do it (it ended, the model cannot be used, …).
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A memory command failed.
    #[error(transparent)]
    Memory(#[from] MemoryActionError),
    /// The saved sessions could not be listed or found.
    #[error(transparent)]
    Sessions(#[from] LaunchError),
    /// `/permissions allow|ask|deny RULE` with a rule that does not parse or suit its tool.
    #[error("{reason}. {usage}")]
    Rule {
        /// What is wrong with the rule.
        reason: String,
        /// How to write one.
        usage: &'static str,
    },
    /// `/init` could not propose (or write) the file.
    #[error(transparent)]
    Init(#[from] crate::init::InitError),
    /// `/review` could not run.
    #[error(transparent)]
    Review(#[from] crate::review::ReviewError),
    /// `/export` could not write the file.
    #[error(transparent)]
    Export(#[from] crate::session::ExportError),
    /// `/permissions remove RULE` with no such rule.
    #[error("no rule `{0}` to remove; /permissions lists them")]
    NoSuchRule(String),
}

impl Session {
    /// Runs a shared command (`/status`, `/mode plan`, …; see [`crate::commands`]) and returns
    /// what it amounts to. `launcher` is the one the session came from (for `/model`'s keys and
    /// the saved sessions of `/history` and `/resume`).
    pub async fn command(&self, launcher: &Launcher, command: SessionCommand) -> Result<Reply, CommandError> {
        Ok(match command {
            SessionCommand::Help => Reply::Help(COMMANDS.iter().collect()),
            SessionCommand::Status => Reply::Status(Box::new(self.status_report())),
            SessionCommand::Model(None) => Reply::Model { label: self.status().model, switched: false },
            SessionCommand::Model(Some(choice)) => {
                let label = self.set_model(&choice, launcher.credentials(), launcher.env())?;
                Reply::Model { label, switched: true }
            }
            SessionCommand::Mode(None) => Reply::Mode(self.status().mode),
            SessionCommand::Mode(Some(m)) => {
                self.set_mode(m);
                Reply::Mode(m)
            }
            SessionCommand::Plan => {
                self.set_mode(Mode::Plan);
                Reply::Plan
            }
            SessionCommand::Build => {
                let configured = self.config().map(|c| c.permission_mode.value).unwrap_or_default();
                let m = if configured == Mode::Plan { Mode::Default } else { configured };
                self.set_mode(m);
                Reply::Mode(m)
            }
            SessionCommand::Permissions(change) => self.permissions_command(change)?,
            SessionCommand::Tools => Reply::Tools(self.tool_names()),
            SessionCommand::Mcp => Reply::Mcp(self.mcp_status()),
            SessionCommand::Lsp => Reply::Lsp(self.lsp_status()),
            SessionCommand::Skills { reload: false } => Reply::Skills(self.skills()),
            SessionCommand::Skills { reload: true } => {
                let notices = self.reload_skills()?;
                Reply::SkillsReloaded { notices, count: self.skills().len() }
            }
            SessionCommand::Remember(text) => Reply::Remembered(self.remember(&text)?),
            SessionCommand::Memory(action) => self.memory_command(action)?,
            SessionCommand::Dream => Reply::Dream(Box::new(self.dream().await?)),
            SessionCommand::Agents => self.agents_reply(),
            SessionCommand::Hooks => Reply::Hooks(self.hooks()),
            SessionCommand::Todos => Reply::Todos(self.todos()),
            SessionCommand::Cost => Reply::Cost(Box::new(self.status())),
            SessionCommand::Init => Reply::InitProposal(Box::new(self.init_proposal().await?)),
            SessionCommand::Review(arg) => {
                let target = crate::review::ReviewTarget::parse(&arg, self.workspace())?;
                match self.review(&target).await? {
                    Some(outcome) => Reply::Review(Box::new(outcome)),
                    None => Reply::NothingToReview(target.describe()),
                }
            }
            SessionCommand::Context => Reply::Context(Box::new(self.context_report().await?)),
            SessionCommand::Export(path) => {
                let (path, messages) = self.export(path.as_deref()).await?;
                Reply::Exported { path, messages }
            }
            SessionCommand::Compact(focus) => self.compact_now(focus).await?,
            SessionCommand::Rewind(n, what) => {
                Reply::Rewind(Box::new(self.rewind_plan(n.unwrap_or(1), what).await?))
            }
            SessionCommand::History => {
                let sessions = launcher.sessions().list(Some(self.workspace())).map_err(LaunchError::from)?;
                Reply::History { sessions, current: self.session_id() }
            }
            SessionCommand::Resume(query) => self.resume_command(launcher, query.as_deref())?,
            SessionCommand::Clear | SessionCommand::New => {
                self.clear()?;
                Reply::Cleared
            }
            SessionCommand::Stop => {
                self.abort();
                Reply::Stopped
            }
        })
    }

    /// What `/status` shows.
    pub fn status_report(&self) -> StatusReport {
        let mcp = self.mcp_status();
        StatusReport {
            status: self.status(),
            session_id: self.session_id(),
            tools: self.tool_names().len(),
            mcp: (mcp.iter().filter(|s| s.state == "ready").count(), mcp.len()),
            worktree: crate::worktree::linked(self.workspace()),
        }
    }

    fn permissions_command(&self, change: PermissionsChange) -> Result<Reply, CommandError> {
        match change {
            PermissionsChange::List => Ok(Reply::Permissions {
                mode: self.status().mode,
                rules: self.rules().describe(),
                granted: self.granted(),
            }),
            PermissionsChange::Remove(rule) => match self.remove_rule(&rule) {
                0 => Err(CommandError::NoSuchRule(rule)),
                count => Ok(Reply::RulesRemoved { rule, count }),
            },
            PermissionsChange::Add(action, text) => {
                let rule_error = |reason: String| CommandError::Rule { reason, usage: permissions_usage() };
                let rule =
                    Rule::parse(&text, action, "/permissions").map_err(|e| rule_error(e.to_string()))?;
                self.add_rule(rule).map_err(|e| rule_error(e.to_string()))?;
                Ok(Reply::RuleAdded { verb: action.as_str(), rule: text })
            }
        }
    }

    fn memory_command(&self, action: MemoryAction) -> Result<Reply, CommandError> {
        let memory = self.memory().ok_or(MemoryActionError::NoMemory)?;
        Ok(match action {
            MemoryAction::Show => Reply::Memory(
                [&memory.user, &memory.workspace]
                    .iter()
                    .map(|s| (s.label().to_owned(), s.index_path(), s.index()))
                    .collect(),
            ),
            MemoryAction::Search(query) => {
                let hits = memory
                    .search(&query, 10)
                    .into_iter()
                    .filter_map(|h| match (h.entry, h.line) {
                        (Some(e), _) => Some(format!(
                            "  {} ({}, {}, {}): {}",
                            e.name,
                            h.scope,
                            e.kind.as_str(),
                            e.updated,
                            e.description
                        )),
                        (None, Some(line)) => Some(format!("  {line} ({} index)", h.scope)),
                        (None, None) => None,
                    })
                    .collect();
                Reply::MemoryHits { query, hits }
            }
            MemoryAction::Edit => {
                let path = memory.workspace.index_path();
                if !path.exists() {
                    std::fs::create_dir_all(memory.workspace.dir())
                        .and_then(|()| std::fs::write(&path, octo_memory::index::empty()))
                        .map_err(|source| MemoryActionError::Io {
                            action: "create",
                            path: path.display().to_string(),
                            source,
                        })?;
                }
                Reply::EditMemory(path)
            }
            MemoryAction::Here => Reply::MemoryHere(self.memory_here()?),
        })
    }

    fn agents_reply(&self) -> Reply {
        let Some(spawner) = self.subagents() else { return Reply::NoAgents };
        let types = spawner
            .agents()
            .iter()
            .map(|a| (a.name.clone(), a.source.clone(), a.description.clone()))
            .collect();
        Reply::Agents { types, children: spawner.children() }
    }

    /// Compacts now and waits (at most five minutes) for the result.
    async fn compact_now(&self, focus: Option<String>) -> Result<Reply, CommandError> {
        let mut rx = self.subscribe();
        self.compact(focus)?;
        let mut notices = Vec::new();
        loop {
            match tokio::time::timeout(Duration::from_secs(300), rx.recv()).await {
                Ok(Ok(AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, archive })) => {
                    return Ok(Reply::Compacted {
                        tokens_after,
                        messages_folded,
                        reclaimed,
                        archive,
                        notices,
                    })
                }
                Ok(Ok(AgentEvent::Notice { message })) => notices.push(message),
                Ok(Ok(_) | Err(RecvError::Lagged(_))) => {}
                Ok(Err(RecvError::Closed)) | Err(_) => return Ok(Reply::CompactUnfinished),
            }
        }
    }

    /// `/resume [query]`: a number from `/history`, an id prefix or title words.
    fn resume_command(&self, launcher: &Launcher, query: Option<&str>) -> Result<Reply, CommandError> {
        let workspace = self.workspace();
        let list = launcher.sessions().list(Some(workspace)).map_err(LaunchError::from)?;
        let Some(query) = query.map(str::trim).filter(|q| !q.is_empty()) else {
            return Ok(Reply::PickSession(list));
        };
        if let Some(s) = query.parse::<usize>().ok().and_then(|n| list.get(n.wrapping_sub(1))) {
            return Ok(Reply::Resume(s.id.clone()));
        }
        Ok(Reply::Resume(launcher.find_session(query, workspace)?))
    }
}
