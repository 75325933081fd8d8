//! The layout of octo's home directory (`~/.octo`, or `OCTO_HOME`): the one place that knows
//! where each kind of file lives. Everything else asks a [`Home`].

use std::path::{Path, PathBuf};

/// octo's home directory and what is in it.
///
/// ```
/// let home = octo_app::Home::new("/tmp/octo-home");
/// assert_eq!(home.config_file(), std::path::Path::new("/tmp/octo-home/config.toml"));
/// assert_eq!(home.sessions(), std::path::Path::new("/tmp/octo-home/sessions"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// A home at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `OCTO_HOME`, else `~/.octo`.
    pub fn from_env() -> Self {
        Self::new(crate::config::octo_home())
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `config.toml`: the user's configuration.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `octorules.md`: the user's rules, read into every session's prompt.
    pub fn rules_file(&self) -> PathBuf {
        self.root.join("octorules.md")
    }

    /// `sessions/`: saved conversations.
    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// `sessions/folded/`: transcripts of messages folded into summaries.
    pub fn folded(&self) -> PathBuf {
        self.sessions().join("folded")
    }

    /// `trash/`: previous contents of files the tools overwrote or edited.
    pub fn trash(&self) -> PathBuf {
        self.root.join("trash")
    }

    /// `output/`: full output of commands too long to return.
    pub fn output(&self) -> PathBuf {
        self.root.join("output")
    }

    /// `logs/`: event logs.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// `history`: the REPL's input history.
    pub fn history_file(&self) -> PathBuf {
        self.root.join("history")
    }

    /// `skills/`: the user's skills.
    pub fn skills(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// `commands/`: the user's custom slash commands.
    pub fn commands(&self) -> PathBuf {
        self.root.join("commands")
    }

    /// `agents/`: the user's sub-agent definitions.
    pub fn agents(&self) -> PathBuf {
        self.root.join("agents")
    }

    /// `memory/`: what octo remembers across sessions.
    pub fn memory(&self) -> PathBuf {
        self.root.join("memory")
    }

    /// `mcp.json`: the user's MCP servers.
    pub fn mcp_file(&self) -> PathBuf {
        self.root.join("mcp.json")
    }

    /// `models/`: downloaded local models.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
}
