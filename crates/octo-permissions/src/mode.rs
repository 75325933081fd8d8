//! Permission modes: how much octo may do without asking.

use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// How much octo may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Ask before anything that changes things.
    #[default]
    Default,
    /// File edits inside the workspace are allowed; commands still ask.
    AcceptEdits,
    /// Read-only: anything that writes or runs is refused.
    Plan,
    /// Allow what would be asked; deny rules and hard denies still hold.
    Auto,
}

/// A permission mode name that octo does not know.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown permission mode `{0}`: use default (or build), accept-edits, plan or auto")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, UnknownMode> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "default" | "ask" | "build" => Ok(Self::Default),
            "accept-edits" | "acceptedits" => Ok(Self::AcceptEdits),
            "plan" => Ok(Self::Plan),
            // Claude Code's `bypassPermissions` too.
            "auto" | "yolo" | "bypass" | "bypasspermissions" => Ok(Self::Auto),
            other => Err(UnknownMode(other.to_owned())),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Default => "default",
            Self::AcceptEdits => "accept-edits",
            Self::Plan => "plan",
            Self::Auto => "auto",
        })
    }
}
