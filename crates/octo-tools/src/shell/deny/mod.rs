//! What octo decides about a command before anything runs, from the command as a shell would run
//! it ([`super::syntax`]): each simple command, wrappers (`sudo`, `env`, `timeout`, …) seen
//! through, `~`, `$HOME` and `..` expanded in paths, inner scripts (`sh -c`, `eval`, `<<<`,
//! `echo … | sh`) read too.
//!
//! - **Refused in every mode** ([`Verdict::Refuse`]): `rm -r` (or `find -delete`) on the root,
//!   the home directory, an ancestor of it or a top-level system directory — also through a glob
//!   (`/*`, `~/../*`) or `..`; formatting a file system; writing onto a block device (`dd of=`,
//!   `>`); killing octo or every process (`kill -1`, a `pkill`/`killall` pattern that matches
//!   octo); fork bombs (a function calling itself twice, one call in the background or a
//!   pipe); interpreter one-liners deleting the home, the root or a parent folder (`python3 -c`
//!   with `shutil.rmtree`, `node -e` with `fs.rmSync`, …; the shell commands they hand to
//!   `os.system` and the like are judged as shell commands).
//! - **Asked in every mode** ([`Verdict::Ask`]): a program whose name is only known at run time
//!   (`$R`, `$(…)`, backticks); a shell fed a script only known at run time (`base64 -d | sh`,
//!   `curl … | bash`, `bash <(…)`, `eval "$x"`); `rm -r` on a target only known at run time; a
//!   command that touches a secret location (`~/.ssh`, `.env`, …; see [`crate::secrets`]).
//!
//! This is a seatbelt, kept short and honest; the OS sandbox is the wall.
//!
//! The rooms, leaf first: `verdict` (the verdict and where a command runs) and `words` (the
//! program behind its wrappers) → `inner` (the scripts a command runs inside it), `reach` (the
//! secret locations a word reaches), `rm` (recursive deletes), `kill` (killing octo or every
//! process) and `system` (formatting, writing onto devices) → `check` (the verdict on a whole
//! command line) and `segments` (the programs a line runs, for rules); beside them `meta` (mode,
//! owner and time changes outside the workspace) and `socket` (talking to a local daemon), which
//! the permission engine asks about where the sandbox cannot hold them. This module only names
//! them.

mod check;
mod inner;
mod interp;
mod kill;
mod meta;
mod reach;
mod rm;
mod segments;
mod socket;
mod system;
#[cfg(test)]
mod tests;
mod verdict;
mod words;

pub use check::{check, hard_denied};
pub use meta::changes_metadata_outside;
pub use segments::command_segments;
pub use socket::reaches_local_daemon;
pub use verdict::{Context, Verdict};
