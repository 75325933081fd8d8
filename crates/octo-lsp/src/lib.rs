//! # octo-lsp
//!
//! Language servers for octo: the errors an edit introduces come back in the same tool result,
//! and the model can ask where a symbol is defined and used.
//!
//! - [`config`]: the `[lsp.<name>]` tables and the built-in defaults (rust-analyzer, pyright or
//!   basedpyright, gopls, typescript-language-server, clangd, bash-language-server), which
//!   apply only when their program is on `PATH`; [`from_claude`] reads a Claude Code plugin's
//!   `.lsp.json` / `lspServers` as such tables.
//! - [`Lsp`]: a workspace's servers — started in the background on the first touch of a file
//!   of their language, rooted at the nearest root marker, in the OS sandbox with the network
//!   off and a filtered environment, in a process group of their own, restarted with backoff
//!   when they die, stopped with the session. Files outside the workspace and files over 5 MB
//!   are never sent.
//! - [`DiagnosticsPlugin`]: after a call that writes a file, the file is synced to its server
//!   and the errors (and warnings, when asked) it reports within a bound are appended to the
//!   result as `path:line:col severity message`; a slow, missing or crashed server adds nothing
//!   and never delays the edit past the bound.
//! - [`LspTool`]: the read-only `lsp` tool (definition, references, hover, symbols,
//!   diagnostics, a rename's preview), positions given by line and symbol name.
//!
//! The protocol is JSON-RPC over the server's stdio (`rpc`), typed with `lsp-types` where
//! octo reads what the server says.
//!
//! **Layer:** adapter. Depends on `octo-agent` and `octo-exec`.

mod claude;
pub mod config;
mod error;
mod format;
mod locate;
mod manager;
mod plugin;
mod report;
mod rpc;
mod server;
mod tool;

pub use claude::from_claude;
pub use config::{resolve, Resolved, ServerConfig};
pub use error::LspError;
pub use manager::{Lsp, ServerStatus, Settings};
pub use plugin::DiagnosticsPlugin;
pub use tool::LspTool;
