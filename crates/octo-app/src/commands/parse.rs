//! Reading `/word args` as a [`SessionCommand`], with the errors users see: a known command
//! with an argument it does not take is an error that shows its usage, never silently ignored.
//! Any other `/word` is left to the front end (a skill, a custom command, an MCP prompt, a
//! front end's own command); a line starting with `/ ` or a path goes to the model as text.

use super::spec::{find, CommandSpec, Takes};
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

/// A typed line, read as a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// A shared command with arguments it takes.
    Command(SessionCommand),
    /// A shared command with an argument it does not take: the message says what is wrong and
    /// shows the usage.
    Invalid(String),
    /// A shared command the front end that read the line cannot offer: why, and where it can be
    /// run (see [`super::FrontEnd::read`]).
    Refused(String),
    /// Another `/word` and its argument: a skill, a custom command, an MCP prompt, a front end's
    /// own command, or unknown.
    Other(&'a str, &'a str),
    /// Not a command: the line goes to the model.
    Message,
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

/// Reads `line` as a command. `/status@bot` (a chat group's spelling) is `/status`.
pub fn parse(line: &str) -> Parsed<'_> {
    let line = line.trim();
    if !line.starts_with('/') {
        return Parsed::Message;
    }
    let (word, arg) = match line.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (line, ""),
    };
    let name = word.split('@').next().unwrap_or(word);
    let Some(spec) = find(name) else {
        // `/usr/bin/env is broken` and `/ (the root)` are text, not commands.
        return if word.len() > 1 && !word[1..].contains('/') {
            Parsed::Other(word, arg)
        } else {
            Parsed::Message
        };
    };
    match command(spec, arg) {
        Ok(c) => Parsed::Command(c),
        Err(why) => Parsed::Invalid(why),
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

/// The command `spec` names, with `arg` checked: an error says what is wrong and shows the
/// usage.
fn command(spec: &CommandSpec, arg: &str) -> Result<SessionCommand, String> {
    let name = spec.name;
    let with_usage = |what: String| {
        if what.contains("Usage: ") {
            what
        } else {
            format!("{what}. Usage: {}", spec.usage)
        }
    };
    match spec.takes {
        Takes::Nothing if !arg.is_empty() => {
            return Err(with_usage(format!("{name} takes no argument (got `{arg}`)")))
        }
        Takes::Count if !arg.is_empty() && !arg.parse::<usize>().is_ok_and(|n| n >= 1) => {
            return Err(with_usage(format!("{name} takes a number of turns, at least 1 (got `{arg}`)")))
        }
        _ => {}
    }
    (spec.parse)(arg).map_err(with_usage)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_before_anything_happens() {
        assert_eq!(parse("/help"), Parsed::Command(SessionCommand::Help));
        assert_eq!(parse("  /mode   plan "), Parsed::Command(SessionCommand::Mode(Some(Mode::Plan))));
        use crate::session::RewindWhat;
        assert_eq!(parse("/rewind 2"), Parsed::Command(SessionCommand::Rewind(Some(2), RewindWhat::Both)));
        assert_eq!(parse("/rewind"), Parsed::Command(SessionCommand::Rewind(None, RewindWhat::Both)));
        assert_eq!(
            parse("/rewind code 3"),
            Parsed::Command(SessionCommand::Rewind(Some(3), RewindWhat::Code))
        );
        assert_eq!(
            parse("/rewind conversation"),
            Parsed::Command(SessionCommand::Rewind(None, RewindWhat::Conversation))
        );
        assert!(
            matches!(parse("/plan now"), Parsed::Invalid(m) if m.contains("takes no argument") && m.contains("Usage: /plan"))
        );
        assert!(matches!(parse("/rewind two"), Parsed::Invalid(m) if m.contains("Usage: /rewind [N]")));
        assert!(matches!(parse("/rewind 1 2"), Parsed::Invalid(_)));
        assert!(matches!(parse("/rewind 0"), Parsed::Invalid(_)));
        assert!(matches!(parse("/cost please"), Parsed::Invalid(_)));
        assert!(
            matches!(parse("/mode sideways"), Parsed::Invalid(m) if m.contains("unknown permission mode") && m.contains("Usage: /mode"))
        );
        assert!(matches!(parse("/permissions allow"), Parsed::Invalid(m) if m.contains("needs a rule")));
        assert!(matches!(parse("/skills twice"), Parsed::Invalid(m) if m.contains("not a skills command")));
        assert_eq!(parse("/compactx the widget"), Parsed::Other("/compactx", "the widget"));
        assert_eq!(parse("/lint src/lib.rs"), Parsed::Other("/lint", "src/lib.rs"));
        assert_eq!(parse("/status@octo_bot"), Parsed::Command(SessionCommand::Status));
        assert_eq!(parse("/usr/bin/env is broken"), Parsed::Message);
        assert_eq!(parse("/ is the root"), Parsed::Message);
        assert_eq!(parse("/"), Parsed::Message);
        assert_eq!(parse("hello /help"), Parsed::Message);
    }

    #[test]
    fn every_spec_parses_to_its_own_command() {
        for spec in super::super::spec::COMMANDS {
            let line = match spec.takes {
                Takes::Count => format!("{} 1", spec.name),
                _ => spec.name.to_owned(),
            };
            for name in std::iter::once(&spec.name).chain(spec.aliases) {
                let line = line.replacen(spec.name, name, 1);
                match parse(&line) {
                    Parsed::Command(c) => assert_eq!(c.name(), spec.name),
                    other => panic!("{line}: {other:?}"),
                }
            }
        }
        assert!(
            !SessionCommand::Status.changes_session()
                && SessionCommand::Mode(Some(Mode::Auto)).changes_session()
        );
        assert!(SessionCommand::New.changes_session() && SessionCommand::Stop.changes_session());
    }
}
