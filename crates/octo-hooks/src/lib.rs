//! # octo-hooks
//!
//! Hooks for the octo coding agent: the user's scripts at the turn's seats, configured as Claude
//! Code configures them (the `hooks` object of `settings.json`, read as it is) or in octo's config,
//! and run with Claude Code's protocol — the event as JSON on stdin; exit 0 goes on, exit 2
//! blocks with stderr as the reason, other exits are errors that block nothing; a JSON answer on
//! stdout may decide instead.
//!
//! - [`config`]: events, matchers (a regular expression over the whole tool name, or `*`), the
//!   hook set, reading `settings.json`.
//! - [`condition`]: a hook's `if` (`Bash(git *)`), the calls it runs for.
//! - [`Runner`]: one hook in the workspace through the application's shell, in its own process
//!   group, output capped, killed on timeout.
//! - [`Hooks`]: an event's hooks in parallel, their answers turned into decisions.
//! - [`HooksPlugin`]: the seats of the agent loop (PreToolUse, PostToolUse, Stop/SubagentStop,
//!   PreCompact); the application runs SessionStart, SessionEnd, UserPromptSubmit and
//!   Notification itself.
//!
//! **Layer:** adapter. Depends on `octo-agent` only (plus `regex`, `tokio`).
//!
//! ```
//! use octo_hooks::config::{from_claude_settings, Event};
//!
//! let settings = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}]}}"#;
//! let (set, notices) = from_claude_settings(settings, ".claude/settings.json", true);
//! assert!(notices.is_empty());
//! // A tool is matched by its own name and the names the application gives it (Claude Code's).
//! assert_eq!(set.matching(Event::PreToolUse, &["my_shell", "Bash"])[0].command, "./check.sh");
//! assert!(set.matching(Event::PreToolUse, &["my_reader", "Read"]).is_empty());
//! ```

mod answer;
mod background;
pub mod condition;
pub mod config;
mod hooks;
mod plugin;
mod run;
mod transcript;

pub use config::{BadMatcher, Event, Hook, HookSet, Matcher};
pub use hooks::{AfterRun, Context, Guard, Hooks, PromptDecision, SessionInfo, Shape};
pub use plugin::{HookCell, HooksPlugin};
pub use run::{Ran, Runner, Shell, MAX_OUTPUT};
