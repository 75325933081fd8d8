//! The shared commands as typed values ([`SessionCommand`]) and the readers of their arguments
//! (`/rewind`'s words, `/permissions`' verbs …), which the table's rows use. A leaf: it knows no
//! other room of the commands.

use crate::permissions::{Action, Mode};

/// A command of the shared vocabulary, with its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionCommand {
    /// `/help`.
    Help,
    /// `/status`.
    Status,
    /// `/model [endpoint:model]`.
    Model(Option<String>),
    /// `/mode [MODE]`.
    Mode(Option<Mode>),
    /// `/plan`.
    Plan,
    /// `/build`.
    Build,
    /// `/permissions [allow|ask|deny RULE | remove RULE]`.
    Permissions(PermissionsChange),
    /// `/tools`.
    Tools,
    /// `/mcp`.
    Mcp,
    /// `/lsp`: the language servers.
    Lsp,
    /// `/skills [reload]`.
    Skills {
        /// Read the folders again.
        reload: bool,
    },
    /// `/remember TEXT`.
    Remember(String),
    /// `/memory [QUERY | edit | --here]`.
    Memory(MemoryAction),
    /// `/dream`.
    Dream,
    /// `/agents`.
    Agents,
    /// `/hooks`.
    Hooks,
    /// `/todos`.
    Todos,
    /// `/cost`.
    Cost,
    /// `/context`.
    Context,
    /// `/export [file]`.
    Export(Option<String>),
    /// `/init`.
    Init,
    /// `/review [target]`: the argument as typed (read by [`crate::review::ReviewTarget::parse`]).
    Review(String),
    /// `/compact [focus]`.
    Compact(Option<String>),
    /// `/rewind [N] [code|conversation|both]`: the turns to go back over (`None`: not said; a
    /// front end may let the user pick, else 1) and what to put back.
    Rewind(Option<usize>, crate::session::RewindWhat),
    /// `/history`.
    History,
    /// `/resume [query]`.
    Resume(Option<String>),
    /// `/clear`.
    Clear,
    /// `/new`.
    New,
    /// `/stop`.
    Stop,
}

/// What `/permissions` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionsChange {
    /// Show the mode and the rules.
    List,
    /// Add a rule for this session.
    Add(Action, String),
    /// Remove the rules written so.
    Remove(String),
}

/// What `/memory` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryAction {
    /// Show both indexes.
    Show,
    /// Search the entries and index lines.
    Search(String),
    /// Open the workspace index in the user's editor.
    Edit,
    /// Keep this workspace's memory in its repository from the next session on.
    Here,
}

const PERMISSIONS_USAGE: &str =
    "Usage: /permissions [allow|ask|deny RULE | remove RULE], e.g. /permissions allow terminal(cargo test*)";

impl SessionCommand {
    /// The command's name (`/status`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Help => "/help",
            Self::Status => "/status",
            Self::Model(_) => "/model",
            Self::Mode(_) => "/mode",
            Self::Plan => "/plan",
            Self::Build => "/build",
            Self::Permissions(_) => "/permissions",
            Self::Tools => "/tools",
            Self::Mcp => "/mcp",
            Self::Lsp => "/lsp",
            Self::Skills { .. } => "/skills",
            Self::Remember(_) => "/remember",
            Self::Memory(_) => "/memory",
            Self::Dream => "/dream",
            Self::Agents => "/agents",
            Self::Hooks => "/hooks",
            Self::Todos => "/todos",
            Self::Cost => "/cost",
            Self::Context => "/context",
            Self::Export(_) => "/export",
            Self::Review(_) => "/review",
            Self::Init => "/init",
            Self::Compact(_) => "/compact",
            Self::Rewind(..) => "/rewind",
            Self::History => "/history",
            Self::Resume(_) => "/resume",
            Self::Clear => "/clear",
            Self::New => "/new",
            Self::Stop => "/stop",
        }
    }

    /// Whether it changes the session (the mode, the model, the rules, the conversation, the
    /// files) rather than only reading it; a shared chat leaves those to the session's owner.
    pub fn changes_session(&self) -> bool {
        !matches!(
            self,
            Self::Help
                | Self::Status
                | Self::Model(None)
                | Self::Mode(None)
                | Self::Permissions(PermissionsChange::List)
                | Self::Tools
                | Self::Mcp
                | Self::Lsp
                | Self::Skills { reload: false }
                | Self::Memory(MemoryAction::Show | MemoryAction::Search(_))
                | Self::Agents
                | Self::Hooks
                | Self::Todos
                | Self::Cost
                | Self::History
        )
    }
}

/// `/rewind`'s words: a number of turns and what to put back, in either order.
pub(super) fn rewind(arg: &str) -> Result<SessionCommand, String> {
    use crate::session::RewindWhat;
    let (mut n, mut what) = (None, RewindWhat::Both);
    for word in arg.split_whitespace() {
        match word {
            "code" | "files" => what = RewindWhat::Code,
            "conversation" | "chat" => what = RewindWhat::Conversation,
            "both" | "all" => what = RewindWhat::Both,
            w => match w.parse::<usize>() {
                Ok(k) if k >= 1 && n.is_none() => n = Some(k),
                _ => {
                    return Err(format!(
                    "/rewind takes a number of turns (at least 1) and code, conversation or both (got `{w}`)"
                ))
                }
            },
        }
    }
    Ok(SessionCommand::Rewind(n, what))
}

/// `/skills [reload]`.
pub(super) fn skills(arg: &str) -> Result<SessionCommand, String> {
    match arg {
        "" => Ok(SessionCommand::Skills { reload: false }),
        "reload" => Ok(SessionCommand::Skills { reload: true }),
        other => Err(format!("`/skills {other}` is not a skills command")),
    }
}

/// `/memory [QUERY | edit | --here]`.
pub(super) fn memory(arg: &str) -> MemoryAction {
    match arg {
        "" => MemoryAction::Show,
        "edit" => MemoryAction::Edit,
        "--here" => MemoryAction::Here,
        query => MemoryAction::Search(query.to_owned()),
    }
}

/// `/permissions [allow|ask|deny RULE | remove RULE]`.
pub(super) fn permissions(arg: &str) -> Result<PermissionsChange, String> {
    if arg.is_empty() {
        return Ok(PermissionsChange::List);
    }
    let (verb, rule) = match arg.split_once(char::is_whitespace) {
        Some((v, r)) => (v, r.trim()),
        None => (arg, ""),
    };
    let action = match verb {
        "allow" => Action::Allow,
        "ask" => Action::Ask,
        "deny" => Action::Deny,
        "remove" if !rule.is_empty() => return Ok(PermissionsChange::Remove(rule.to_owned())),
        _ => return Err(format!("`/permissions {arg}` is not a permissions command. {PERMISSIONS_USAGE}")),
    };
    if rule.is_empty() {
        return Err(format!("/permissions {verb} needs a rule. {PERMISSIONS_USAGE}"));
    }
    Ok(PermissionsChange::Add(action, rule.to_owned()))
}

/// The usage line `/permissions` errors end with.
pub(crate) fn permissions_usage() -> &'static str {
    PERMISSIONS_USAGE
}
