//! What the REPL offers: what it can do (the command table says which shared commands that makes)
//! and its own commands, which only a terminal has.

use octo_app::commands::{Capabilities, CommandSpec, FrontEnd, Takes};

/// The REPL as the command table sees it: a terminal that can ask a yes, switch sessions and
/// start over (a running turn is cancelled with Ctrl-C, so `/stop` is not offered).
pub(super) const FRONT: FrontEnd = FrontEnd::new(
    "the REPL",
    Capabilities::TERMINAL
        .and(Capabilities::CONFIRM)
        .and(Capabilities::SWITCH_SESSION)
        .and(Capabilities::START_OVER),
);

/// The REPL's own commands.
pub(super) const OWN: &[CommandSpec] = &[
    own("/expand", "/expand", "the last tool output, whole", Takes::Nothing),
    own("/allow", "/allow [always]", "yes to a background sub-agent's waiting request", Takes::Text),
    own("/deny", "/deny [why]", "no to a background sub-agent's waiting request", Takes::Text),
    own("/exit", "/exit", "leave (also /quit, Ctrl-D)", Takes::Nothing),
    own("/quit", "/quit", "leave", Takes::Nothing),
];

/// A command of the REPL's own (read by the REPL loop, not by the table's parser).
const fn own(name: &'static str, usage: &'static str, about: &'static str, takes: Takes) -> CommandSpec {
    CommandSpec {
        name,
        aliases: &[],
        usage,
        about,
        takes,
        needs: Capabilities::TERMINAL,
        parse: |_| Err("read by the REPL itself".to_owned()),
    }
}

/// Every command name the REPL knows, for completion and near matches.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    FRONT.offered().map(|c| c.name).chain(OWN.iter().map(|c| c.name))
}
