mod cli;
mod common;
mod mcp;
mod repl;
