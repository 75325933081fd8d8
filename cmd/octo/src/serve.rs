//! `octo serve`: in the foreground until Ctrl-C or SIGTERM, or as a daemon with a pid file.

use crate::cli::Cli;
use crate::exit::{EXIT_ERROR, EXIT_USAGE};
use crate::out;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Where a daemon's child writes its pid (set by the parent).
const PID_VAR: &str = "OCTO_SERVE_PID_FILE";

/// Runs `octo serve`.
pub fn run(
    cli: &Cli,
    listen: SocketAddr,
    allow_remote: bool,
    roots: &[PathBuf],
    daemon: bool,
    channels_only: bool,
) -> anyhow::Result<ExitCode> {
    // The top-level flags (`octo --sandbox read-only --log-events serve`) apply to every session.
    let launcher =
        octo_app::Launcher::from_env().with_defaults(crate::launch::overrides(cli), cli.log_events);
    let roots =
        if roots.is_empty() { vec![launcher.workspace(cli.workspace.as_deref())?] } else { roots.to_vec() };
    // `octo --endpoint x serve`: every session starts on x, so an x that cannot be used is said
    // now, not at the first prompt.
    if cli.endpoint.is_some() || cli.model.is_some() {
        let overrides = octo_app::config::Overrides {
            endpoint: cli.endpoint.clone(),
            model: cli.model.clone(),
            ..octo_app::config::Overrides::default()
        };
        let checked = launcher.config(&roots[0], &overrides).map_err(|e| e.to_string()).and_then(|c| {
            octo_app::factory::resolve(&c, None, launcher.credentials(), launcher.env())
                .map_err(|e| e.to_string())
        });
        if let Err(e) = checked {
            out::error(&e);
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    }
    if daemon {
        return start_daemon(&launcher, cli, listen, (allow_remote, channels_only), &roots);
    }
    let pid_file = std::env::var_os(PID_VAR).map(PathBuf::from);
    if let Some(p) = &pid_file {
        let _ = std::fs::write(p, format!("{}\n", std::process::id()));
    }
    let options = octo_server::ServeOptions { listen, allow_remote, roots, channels_only };
    let served = crate::exit::runtime()?.block_on(octo_server::serve(launcher, options, |link| {
        out::status(&format!("octo serve: open {link}"));
    }));
    if let Some(p) = &pid_file {
        let _ = std::fs::remove_file(p);
    }
    Ok(match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            out::error(&e.to_string());
            ExitCode::from(if matches!(e, octo_server::ServerError::Remote(_)) {
                EXIT_USAGE
            } else {
                EXIT_ERROR
            })
        }
    })
}

/// The pid in `file` when that process is alive.
fn running(file: &Path) -> Option<u32> {
    let pid: u32 = std::fs::read_to_string(file).ok()?.trim().parse().ok()?;
    #[cfg(unix)]
    {
        let alive = std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        alive.then_some(pid)
    }
    #[cfg(not(unix))]
    {
        Some(pid)
    }
}

fn start_daemon(
    launcher: &octo_app::Launcher,
    cli: &Cli,
    listen: SocketAddr,
    (allow_remote, channels_only): (bool, bool),
    roots: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    if listen.port() == 0 {
        out::error("--daemon needs a fixed port (--listen 127.0.0.1:8088)");
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    if !listen.ip().is_loopback() && !allow_remote {
        out::error(&octo_server::ServerError::Remote(listen).to_string());
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let home = launcher.home().root().to_path_buf();
    let pid_file = home.join("serve.pid");
    if let Some(pid) = running(&pid_file) {
        out::error(&format!("octo serve is already running (pid {pid}; {})", pid_file.display()));
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    let logs = home.join("logs");
    std::fs::create_dir_all(&logs)?;
    let log_path = logs.join("serve.log");
    let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path)?;
    let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);
    octo_server::load_or_create_token(&home)?;
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.args(top_level_flags(cli));
    cmd.arg("serve").arg("--listen").arg(listen.to_string());
    if allow_remote {
        cmd.arg("--allow-remote");
    }
    if channels_only {
        cmd.arg("--channels-only");
    }
    for r in roots {
        cmd.arg("--root").arg(r);
    }
    cmd.env(PID_VAR, &pid_file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: Ctrl-C in this terminal does not reach it.
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if std::net::TcpStream::connect_timeout(&listen, Duration::from_millis(200)).is_ok() {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
            let last = tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            out::error(&format!("octo serve did not start ({status}): {last}"));
            return Ok(ExitCode::from(EXIT_ERROR));
        }
        if Instant::now() > deadline {
            out::error(&format!("octo serve did not start listening in time; see {}", log_path.display()));
            return Ok(ExitCode::from(EXIT_ERROR));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let shown =
        if listen.ip().is_unspecified() { SocketAddr::from(([127, 0, 0, 1], listen.port())) } else { listen };
    // The one-time login link is the server's own; it writes it to its log as it starts.
    match login_link(&log_path, log_start) {
        Some(link) => out::status(&format!("octo serve: open {link}")),
        None => out::status(&format!(
            "octo serve: open http://{shown}/login?token=<the token in {}>",
            home.join(octo_server::TOKEN_FILE).display()
        )),
    }
    out::status(&format!(
        "octo serve: running in the background (pid {}; stop it with `kill {}`; log {})",
        child.id(),
        child.id(),
        log_path.display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// The login link a background server wrote to its log after `from` (waiting up to 2 s for it).
fn login_link(log: &std::path::Path, from: u64) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let text = std::fs::read(log)
            .ok()
            .map(|b| String::from_utf8_lossy(b.get(from as usize..).unwrap_or(&[])).into_owned());
        let found = text.as_deref().and_then(|t| {
            t.split_whitespace()
                .find(|w| w.starts_with("http") && w.contains("/login?code="))
                .map(str::to_owned)
        });
        if found.is_some() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The top-level flags a background server is started with again, so that `--daemon` keeps them.
fn top_level_flags(cli: &Cli) -> Vec<String> {
    let mut out = Vec::new();
    let pairs = [
        ("--endpoint", cli.endpoint.clone()),
        ("--model", cli.model.clone()),
        ("--permission-mode", cli.permission_mode.clone()),
        ("--sandbox", cli.sandbox.clone()),
        ("--reasoning-effort", cli.reasoning_effort.clone()),
        ("--max-turns", cli.max_turns.map(|n| n.to_string())),
        ("--max-tokens", cli.max_tokens.map(|n| n.to_string())),
        ("--max-budget-usd", cli.max_budget_usd.clone()),
        ("--workspace", cli.workspace.as_ref().map(|w| w.display().to_string())),
    ];
    for (flag, value) in pairs {
        if let Some(v) = value {
            out.push(flag.to_owned());
            out.push(v);
        }
    }
    for (flag, on) in [("--auto-approve", cli.auto_approve), ("--log-events", cli.log_events)] {
        if on {
            out.push(flag.to_owned());
        }
    }
    // One value per occurrence: a list would swallow the subcommand after it.
    for (flag, tools) in
        [("--allowedTools", &cli.allowed_tools), ("--disallowedTools", &cli.disallowed_tools)]
    {
        out.extend(tools.iter().map(|t| format!("{flag}={t}")));
    }
    for dir in &cli.plugin_dirs {
        out.push(format!("--plugin-dir={}", dir.display()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::top_level_flags;
    use crate::cli::Cli;
    use clap::Parser;

    /// `--daemon` starts the server again with the flags it was given: read back, they are the
    /// same, and the subcommand after them is still the subcommand.
    #[test]
    fn the_daemon_is_started_with_every_top_level_flag() {
        let given = Cli::try_parse_from([
            "octo",
            "--endpoint",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--permission-mode",
            "auto",
            "--sandbox",
            "read-only",
            "--max-turns",
            "7",
            "--max-budget-usd",
            "2.5",
            "--log-events",
            "--allowedTools",
            "Bash(git status:*)",
            "Read",
            "--disallowedTools=WebFetch",
            "serve",
            "--daemon",
        ])
        .unwrap();
        let flags = top_level_flags(&given);
        let mut again = vec!["octo".to_owned()];
        again.extend(flags);
        again.push("serve".to_owned());
        let back = Cli::try_parse_from(&again).unwrap();
        assert_eq!(back.endpoint, given.endpoint);
        assert_eq!(back.model, given.model);
        assert_eq!(back.permission_mode, given.permission_mode);
        assert_eq!(back.sandbox, given.sandbox);
        assert_eq!(back.max_turns, given.max_turns);
        assert_eq!(back.max_budget_usd, given.max_budget_usd);
        assert!(back.log_events);
        assert_eq!(back.allowed_tools, given.allowed_tools);
        assert_eq!(back.disallowed_tools, given.disallowed_tools);
        assert!(matches!(back.command, Some(crate::cli::Command::Serve { .. })), "{again:?}");
    }
}
