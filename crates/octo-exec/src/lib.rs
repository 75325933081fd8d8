//! # octo-exec
//!
//! The one place the octo coding agent starts a shell command, for the model's command tool, for
//! hook scripts and for anything else that runs a command line:
//!
//! - [`shell_command`]: the platform shell (`sh -c` on Unix, PowerShell on Windows);
//! - [`spawn`]: the command in a session and process group of its own (no controlling terminal:
//!   it cannot type into the user's), stdout and stderr merged in order into a bounded
//!   [`Capture`], killed as a group ([`kill_group`], [`Running::terminate`]);
//! - [`env::ShellEnv`]: the filtered environment commands see;
//! - [`reaper`]: no process outlives octo; [`watch`]: nor after octo is killed; [`tied`]: what
//!   octo starts dies with it, even when octo is killed;
//! - [`sandbox`]: the OS sandbox — on Linux Landlock for the file system, a seccomp filter for the
//!   network and a private mount namespace that keeps `.git` read-only, or where no namespace
//!   can be had a seccomp supervisor that makes mode, owner and time changes and socket
//!   connections only inside the writable roots; on macOS a Seatbelt profile. It is applied in
//!   the child between fork and exec, so octo itself is never confined.
//!
//! **Layer:** shared plumbing. Depends on no other octo crate.
//!
//! ```no_run
//! use octo_exec::sandbox::{Mode, Policy, Sandbox};
//!
//! let dir = std::env::current_dir()?;
//! let sandbox = Sandbox::new(Policy::new(Mode::WorkspaceWrite, &dir));
//! println!("{}", sandbox.describe());
//! // Writes outside the workspace and the temp dir fail inside; so does any connection.
//! let status = sandbox.shell_command("echo hi > ~/outside.txt")?.status()?;
//! assert!(!status.success() || !sandbox.is_active());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod capture;
pub mod env;
pub mod env_file;
pub mod limit;
pub mod pause;
pub mod private;
mod process;
pub mod reaper;
pub mod sandbox;
mod shell;
pub mod tied;
mod unique;
pub mod watch;

pub use capture::Capture;
#[cfg(unix)]
pub use process::own_session;
pub use process::{kill_group, spawn, Ending, Running};
pub use shell::shell_command;
pub use unique::unique;
