//! A headless run: one prompt, the full tool loop, then exit.

use crate::cli::Cli;
use crate::exit::{EXIT_ERROR, EXIT_INTERRUPTED};
use crate::{launch, out, output};
use octo_app::{Launcher, TurnEndReason, TurnFold};
use std::process::ExitCode;
use std::time::Instant;
use tokio::sync::broadcast::error::RecvError;

/// Runs `prompt` to the end and prints the result in the chosen format.
pub async fn run(cli: &Cli, prompt: String) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let launcher = Launcher::from_env();
    let session = match launch::start(&launcher, cli, true, None) {
        Ok(s) => s,
        Err(e) => {
            out::error(&e.to_string());
            return Ok(ExitCode::from(launch::exit_code(&e)));
        }
    };
    if !cli.quiet {
        for n in session.notes() {
            out::status(&crate::sanitize::visible(&format!("octo: note: {n}")));
        }
        if let Some(text) = session.unanswered() {
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
    let mut rx = session.subscribe();
    // Listen for Ctrl-C before the request starts, so an early one is not lost to the default
    // handler (which would end the process without the usual cleanup and exit code).
    let mut interrupts = Interrupts::new();
    session.prompt_prepared(prepared)?;
    let mut renderer = output::for_cli(cli, started);
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
        let done = fold.push(&event);
        if !closed_stdout && !renderer.event(&event, &fold) {
            // The reader went away: stop working for nobody.
            closed_stdout = true;
            session.abort();
        }
        if done {
            break;
        }
    }
    let summary = session.summarize(&fold);
    if !closed_stdout {
        renderer.finish(&summary);
    }
    crate::launch::stop_processes(&session);
    Ok(if interrupted || summary.end_reason == TurnEndReason::Cancelled && !closed_stdout {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if summary.failed() || closed_stdout {
        ExitCode::from(EXIT_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}

/// `/name` and its arguments, when `prompt` is a slash command (not `/ …` or a path such as
/// `/usr/bin/env is broken`).
pub fn slash_word(prompt: &str) -> Option<(&str, &str)> {
    let p = prompt.trim();
    let (name, arg) = p.split_once(char::is_whitespace).map_or((p, ""), |(n, a)| (n, a.trim()));
    (name.len() > 1 && name.starts_with('/') && !name[1..].contains('/')).then_some((name, arg))
}

/// Ctrl-C, listened for from the moment this is created.
struct Interrupts {
    #[cfg(unix)]
    sigint: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    fn new() -> Self {
        Self {
            #[cfg(unix)]
            sigint: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok(),
        }
    }

    /// The next Ctrl-C.
    async fn next(&mut self) {
        #[cfg(unix)]
        if let Some(s) = self.sigint.as_mut() {
            s.recv().await;
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
