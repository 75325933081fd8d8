//! A project's Claude Code allow rules, `defaultMode` and `env`, held until the user trusts them.

/// A project's allow rules and `defaultMode` (from `.claude/settings.json` and
/// `.claude/settings.local.json`), waiting for the user's trust.
#[derive(Debug, Clone, Default)]
pub struct ProjectAllow {
    /// What trusting them is remembered by: the workspace and these exact entries.
    pub fingerprint: String,
    /// The entries as written, each with its file (for the question).
    pub entries: Vec<String>,
    /// octo's rules for them, each with its file.
    pub allow: Vec<(String, String)>,
    /// The mode they set.
    pub mode: Option<crate::permissions::Mode>,
    /// The variables their `env` sets for commands.
    pub env: Vec<(String, String)>,
}
