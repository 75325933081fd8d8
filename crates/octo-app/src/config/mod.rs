//! Configuration: `~/.octo/config.toml`, the project's `.octo/config.toml`, environment
//! variables and flags, merged with precedence flag > env > project > user > built-in default,
//! each value remembering where it came from.
//!
//! The rooms, leaf first: [`types`] (the error, sources, the environment lookup) → the sections
//! ([`endpoints`], [`sections`], [`sandbox`], [`channels`]) → [`mod@file`] (a file as written) →
//! [`load`] (the effective [`Config`] and its loading) → `apply` (one step per section of a
//! layer) and `show`. This module only names them.

mod apply;
pub mod channels;
pub mod claude_settings;
pub mod endpoints;
pub mod file;
mod hook_table;
pub mod load;
pub mod lsp;
mod project_allow;
pub mod sandbox;
pub mod sections;
mod show;
pub mod status_line;
pub mod types;

pub use crate::home::octo_home;
pub use endpoints::{EndpointConfig, ModelOverride, Protocol, TimeoutError, Timeouts};
pub use file::{
    parse_file, FileConfig, HookCommandToml, HookToml, PermissionsConfig, ShellEnvConfig, SubagentsConfig,
};
pub use load::{Config, Overrides};
pub use project_allow::ProjectAllow;
pub use sandbox::{SandboxKeys, SandboxSettings};
pub use sections::{CheckpointSettings, Notify, NotifyMethod, SubagentLimits};
pub use status_line::StatusLine;
pub(crate) use types::process_env;
pub use types::{ConfigError, EnvLookup, Source, Sourced};
