//! `octo`: an AI coding agent for the terminal.
//!
//! This binary is a thin front end. Today it only reports its version and help: the agent core
//! (`octo-agent`) is built, and chat, tools and the REPL arrive with the provider, tools, app and
//! CLI work that follows (see the README's status table).

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

/// octo — an AI coding agent for the terminal that works with any model.
///
/// Status: this build contains the agent core only. Chat, one-shot runs, tools and the REPL are
/// not available yet; see the README for what works today.
#[derive(Debug, Parser)]
#[command(name = "octo", version, about, long_about)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    let mut err = std::io::stderr().lock();
    // Ignore a closed stderr: there is nobody left to tell.
    let _ = writeln!(
        err,
        "octo {}: the agent core is built, but chat and the REPL are not available yet.\n\
         Run `octo --help` for what this build can do.",
        env!("CARGO_PKG_VERSION")
    );
    ExitCode::SUCCESS
}
