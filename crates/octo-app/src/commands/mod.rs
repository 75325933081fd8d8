//! One command vocabulary for every front end. The REPL, the chat bridges, the web UI and the
//! editor agent read a line with [`parse`], run the [`SessionCommand`] with
//! [`crate::Session::command`], and render the typed [`Reply`] (or its plain
//! [`Reply::lines`]). Each command is one row of one table ([`COMMANDS`]): its name, usage,
//! help, argument and what a front end must be able to do to offer it. A front end declares its
//! [`Capabilities`] as a [`FrontEnd`] and asks the table what it offers, how to read a line
//! ([`FrontEnd::read`]) and why a command is refused there; commands only one front end has
//! (`/exit`, terminal paste, a chat's `/file`) stay in that front end.
//!
//! ```
//! use octo_app::commands::{parse, Parsed, SessionCommand};
//! use octo_app::Mode;
//!
//! assert_eq!(parse("/mode plan"), Parsed::Command(SessionCommand::Mode(Some(Mode::Plan))));
//! assert!(matches!(parse("/plan now"), Parsed::Invalid(why) if why.contains("Usage: /plan")));
//! ```
//!
//! Its rooms, leaf first: `command` (the typed commands and their argument readers) → `spec`
//! (the table) → `parse` → `front` → `reply` → `run`.

mod command;
mod front;
mod parse;
mod reply;
pub(crate) mod run;
mod spec;

pub use command::{MemoryAction, PermissionsChange, SessionCommand};
pub use front::FrontEnd;
pub use parse::{parse, Parsed};
pub use reply::{review_lines, todo_mark, Reply, StatusReport};
pub use run::CommandError;
pub use spec::{find, Capabilities, CommandSpec, ParseFn, Takes, COMMANDS};
