//! From the command line to a session: flags become a [`Launch`] for octo-app's [`Launcher`],
//! and launch errors become exit codes. Nothing here knows the home layout or the key store.

use crate::cli::Cli;
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use octo_app::config::Overrides;
use octo_app::{Launch, LaunchError, Launcher, Resume, Session, SessionOptions};

/// Flags that override configuration.
pub fn overrides(cli: &Cli) -> Overrides {
    Overrides {
        endpoint: cli.endpoint.clone(),
        model: cli.model.clone(),
        permission_mode: if cli.auto_approve {
            Some("auto".into())
        } else if dont_ask(cli) {
            Some("default".into())
        } else {
            cli.permission_mode.clone()
        },
        max_turns: cli.max_turns,
        reasoning_effort: cli.reasoning_effort.clone(),
        max_tokens: cli.max_tokens,
        max_budget_usd: cli.max_budget_usd.clone(),
        sandbox: cli.sandbox.clone(),
        allowed_tools: cli.allowed_tools.clone(),
        disallowed_tools: cli.disallowed_tools.clone(),
        plugin_dirs: cli.plugin_dirs.clone(),
    }
}

/// Claude Code's `dontAsk` mode: the default mode with nobody to ask, so what no rule allows is
/// refused.
fn dont_ask(cli: &Cli) -> bool {
    cli.permission_mode
        .as_deref()
        .is_some_and(|m| matches!(m.trim().to_ascii_lowercase().replace(['-', '_'], "").as_str(), "dontask"))
}

/// Flags whose values are checked before anything starts: `--mcp-config` (each must read) and
/// `--session-id` (a name a session file can have, not taken yet). The message says which.
pub fn check_flags(cli: &Cli, launcher: &Launcher) -> Result<(), String> {
    for value in &cli.mcp_config {
        octo_app::mcp::servers_from_flag(value).map_err(|e| e.to_string())?;
    }
    if let Some(id) = &cli.session_id {
        let fine = !id.is_empty()
            && id.len() <= 64
            && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !fine {
            return Err(format!("--session-id {id}: use letters, digits, `-` and `_` (a UUID works)"));
        }
        if launcher.sessions().dir().join(format!("{id}.jsonl")).exists() {
            return Err(format!("--session-id {id} is already in use; continue it with --resume {id}"));
        }
    }
    Ok(())
}

/// The servers `--mcp-config` adds (checked already by [`check_flags`]).
fn flag_servers(cli: &Cli) -> Vec<(String, octo_app::McpServerSpec)> {
    cli.mcp_config.iter().filter_map(|v| octo_app::mcp::servers_from_flag(v).ok()).flatten().collect()
}

/// The session `-c` asks for, unless `resume` names one.
fn resume_of(cli: &Cli, resume: Option<String>) -> Resume {
    let asked = cli.continue_session.clone().or_else(|| cli.resume.clone().filter(|q| !q.is_empty()));
    match (resume, asked) {
        (Some(id), _) => Resume::Id(id),
        (None, Some(q)) => Resume::Find(q),
        (None, None) => Resume::New,
    }
}

/// What the flags ask for (`unattended` for headless runs).
pub fn launch_of(cli: &Cli, unattended: bool, resume: Option<String>) -> Launch {
    Launch {
        workspace: cli.workspace.clone(),
        overrides: overrides(cli),
        resume: resume_of(cli, resume),
        options: SessionOptions {
            no_tools: cli.no_tools,
            system_prompt: cli.system.clone(),
            append_system_prompt: cli.append_system_prompt.clone(),
            unattended: unattended || dont_ask(cli),
            session_id: cli.session_id.clone(),
            no_stream: cli.no_stream,
            save: !cli.no_save,
            log_events: cli.log_events,
            model_titles: !unattended,
            max_attempts: std::env::var("OCTO_MAX_ATTEMPTS").ok().and_then(|v| v.parse().ok()),
            ..SessionOptions::default()
        },
    }
}

/// The exit code for a launch that failed.
pub fn exit_code(e: &LaunchError) -> u8 {
    if e.is_usage() {
        EXIT_USAGE
    } else {
        EXIT_ERROR
    }
}

/// Starts the session of a one-shot run: unattended unless someone is at a terminal to answer
/// its approvals; never asking the model for a title (the run ends with its answer).
pub fn start_one_shot(launcher: &Launcher, cli: &Cli, interactive: bool) -> Result<Session, LaunchError> {
    let mut launch = launch_of(cli, !interactive, None);
    launch.options.model_titles = false;
    launcher.start_with_servers(launch, flag_servers(cli))
}

/// Starts the session of a headless subcommand (`octo review`, `octo init`): unattended, no
/// title; an error is printed and becomes the exit code.
pub fn start_headless(cli: &Cli) -> Result<Session, std::process::ExitCode> {
    start_one_shot(&Launcher::from_env(), cli, false).map_err(|e| {
        crate::out::error(&e.to_string());
        std::process::ExitCode::from(exit_code(&e))
    })
}

/// Starts a session as the flags ask (resuming `resume`, an id, when given).
pub fn start(
    launcher: &Launcher,
    cli: &Cli,
    unattended: bool,
    resume: Option<String>,
) -> Result<Session, LaunchError> {
    launcher.start_with_servers(launch_of(cli, unattended, resume), flag_servers(cli))
}

/// Starts the REPL's session: as [`start`], attended, and a background sub-agent's approval
/// after its parent's turn reaches the prompt (answered with `/allow` or `/deny`).
pub fn start_repl(launcher: &Launcher, cli: &Cli, resume: Option<String>) -> Result<Session, LaunchError> {
    let mut launch = launch_of(cli, false, resume);
    launch.options.approvals_between_turns = true;
    launcher.start_with_servers(launch, flag_servers(cli))
}

/// The end of a one-shot: what follows its turn is done (the checkpoint stored), then
/// [`stop_processes`].
pub async fn finish(session: &octo_app::Session) {
    session.settle().await;
    stop_processes(session);
}

/// Stops what the session's commands left running and names the background commands that were
/// still running, so nothing outlives octo unnoticed.
pub fn stop_processes(session: &octo_app::Session) {
    for shell in session.tools().stop_processes() {
        crate::out::status(&format!("octo: stopped background command {shell}"));
    }
}
