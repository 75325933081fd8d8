mod cli;
mod common;
mod repl;
