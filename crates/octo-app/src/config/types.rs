//! The pieces every part of the configuration shares: its error, where a value came from, a
//! value with its source, and how the environment is read. A leaf: it uses no other module of
//! the crate.

use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// A configuration problem, naming the file, line and key.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file is not valid TOML, has an unknown key or a value of the wrong type.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong (names the key).
        message: String,
    },
    /// A value is out of range or malformed (from a file, the environment or a flag).
    #[error("{source_desc}: {message}")]
    Value {
        /// Where the value came from.
        source_desc: String,
        /// What is wrong and what is accepted.
        message: String,
    },
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// octo's built-in default.
    Default,
    /// The user's config file.
    User(PathBuf),
    /// The project's config file.
    Project(PathBuf),
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::User(p) => write!(f, "user config {}", p.display()),
            Self::Project(p) => write!(f, "project config {}", p.display()),
            Self::Env(v) => write!(f, "env {v}"),
            Self::Flag => f.write_str("flag"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its origin.
    pub source: Source,
}

impl<T> Sourced<T> {
    pub(crate) fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
}

/// Reads environment variables through a function, so tests need not touch the process env.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
