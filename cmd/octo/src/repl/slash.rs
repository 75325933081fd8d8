//! Slash commands in the REPL: the shared vocabulary of `octo-app` (parsed, run on the session,
//! rendered here) and the REPL's own `/exit` and `/quit`. Replies that need a yes (`/dream`,
//! `/rewind`) or the terminal (`/memory edit`, `/resume` without a query) are carried on here;
//! any other `/word` is a skill, a custom command or an MCP prompt (the REPL loop's).

use super::editor::{read_line, Ed};
use super::paint::{checklist, paint};
use super::vocabulary::{FRONT, OWN};
use crate::out;
use crate::sanitize::visible;
use octo_app::commands::{self, Parsed, Reply, SessionCommand};
use octo_app::{Launcher, Session};

/// A typed line, as the REPL reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// A shared command.
    Shared(SessionCommand),
    /// `/exit` or `/quit`.
    Exit,
    /// `/expand`.
    Expand,
    /// A command with an argument it does not take, or one the REPL does not offer.
    Invalid(String),
    /// Another `/word`: a skill, a custom command, an MCP prompt, or unknown.
    Other(&'a str, &'a str),
    /// Not a command: the line goes to the model.
    Message,
}

/// Reads `line`.
pub(super) fn read(line: &str) -> Line<'_> {
    match FRONT.read(line) {
        Parsed::Command(c) => Line::Shared(c),
        Parsed::Refused(why) | Parsed::Invalid(why) => Line::Invalid(why),
        Parsed::Other(name @ ("/expand" | "/exit" | "/quit"), arg) => {
            if !arg.is_empty() {
                Line::Invalid(format!("{name} takes no argument (got `{arg}`). Usage: {name}"))
            } else if name == "/expand" {
                Line::Expand
            } else {
                Line::Exit
            }
        }
        Parsed::Other(name, arg) => Line::Other(name, arg),
        Parsed::Message => Line::Message,
    }
}

/// What the REPL loop does after a shared command.
pub(super) enum Done {
    /// Nothing more.
    Handled,
    /// Switch to this saved session.
    Resume(String),
}

/// Runs a shared command and renders its reply; the few that need a yes or the terminal go on
/// here.
pub(super) async fn run(
    launcher: &Launcher,
    session: &Session,
    ed: Ed,
    command: SessionCommand,
) -> (Ed, Done) {
    if matches!(command, SessionCommand::Compact(_)) {
        out::status(&paint("2", "  compacting the conversation…"));
    }
    // `/rewind` alone: the user picks the turn (and what to put back) from a list.
    let (ed, command) = match command {
        SessionCommand::Rewind(None, what) => match super::rewind::pick(session, ed, what).await {
            (ed, Some(command)) => (ed, command),
            (ed, None) => return (ed, Done::Handled),
        },
        other => (ed, other),
    };
    if matches!(command, SessionCommand::Dream) {
        out::status("dreaming: consolidating this workspace's memory with one model call…");
    }
    let reply = match session.command(launcher, command).await {
        Ok(r) => r,
        Err(e) => {
            out::error(&visible(&e.to_string()));
            return (ed, Done::Handled);
        }
    };
    match &reply {
        Reply::Help(specs) => help(specs),
        Reply::Todos(todos) if !todos.is_empty() => checklist(todos).iter().for_each(|l| out::status(l)),
        Reply::Compacted { .. } => {
            let lines = reply.lines();
            let (last, notices) = lines.split_last().map_or((None, &[][..]), |(l, n)| (Some(l), n));
            notices.iter().for_each(|n| out::status(&paint("2", &visible(n))));
            last.iter().for_each(|l| out::status(&visible(l)));
        }
        Reply::Dream(plan) => return (super::memory::dream(session, ed, plan).await, Done::Handled),
        Reply::Rewind(plan) => return (super::rewind::run(session, ed, plan).await, Done::Handled),
        Reply::EditMemory(path) => super::memory::edit(path),
        Reply::PickSession(list) if !list.is_empty() => {
            show(&reply);
            let (ed, answer) = read_line(ed, "  resume which? ").await;
            let query = answer.unwrap_or_default().trim().to_owned();
            if query.is_empty() {
                return (ed, Done::Handled);
            }
            return Box::pin(run(launcher, session, ed, SessionCommand::Resume(Some(query)))).await;
        }
        Reply::Resume(id) => return (ed, Done::Resume(id.clone())),
        Reply::Context(_) => context(&reply),
        other => show(other),
    }
    (ed, Done::Handled)
}

/// `/context`: the reply's lines with each part's glyph in a colour of its own.
fn context(reply: &Reply) {
    const COLOURS: [&str; 8] = ["36", "35", "33", "32", "34", "31", "96", "95"];
    let glyphs = octo_app::session::CONTEXT_GLYPHS;
    for line in reply.lines() {
        let painted: String = visible(&line)
            .chars()
            .map(|c| match glyphs.iter().position(|g| *g == c) {
                Some(i) => paint(COLOURS[i % COLOURS.len()], &c.to_string()),
                None if c == '·' => paint("2", "·"),
                None => c.to_string(),
            })
            .collect();
        out::status(&painted);
    }
}

/// The reply's lines, made safe for the terminal and fitted to its width.
fn show(reply: &Reply) {
    let width = crate::layout::width();
    for line in reply.lines() {
        out::status(&crate::layout::fit(&visible(&line), width));
    }
}

/// `/help`: the shared commands the REPL offers, its own, and what else a line can be, in two
/// columns fitted to the terminal.
fn help(specs: &[&commands::CommandSpec]) {
    let mut rows: Vec<(&str, &str)> =
        specs.iter().copied().filter(|c| FRONT.offers(c)).chain(OWN).map(|c| (c.usage, c.about)).collect();
    rows.push(("@path", "attach a file (text, or an image: png, jpeg, gif, webp)"));
    rows.push(("\\ at the end", "a line ending in \\ continues on the next line"));
    rows.push(("Ctrl-C", "cancels a running turn; twice on an empty line leaves (as Ctrl-D does)"));
    rows.push(("Ctrl-O", "on an empty line: the last tool output, whole (as /expand)"));
    rows.push(("Ctrl-L", "clears the screen"));
    for line in crate::layout::columns(&rows, 2, crate::layout::width()) {
        out::status(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_before_anything_happens() {
        assert_eq!(read("/help"), Line::Shared(SessionCommand::Help));
        assert_eq!(read("  /mode   plan "), Line::Shared(SessionCommand::Mode(Some(octo_app::Mode::Plan))));
        assert_eq!(
            read("/rewind 2"),
            Line::Shared(SessionCommand::Rewind(Some(2), octo_app::RewindWhat::Both))
        );
        assert!(
            matches!(read("/plan now"), Line::Invalid(m) if m.contains("takes no argument") && m.contains("Usage: /plan"))
        );
        assert!(matches!(read("/rewind two"), Line::Invalid(m) if m.contains("Usage: /rewind [N]")));
        assert!(matches!(read("/rewind 0"), Line::Invalid(_)));
        assert!(matches!(read("/cost please"), Line::Invalid(_)));
        assert!(matches!(read("/exit now"), Line::Invalid(m) if m.contains("Usage: /exit")));
        assert!(matches!(read("/stop"), Line::Invalid(m) if m.contains("Ctrl-C")));
        assert_eq!(
            read("/lsp"),
            Line::Shared(SessionCommand::Lsp),
            "every command the REPL can offer is offered"
        );
        assert_eq!(read("/quit"), Line::Exit);
        assert_eq!(read("/expand"), Line::Expand);
        assert_eq!(read("/compactx the widget"), Line::Other("/compactx", "the widget"));
        assert_eq!(read("/lint src/lib.rs"), Line::Other("/lint", "src/lib.rs"));
        assert_eq!(read("/usr/bin/env is broken"), Line::Message);
        assert_eq!(read("/ is the root"), Line::Message);
        assert_eq!(read("/"), Line::Message);
        assert_eq!(read("hello /help"), Line::Message);
    }

    #[test]
    fn every_command_of_the_table_is_offered_or_refused_with_a_reason() {
        for spec in commands::COMMANDS {
            let line = if spec.takes == commands::Takes::Count {
                format!("{} 1", spec.name)
            } else {
                spec.name.to_owned()
            };
            match read(&line) {
                Line::Shared(_) => assert!(FRONT.offers(spec), "{line}"),
                Line::Invalid(why) => {
                    assert!(
                        !FRONT.offers(spec)
                            && why.starts_with(&format!("{} is not available in the REPL: ", spec.name)),
                        "{why}"
                    );
                }
                other => panic!("{line}: {other:?}"),
            }
        }
    }
}
