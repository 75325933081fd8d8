mod cli;
mod common;
mod mcp;
mod memory;
mod repl;
#[cfg(target_os = "linux")]
mod sandbox;
mod skills;
