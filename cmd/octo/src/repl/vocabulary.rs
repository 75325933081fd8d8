//! What the REPL offers: the shared commands it can render (all but `/stop`: Ctrl-C cancels a
//! turn here) and its own, which only a terminal has.

use octo_app::commands::{CommandSpec, Takes};

/// The shared commands the REPL offers.
pub(super) const OFFERED: &[&str] = &[
    "/help",
    "/status",
    "/model",
    "/mode",
    "/plan",
    "/build",
    "/permissions",
    "/tools",
    "/mcp",
    "/skills",
    "/remember",
    "/memory",
    "/dream",
    "/agents",
    "/hooks",
    "/todos",
    "/cost",
    "/context",
    "/review",
    "/init",
    "/export",
    "/compact",
    "/rewind",
    "/history",
    "/resume",
    "/clear",
    "/new",
];

/// The REPL's own commands.
pub(super) const OWN: &[CommandSpec] = &[
    CommandSpec {
        name: "/expand",
        usage: "/expand",
        about: "the last tool output, whole",
        takes: Takes::Nothing,
    },
    CommandSpec {
        name: "/allow",
        usage: "/allow [always]",
        about: "yes to a background sub-agent's waiting request",
        takes: Takes::Text,
    },
    CommandSpec {
        name: "/deny",
        usage: "/deny [why]",
        about: "no to a background sub-agent's waiting request",
        takes: Takes::Text,
    },
    CommandSpec { name: "/exit", usage: "/exit", about: "leave (also /quit, Ctrl-D)", takes: Takes::Nothing },
    CommandSpec { name: "/quit", usage: "/quit", about: "leave", takes: Takes::Nothing },
];

/// Every command name the REPL knows, for completion and near matches.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    OFFERED.iter().copied().chain(OWN.iter().map(|c| c.name))
}
