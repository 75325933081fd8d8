//! Reading `/word args` as a [`SessionCommand`], with the errors users see: a known command
//! with an argument it does not take is an error that shows its usage, never silently ignored.
//! Any other `/word` is left to the front end (a skill, a custom command, an MCP prompt, a
//! front end's own command); a line starting with `/ ` or a path goes to the model as text.

use super::command::SessionCommand;
use super::spec::{find, CommandSpec, Takes};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::Mode;

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
