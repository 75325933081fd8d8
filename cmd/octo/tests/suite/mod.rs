mod cli;
mod common;
mod mcp;
mod memory;
mod repl;
mod skills;
#[cfg(target_os = "linux")]
mod sandbox;
