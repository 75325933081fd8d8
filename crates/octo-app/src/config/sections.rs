//! The effective values of the smaller sections: how a long turn is announced, the limits
//! sub-agents run under, and how checkpoints are kept.

/// How the REPL announces the end of a long turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyMethod {
    /// A desktop notification (OSC 9) where the terminal is known to show one, else the bell.
    Auto,
    /// The terminal bell.
    Bell,
    /// OSC 9 (iTerm2, WezTerm, Ghostty, Windows Terminal).
    Osc9,
    /// Nothing.
    Off,
}

impl std::str::FromStr for NotifyMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "bell" => Ok(Self::Bell),
            "osc9" => Ok(Self::Osc9),
            "off" | "none" => Ok(Self::Off),
            other => Err(format!("notify must be auto, bell, osc9 or off, not `{other}`")),
        }
    }
}

/// `notify` and `notify_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notify {
    /// How.
    pub method: NotifyMethod,
    /// After how long a turn.
    pub after: std::time::Duration,
}

impl Default for Notify {
    fn default() -> Self {
        Self { method: NotifyMethod::Auto, after: std::time::Duration::from_secs(30) }
    }
}

/// The limits sub-agents run under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentLimits {
    /// How deep sub-agents may nest (default 1).
    pub max_depth: u32,
    /// How many may run at once (default 4).
    pub max_running: u32,
    /// Model requests per sub-agent (default 30).
    pub max_turns: u32,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        Self { max_depth: 1, max_running: 4, max_turns: 30 }
    }
}

/// `checkpoints`, `checkpoint_keep_days`, `checkpoint_max_mb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// Whether turns are checkpointed.
    pub enabled: bool,
    /// Checkpoints older than this many days are pruned.
    pub keep_days: u64,
    /// All checkpoint stores together are kept under this many MB.
    pub max_mb: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self { enabled: true, keep_days: 30, max_mb: 2048 }
    }
}

impl CheckpointSettings {
    /// Applies one file's keys.
    pub(super) fn apply(&mut self, enabled: Option<bool>, keep_days: Option<u64>, max_mb: Option<u64>) {
        if let Some(e) = enabled {
            self.enabled = e;
        }
        if let Some(d) = keep_days {
            self.keep_days = d.max(1);
        }
        if let Some(m) = max_mb {
            self.max_mb = m.max(1);
        }
    }
}
