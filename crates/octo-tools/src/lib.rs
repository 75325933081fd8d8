//! # octo-tools
//!
//! The built-in tools of the octo coding agent, as [`octo_agent::ToolExecutor`]s: what the model
//! uses to do real work. Each tool's description and JSON schema are written for a model: what it
//! does, its limits, and what to use instead.
//!
//! The tools are in [`shell`] (commands, background commands), [`fs`] (read, write, edit, list),
//! [`search`] (glob, grep), [`web`] (fetch, search) and `interact` (the task list, a question for
//! the user); [`default_registry`] registers them and [`default_names`] lists them. Each tool
//! describes itself — what it checks, whether it writes, the names other agents' files give it
//! — so adding one is one file and one registration line (`dev-docs/tools.md`).
//!
//! Safety: paths resolve against the workspace ([`octo_agent::ToolContext::cwd`]); writes outside
//! it (directly, through `..`, or through a symlink) need the user's approval unless the directory
//! is in [`ToolsConfig::writable_roots`]. A handful of commands (`rm -rf /` and its spellings, fork
//! bombs, `mkfs`, `dd` onto devices, killing octo) are refused whatever the rules say. Invalid
//! arguments come back as error results that say what was wrong; no tool panics the loop.
//!
//! **Layer:** adapter. Depends on `octo-agent` only (plus ripgrep's crates, reqwest, tokio).
//!
//! ```
//! use octo_agent::{ToolContext, ToolExecutor};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n")?;
//! let tools = octo_tools::default_registry(octo_tools::ToolsConfig::default());
//! let grep = tools.get("grep").ok_or("no grep")?;
//! let out = grep.execute(json!({"pattern": "bet", "output_mode": "content"}), &ToolContext::detached(dir.path())).await;
//! assert_eq!(out.text_content(), "notes.txt:2:beta\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })
//! # }
//! ```

pub mod atomic;
pub mod beneath;
pub mod claude;
pub mod clipboard;
pub mod config;
mod error;
pub mod fs;
pub mod image;
mod interact;
pub mod path;
mod private;
pub mod search;
pub mod secrets;
pub mod shell;
pub mod sniff;
pub mod trash;
pub mod web;

pub use config::{Buffers, SearchEndpoints, ToolsConfig, WebConfig};
pub use error::ToolError;
pub use interact::{AskUser, Todo, TodoStatus, TodoWrite, TODOS_UPDATE};

use octo_agent::ToolRegistry;
use std::sync::Arc;

/// Names of the tools [`default_registry`] provides, in the order the model sees them.
pub fn default_names() -> Vec<String> {
    default_registry(ToolsConfig::default()).names().map(str::to_owned).collect()
}

/// Every built-in tool, ready for an [`octo_agent::Agent`]. The background shells it starts (and
/// whatever its commands left running) are killed when the last tool holding them is dropped.
pub fn default_registry(config: ToolsConfig) -> ToolRegistry {
    registry_with_shells(config, Arc::new(shell::BackgroundShells::default()))
}

/// [`default_registry`] around background shells the caller keeps, to stop them (and name the
/// ones still running) when the session ends: [`shell::BackgroundShells::stop_all`].
pub fn registry_with_shells(config: ToolsConfig, bg: Arc<shell::BackgroundShells>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(Arc::new(shell::Terminal::new(
        Arc::clone(&bg),
        shell::ShellSettings {
            spill_dir: config.spill_dir.clone(),
            output_cap: config.shell_output_cap,
            default_timeout: config.shell_timeout,
            max_timeout: config.shell_timeout_max,
            env: config.shell_env.clone(),
            secrets: config.secrets.clone(),
            sandbox: config.sandbox.clone(),
        },
    )))
    .register(Arc::new(shell::TerminalOutput::new(Arc::clone(&bg), config.shell_output_cap)))
    .register(Arc::new(shell::KillShell::new(bg)))
    .register(Arc::new(fs::ReadFile::new(config.read_default_lines).with_buffers(config.buffers.clone())))
    .register(Arc::new(
        fs::WriteFile::new(config.trash_dir.clone(), config.writable_roots.clone())
            .with_buffers(config.buffers.clone()),
    ))
    .register(Arc::new(
        fs::EditFile::new(config.trash_dir.clone(), config.writable_roots.clone())
            .with_buffers(config.buffers.clone()),
    ))
    .register(Arc::new(search::Glob))
    .register(Arc::new(search::Grep::new(config.secrets.clone())))
    .register(Arc::new(fs::ListDir))
    .register(Arc::new(web::WebFetch::new(config.web.clone())))
    .register(Arc::new(web::WebSearch::new(config.web)))
    .register(Arc::new(TodoWrite))
    .register(Arc::new(AskUser));
    r
}

/// The tool definitions sent to the model by default (what `--no-tools` leaves out).
pub fn default_tools(config: ToolsConfig) -> Vec<octo_agent::ToolDefinition> {
    default_registry(config).definitions().to_vec()
}
