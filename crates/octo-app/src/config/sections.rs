//! The effective values of the smaller sections: how a long turn is announced and the limits
//! sub-agents run under.

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
