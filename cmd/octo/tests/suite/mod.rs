mod cli;
mod common;
mod mcp;
mod memory;
mod repl;
mod skills;
