//! The verdict octo gives a command, and where the command runs (the leaf the other rooms share).

use crate::secrets::Secrets;
use std::path::Path;

/// What octo decides about a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing special: the usual permission rules apply.
    Run,
    /// Asked in every mode unless the user already allowed this command (an allow rule naming
    /// it, or "always"): it names a project secret such as `.env`. The terminal tool leaves this
    /// to the permission engine.
    Caution(String),
    /// The user must be asked, in every mode; the reason says why.
    Ask(String),
    /// Never run; the reason says what it would do.
    Refuse(String),
}

impl Verdict {
    fn rank(&self) -> u8 {
        match self {
            Self::Run => 0,
            Self::Caution(_) => 1,
            Self::Ask(_) => 2,
            Self::Refuse(_) => 3,
        }
    }

    /// The graver of the two; on a tie the first, so the first reason found is the one told.
    pub(super) fn worst(self, other: Self) -> Self {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// Where a command runs and whose secrets are where.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// The user's secret locations (and home directory).
    pub secrets: &'a Secrets,
}
