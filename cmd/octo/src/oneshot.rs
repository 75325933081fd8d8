//! A headless run: one prompt, the full tool loop, then exit.

use crate::cli::Cli;
use crate::exit::{EXIT_DENIED, EXIT_ERROR, EXIT_INTERRUPTED};
use crate::{launch, out, output};
use octo_app::{Launcher, TurnEndReason, TurnFold, TurnSummary};
use std::process::ExitCode;
use std::time::Instant;
use tokio::sync::broadcast::error::RecvError;

/// Runs `prompt` to the end and prints the result in the chosen format. On a terminal (stdin and
/// stdout), the turn streams as the REPL shows it and its approvals are asked; elsewhere nobody
/// can answer them, and the run ends by saying what was refused and how to allow it.
pub async fn run(cli: &Cli, prompt: String) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let started = Instant::now();
    let launcher = Launcher::from_env();
    let interactive = std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && cli.output_format == crate::cli::OutputFormat::Text
        && !cli.quiet;
    let session = match launch::start_one_shot(&launcher, cli, interactive) {
        Ok(s) => s,
        Err(e) => {
            out::error(&e.to_string());
            return Ok(ExitCode::from(launch::exit_code(&e)));
        }
    };
    if !cli.quiet {
        for n in session.conversation().notes() {
            out::status(&crate::sanitize::visible(&format!("octo: note: {n}")));
        }
        if let Some(text) = session.approvals().unanswered() {
            out::status(&crate::sanitize::visible(&format!(
                "octo: note: the last message of this session was never answered (octo stopped before \
                 it could be); it is not in the conversation:\n  > {}",
                crate::output::first_line(text, 200)
            )));
        }
    }
    // `/name args`: a skill or custom command (an unknown one is an error, not a message).
    let prepared = match slash_word(&prompt) {
        Some((name, arg)) => match crate::invoke::headless(&session, name, arg).await {
            Some(Ok(p)) => {
                if !cli.quiet {
                    for n in &p.notes {
                        out::status(&crate::sanitize::visible(&format!("octo: note: {n}")));
                    }
                }
                p
            }
            Some(Err(e)) => {
                out::error(&crate::sanitize::visible(&e));
                crate::launch::stop_processes(&session);
                return Ok(ExitCode::from(crate::exit::EXIT_ERROR));
            }
            None => {
                out::error(&crate::invoke::unknown(&session, name, &[]));
                crate::launch::stop_processes(&session);
                return Ok(ExitCode::from(crate::exit::EXIT_USAGE));
            }
        },
        None => octo_app::Message::user(prompt).into(),
    };
    if interactive {
        let summary = crate::repl::run_once(&session, prepared, cli.show_thinking).await?;
        crate::launch::finish(&session).await;
        return Ok(exit_code(&summary, false, false, cli.output_format == crate::cli::OutputFormat::Text));
    }
    let mut rx = session.subscribe();
    // Listen for Ctrl-C before the request starts, so an early one is not lost to the default
    // handler (which would end the process without the usual cleanup and exit code).
    let mut interrupts = Interrupts::new();
    session.prompt(prepared)?;
    let mut renderer = output::for_cli(cli, started, &session);
    let mut fold = TurnFold::new();
    let mut interrupted = false;
    let mut closed_stdout = false;
    loop {
        let event = tokio::select! {
            e = rx.recv() => e,
            () = interrupts.next() => {
                interrupted = true;
                session.abort();
                continue;
            }
        };
        let event = match event {
            Ok(e) => e,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => anyhow::bail!("the session ended unexpectedly"),
        };
        if closed_stdout {
            fold.push(&event);
        } else if !renderer.event(&mut fold, &event) {
            // The reader went away: stop working for nobody.
            closed_stdout = true;
            session.abort();
        }
        if fold.is_done() {
            break;
        }
    }
    let summary = session.conversation().summarize(&fold);
    if !closed_stdout {
        renderer.finish(&summary);
    }
    if !cli.quiet && cli.output_format == crate::cli::OutputFormat::Text {
        report_denials(&session, &summary);
    }
    crate::launch::finish(&session).await;
    Ok(exit_code(&summary, interrupted, closed_stdout, cli.output_format == crate::cli::OutputFormat::Text))
}

/// The exit status: interrupted, failed, cut short by refusals, or done. With JSON output a
/// refusal is in the result's `permission_denials` and the run is done (0), as in Claude Code;
/// plain text has no other way to say it, so there it is exit status 3.
fn exit_code(summary: &TurnSummary, interrupted: bool, closed_stdout: bool, text: bool) -> ExitCode {
    if interrupted || summary.end_reason == TurnEndReason::Cancelled && !closed_stdout {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if summary.failed() || closed_stdout || crate::output::stopped_short(summary) {
        ExitCode::from(EXIT_ERROR)
    } else if text && summary.tool_calls.iter().any(|c| c.outcome.is_denial()) {
        ExitCode::from(EXIT_DENIED)
    } else {
        ExitCode::SUCCESS
    }
}

/// What was refused, and how to allow it, on stderr: the model may say it did what it could
/// not do.
fn report_denials(session: &octo_app::Session, summary: &TurnSummary) {
    let denied: Vec<&octo_app::ToolCallRecord> =
        summary.tool_calls.iter().filter(|c| c.outcome.is_denial()).collect();
    if denied.is_empty() {
        return;
    }
    let n = denied.len();
    let calls = if n == 1 { "1 call was" } else { "calls were" };
    let count = if n == 1 { String::new() } else { format!("{n} ") };
    out::status(&format!(
        "octo: {count}{calls} not run, so the answer above may claim work that was not done:"
    ));
    for c in denied {
        out::status(&crate::sanitize::visible(&format!(
            "  ✗ {} {} [{}] — to allow: {}",
            c.name,
            c.summary,
            c.outcome,
            session.tools().allow_hint(c)
        )));
    }
}

/// `/name` and its arguments, when `prompt` is a slash command (not `/ …` or a path such as
/// `/usr/bin/env is broken`).
pub fn slash_word(prompt: &str) -> Option<(&str, &str)> {
    let p = prompt.trim();
    let (name, arg) = p.split_once(char::is_whitespace).map_or((p, ""), |(n, a)| (n, a.trim()));
    (name.len() > 1 && name.starts_with('/') && !name[1..].contains('/')).then_some((name, arg))
}

/// Ctrl-C, and the signals that end a run as Ctrl-C does (`SIGTERM` from `timeout`, systemd or
/// `docker stop`; `SIGHUP` when the terminal goes away), listened for from the moment this is
/// created: the turn is cancelled and what its commands left running is stopped before octo
/// exits.
struct Interrupts {
    #[cfg(unix)]
    signals: [Option<tokio::signal::unix::Signal>; 3],
}

impl Interrupts {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let on = |k: SignalKind| signal(k).ok();
            Self {
                signals: [on(SignalKind::interrupt()), on(SignalKind::terminate()), on(SignalKind::hangup())],
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next of them.
    async fn next(&mut self) {
        #[cfg(unix)]
        if self.signals.iter().any(Option::is_some) {
            let [int, term, hup] = &mut self.signals;
            tokio::select! {
                () = recv(int) => {}
                () = recv(term) => {}
                () = recv(hup) => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The next delivery of `signal`; never when it could not be listened for.
#[cfg(unix)]
async fn recv(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
