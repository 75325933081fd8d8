//! `octo`: an AI coding agent for the terminal.
//!
//! A thin front end over `octo-app`: it parses flags, builds a `Session`, and renders its events.
//! It never talks to a provider or a tool directly.

mod acp;
mod checkpoints;
mod claude_stream;
mod cli;
mod cli_actions;
mod commands;
mod exit;
mod init;
mod invoke;
mod launch;
mod layout;
mod mcp;
mod mcp_login;
mod memory;
mod models;
mod oneshot;
mod out;
mod output;
mod plugin;
mod render;
mod repl;
mod review;
mod sanitize;
mod serve;
mod setup;
mod stream_input;
mod trash;
mod trust;
mod worktrees;

use clap::{CommandFactory, Parser};
use cli::{Cli, Command};
use exit::{runtime, EXIT_ERROR, EXIT_USAGE};
use std::io::{IsTerminal, Read};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // --help and --version land here too; a closed stdout must not panic.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE));
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            out::error(&format!("{e:#}"));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Folds `--append-system-prompt-file` into `--append-system-prompt`; the exit code when the
/// file cannot be read.
fn append_system_prompt_file(cli: &mut Cli) -> Option<ExitCode> {
    if let Some(file) = cli.append_system_prompt_file.take() {
        match std::fs::read_to_string(&file) {
            Ok(text) => {
                let joined = match cli.append_system_prompt.take() {
                    Some(t) => format!("{t}\n\n{text}"),
                    None => text,
                };
                cli.append_system_prompt = Some(joined);
            }
            Err(e) => {
                out::error(&format!("cannot read --append-system-prompt-file {}: {e}", file.display()));
                return Some(ExitCode::from(EXIT_USAGE));
            }
        }
    }
    None
}

/// Runs a subcommand (`octo doctor`, `octo mcp …`, …).
fn subcommand(cli: &Cli, command: &Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Completion { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "octo", &mut buf);
            out::stdout_bytes(&buf);
            Ok(ExitCode::SUCCESS)
        }
        Command::Config { action } => commands::config(&octo_app::Launcher::from_env(), cli, action),
        Command::Auth { action } => commands::auth(&octo_app::Launcher::from_env(), action),
        Command::Doctor => runtime()?.block_on(commands::doctor(&octo_app::Launcher::from_env(), cli)),
        Command::Sessions { all, action } => {
            commands::sessions(&octo_app::Launcher::from_env(), cli, *all, action.as_ref())
        }
        Command::Mcp { action } => {
            runtime()?.block_on(mcp::run(&octo_app::Launcher::from_env(), cli, action))
        }
        Command::Memory { action } => {
            runtime()?.block_on(memory::run(&octo_app::Launcher::from_env(), cli, action))
        }
        Command::Plugin { action } => Ok(plugin::run(&octo_app::Launcher::from_env(), cli, action)),
        Command::Worktrees { action } => Ok(worktrees::run(&octo_app::Launcher::from_env(), cli, action)),
        Command::Trash { action } => trash::run(&octo_app::Launcher::from_env(), cli, action),
        Command::Review { base, commit, staged, fail_on } => {
            let args = review::Args {
                base: base.clone(),
                commit: commit.clone(),
                staged: *staged,
                fail_on: *fail_on,
            };
            review::run(cli, args)
        }
        Command::Init { write } => init::run(cli, *write),
        Command::Trust { yes } => runtime()?.block_on(trust::run(&octo_app::Launcher::from_env(), cli, *yes)),
        Command::Acp => acp::run(octo_app::Launcher::from_env(), cli),
        Command::Checkpoints { action } => checkpoints::run(&octo_app::Launcher::from_env(), cli, action),
        Command::Serve { listen, allow_remote, roots, daemon, channels_only } => {
            serve::run(cli, *listen, *allow_remote, roots, *daemon, *channels_only)
        }
        Command::Models { action } => {
            runtime()?.block_on(models::run(&octo_app::Launcher::from_env(), action))
        }
        Command::Setup { endpoint, model, key_env, base_url, no_test } => {
            let args = setup::Args {
                endpoint: endpoint.clone(),
                model: model.clone(),
                key_env: key_env.clone(),
                base_url: base_url.clone(),
                test: !no_test,
            };
            runtime()?.block_on(setup::run(&octo_app::Launcher::from_env(), args))
        }
    }
}

/// Runs what the command line asks for.
fn run(mut cli: Cli) -> anyhow::Result<ExitCode> {
    if let Some(code) = append_system_prompt_file(&mut cli) {
        return Ok(code);
    }
    if cli.worktree.is_some() {
        if let Some(code) = worktrees::enter(&octo_app::Launcher::from_env(), &mut cli) {
            return Ok(code);
        }
    }
    if let Some(command) = &cli.command {
        return subcommand(&cli, command);
    }
    let checked = (!cli.mcp_config.is_empty() || cli.session_id.is_some())
        .then(|| launch::check_flags(&cli, &octo_app::Launcher::from_env()));
    if let Some(Err(msg)) = checked {
        out::error(&msg);
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let no_prompt = cli.prompt.is_empty() && cli.prompt_file.is_none();
    if interactive && no_prompt && !cli.print {
        return runtime()?.block_on(repl::run(&cli));
    }
    if cli.resume.as_deref() == Some("") {
        out::error(
            "--resume without a session picks one from a list and needs a terminal without a prompt; \
             name one (--resume 2, an id prefix or title words) or use -c for the last session",
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if cli.input_format == cli::InputFormat::StreamJson {
        return runtime()?.block_on(stream_input::run(&cli));
    }
    if cli.permission_prompt == cli::PermissionPrompt::Stdio {
        out::error("--permission-prompt stdio needs --input-format stream-json (the answers come on stdin)");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let prompt = match gather_prompt(&cli) {
        Ok(Some(p)) => p,
        Ok(None) => {
            out::error(
                "no prompt given. Run `octo \"what to do\"`, pipe a prompt in, use --prompt-file, or run \
                 `octo` on a terminal for the interactive REPL.",
            );
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(msg) => {
            out::error(&msg);
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    runtime()?.block_on(oneshot::run(&cli, prompt))
}

/// The prompt from the positional words, --prompt-file and piped stdin (stdin is appended to a
/// prompt given another way, as in `git diff | octo "review this"`).
fn gather_prompt(cli: &Cli) -> Result<Option<String>, String> {
    let mut parts = Vec::new();
    if !cli.prompt.is_empty() {
        parts.push(cli.prompt.join(" "));
    }
    if let Some(f) = &cli.prompt_file {
        let text = std::fs::read_to_string(f)
            .map_err(|e| format!("cannot read the prompt file {}: {e}", f.display()))?;
        parts.push(text);
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut piped = String::new();
        // An unreadable stdin (closed, not UTF-8) simply adds nothing.
        if stdin.lock().read_to_string(&mut piped).is_ok() && !piped.trim().is_empty() {
            parts.push(piped);
        }
    }
    let prompt = parts.join("\n\n");
    Ok((!prompt.trim().is_empty()).then_some(prompt))
}
