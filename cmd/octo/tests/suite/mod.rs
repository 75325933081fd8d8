mod acp;
mod claude_diff;
mod claude_diff_headless;
mod claude_diff_hooks;
mod cli;
mod common;
mod daily;
#[cfg(feature = "local")]
mod local;
mod lsp;
mod mcp;
mod memory;
mod repl;
mod repomap;
mod request_size;
#[cfg(target_os = "linux")]
mod sandbox;
mod serve;
mod skills;
#[cfg(target_os = "linux")]
mod survivors;
mod terminal;
