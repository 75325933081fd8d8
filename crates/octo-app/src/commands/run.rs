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

/// Runs a shared command on `session` ([`Session::command`]).
pub(crate) async fn run(
    session: &Session,
    launcher: &Launcher,
    command: SessionCommand,
) -> Result<Reply, CommandError> {
    Ok(match command {
        SessionCommand::Help => Reply::Help(COMMANDS.iter().collect()),
        SessionCommand::Status => Reply::Status(Box::new(status_report(session))),
        SessionCommand::Model(None) => Reply::Model { label: session.status().model, switched: false },
        SessionCommand::Model(Some(choice)) => {
            let label = session.conversation().set_model(&choice, launcher.credentials(), launcher.env())?;
            Reply::Model { label, switched: true }
        }
        SessionCommand::Mode(None) => Reply::Mode(session.status().mode),
        SessionCommand::Mode(Some(m)) => {
            session.permissions().set_mode(m);
            Reply::Mode(m)
        }
        SessionCommand::Plan => {
            session.permissions().set_mode(Mode::Plan);
            Reply::Plan
        }
        SessionCommand::Build => {
            let configured = session.config().map(|c| c.permission_mode.value).unwrap_or_default();
            let m = if configured == Mode::Plan { Mode::Default } else { configured };
            session.permissions().set_mode(m);
            Reply::Mode(m)
        }
        SessionCommand::Permissions(change) => permissions_command(session, change)?,
        SessionCommand::Tools => Reply::Tools(session.tools().names()),
        SessionCommand::Mcp => Reply::Mcp(session.servers().mcp()),
        SessionCommand::Lsp => Reply::Lsp(session.servers().lsp()),
        SessionCommand::Skills { reload: false } => Reply::Skills(session.skills().catalog()),
        SessionCommand::Skills { reload: true } => {
            let notices = session.skills().reload()?;
            Reply::SkillsReloaded { notices, count: session.skills().catalog().len() }
        }
        SessionCommand::Remember(text) => Reply::Remembered(session.memories().remember(&text)?),
        SessionCommand::Memory(action) => memory_command(session, action)?,
        SessionCommand::Dream => Reply::Dream(Box::new(session.memories().dream().await?)),
        SessionCommand::Agents => agents_reply(session),
        SessionCommand::Hooks => Reply::Hooks(session.trust().hooks()),
        SessionCommand::Todos => Reply::Todos(session.conversation().todos()),
        SessionCommand::Cost => Reply::Cost(Box::new(session.status())),
        SessionCommand::Init => Reply::InitProposal(Box::new(crate::init::propose(session).await?)),
        SessionCommand::Review(arg) => {
            let target = crate::review::ReviewTarget::parse(&arg, session.workspace())?;
            match crate::review::run(session, &target).await? {
                Some(outcome) => Reply::Review(Box::new(outcome)),
                None => Reply::NothingToReview(target.describe()),
            }
        }
        SessionCommand::Context => Reply::Context(Box::new(session.conversation().context_report().await?)),
        SessionCommand::Export(path) => {
            let (path, messages) = session.conversation().export(path.as_deref()).await?;
            Reply::Exported { path, messages }
        }
        SessionCommand::Compact(focus) => compact_now(session, focus).await?,
        SessionCommand::Rewind(n, what) => {
            Reply::Rewind(Box::new(session.conversation().rewind_plan(n.unwrap_or(1), what).await?))
        }
        SessionCommand::History => {
            let sessions = launcher.sessions().list(Some(session.workspace())).map_err(LaunchError::from)?;
            Reply::History { sessions, current: session.conversation().id() }
        }
        SessionCommand::Resume(query) => resume_command(session, launcher, query.as_deref())?,
        SessionCommand::Clear | SessionCommand::New => {
            session.conversation().clear()?;
            Reply::Cleared
        }
        SessionCommand::Stop => {
            session.abort();
            Reply::Stopped
        }
    })
}

/// What `/status` shows.
pub(crate) fn status_report(session: &Session) -> StatusReport {
    let mcp = session.servers().mcp();
    StatusReport {
        status: session.status(),
        session_id: session.conversation().id(),
        tools: session.tools().names().len(),
        mcp: (mcp.iter().filter(|s| s.state == "ready").count(), mcp.len()),
        worktree: crate::worktree::linked(session.workspace()),
    }
}

fn permissions_command(session: &Session, change: PermissionsChange) -> Result<Reply, CommandError> {
    match change {
        PermissionsChange::List => Ok(Reply::Permissions {
            mode: session.status().mode,
            rules: session.permissions().rules().describe(),
            granted: session.permissions().granted(),
        }),
        PermissionsChange::Remove(rule) => match session.permissions().remove_rule(&rule) {
            0 => Err(CommandError::NoSuchRule(rule)),
            count => Ok(Reply::RulesRemoved { rule, count }),
        },
        PermissionsChange::Add(action, text) => {
            let rule_error = |reason: String| CommandError::Rule { reason, usage: permissions_usage() };
            let rule = Rule::parse(&text, action, "/permissions").map_err(|e| rule_error(e.to_string()))?;
            session.permissions().add_rule(rule).map_err(|e| rule_error(e.to_string()))?;
            Ok(Reply::RuleAdded { verb: action.as_str(), rule: text })
        }
    }
}

fn memory_command(session: &Session, action: MemoryAction) -> Result<Reply, CommandError> {
    let memory = session.memories().store().ok_or(MemoryActionError::NoMemory)?;
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
        MemoryAction::Here => Reply::MemoryHere(session.memories().here()?),
    })
}

fn agents_reply(session: &Session) -> Reply {
    let Some(spawner) = session.tools().subagents() else { return Reply::NoAgents };
    let types =
        spawner.agents().iter().map(|a| (a.name.clone(), a.source.clone(), a.description.clone())).collect();
    Reply::Agents { types, children: spawner.children() }
}

/// Compacts now and waits (at most five minutes) for the result.
async fn compact_now(session: &Session, focus: Option<String>) -> Result<Reply, CommandError> {
    let mut rx = session.subscribe();
    session.conversation().compact(focus)?;
    let mut notices = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(300), rx.recv()).await {
            Ok(Ok(AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, archive })) => {
                return Ok(Reply::Compacted { tokens_after, messages_folded, reclaimed, archive, notices })
            }
            Ok(Ok(AgentEvent::Notice { message })) => notices.push(message),
            Ok(Ok(_) | Err(RecvError::Lagged(_))) => {}
            Ok(Err(RecvError::Closed)) | Err(_) => return Ok(Reply::CompactUnfinished),
        }
    }
}

/// `/resume [query]`: a number from `/history`, an id prefix or title words.
fn resume_command(
    session: &Session,
    launcher: &Launcher,
    query: Option<&str>,
) -> Result<Reply, CommandError> {
    let workspace = session.workspace();
    let list = launcher.sessions().list(Some(workspace)).map_err(LaunchError::from)?;
    let Some(query) = query.map(str::trim).filter(|q| !q.is_empty()) else {
        return Ok(Reply::PickSession(list));
    };
    if let Some(s) = query.parse::<usize>().ok().and_then(|n| list.get(n.wrapping_sub(1))) {
        return Ok(Reply::Resume(s.id.clone()));
    }
    Ok(Reply::Resume(launcher.find_session(query, workspace)?))
}
