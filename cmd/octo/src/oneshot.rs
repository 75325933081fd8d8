//! A headless run: one prompt, the full tool loop, then exit.

use crate::cli::{Cli, OutputFormat};
use crate::{out, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE};
use octo_app::config::{octo_home, process_env, Config, Overrides};
use octo_app::credentials::{CredentialStore, FileStore, MemoryStore, OsKeyring};
use octo_app::sessions::{Found, SessionStore};
use octo_app::{AgentEvent, Session, SessionError, SessionOptions, TurnEndReason};
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;
use tokio::sync::broadcast::error::RecvError;

/// The credential store: a key file when `OCTO_KEYRING_FILE` names one (machines without a
/// keyring service), none at all when `OCTO_NO_KEYRING` is set, else the OS keyring.
pub fn store() -> Box<dyn CredentialStore> {
    if let Some(path) = std::env::var_os("OCTO_KEYRING_FILE").filter(|p| !p.is_empty()) {
        Box::new(FileStore::new(path))
    } else if std::env::var_os("OCTO_NO_KEYRING").is_some() {
        Box::new(MemoryStore::default())
    } else {
        Box::new(OsKeyring)
    }
}

/// Where [`store`] keeps keys, for messages.
pub fn store_name() -> &'static str {
    if std::env::var_os("OCTO_KEYRING_FILE").is_some_and(|p| !p.is_empty()) {
        "the key file (OCTO_KEYRING_FILE)"
    } else if std::env::var_os("OCTO_NO_KEYRING").is_some() {
        "no key store (OCTO_NO_KEYRING is set)"
    } else {
        "the OS keyring"
    }
}

/// Whether [`store`] keeps keys beyond this process.
pub fn store_persists() -> bool {
    std::env::var_os("OCTO_KEYRING_FILE").is_some_and(|p| !p.is_empty())
        || std::env::var_os("OCTO_NO_KEYRING").is_none()
}

/// Flags that override configuration.
pub fn overrides(cli: &Cli) -> Overrides {
    Overrides {
        endpoint: cli.endpoint.clone(),
        model: cli.model.clone(),
        permission_mode: if cli.auto_approve { Some("auto".into()) } else { cli.permission_mode.clone() },
        max_turns: cli.max_turns,
        reasoning_effort: cli.reasoning_effort.clone(),
        max_tokens: cli.max_tokens,
    }
}

/// The workspace: `--workspace` or the current directory, which must exist.
pub fn workspace(cli: &Cli) -> Result<std::path::PathBuf, String> {
    let ws = match &cli.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    if !ws.is_dir() {
        return Err(format!("the workspace {} is not a directory", ws.display()));
    }
    Ok(ws.canonicalize().unwrap_or(ws))
}

/// The saved sessions.
pub fn session_store() -> SessionStore {
    SessionStore::new(octo_home().join("sessions"))
}

/// Finds the session `-c` asks for, in this directory; explains several matches, no match, or a
/// match that belongs to another directory.
pub fn find_session(query: &str, ws: &std::path::Path) -> Result<String, (u8, String)> {
    let store = session_store();
    let err = |e: octo_app::sessions::SessionError| (EXIT_ERROR, e.to_string());
    match store.find(query, Some(ws)).map_err(err)? {
        Found::One(s) => Ok(s.id),
        Found::Several(list) => {
            let now = octo_app::sessions::now();
            let lines: Vec<String> = list.iter().map(|s| format!("  {}", s.line(now))).collect();
            Err((
                EXIT_USAGE,
                format!("several sessions match `{query}`:\n{}\nGive a longer id prefix.", lines.join("\n")),
            ))
        }
        Found::None => match store.find(query, None).map_err(err)? {
            Found::One(s) => Err((
                EXIT_USAGE,
                format!(
                    "session {} belongs to {}; continue it there (cd {} && octo -c={})",
                    s.id,
                    s.cwd.display(),
                    s.cwd.display(),
                    s.id
                ),
            )),
            _ if query == "last" => {
                Err((EXIT_USAGE, "there is no saved session in this directory yet".into()))
            }
            _ => Err((
                EXIT_USAGE,
                format!("no session of this directory matches `{query}`; `octo sessions` lists them"),
            )),
        },
    }
}

/// Loads configuration and starts a session (`unattended` for headless runs).
pub fn start(cli: &Cli, unattended: bool) -> Result<Session, (u8, String)> {
    start_with(cli, unattended, None)
}

/// Like [`start`], resuming `resume` (an id) instead of what `-c` asks for.
pub fn start_with(cli: &Cli, unattended: bool, resume: Option<String>) -> Result<Session, (u8, String)> {
    let ws = workspace(cli).map_err(|e| (EXIT_USAGE, e))?;
    let resume = match (resume, &cli.continue_session) {
        (Some(id), _) => Some(id),
        (None, Some(q)) => Some(find_session(q, &ws)?),
        (None, None) => None,
    };
    let config = Config::load(&octo_home(), &ws, &process_env, &overrides(cli))
        .map_err(|e| (EXIT_USAGE, e.to_string()))?;
    let options = SessionOptions {
        workspace: Some(ws),
        no_tools: cli.no_tools,
        system_prompt: cli.system.clone(),
        unattended,
        no_stream: cli.no_stream,
        save: !cli.no_save,
        resume,
        model_titles: !unattended,
        max_attempts: std::env::var("OCTO_MAX_ATTEMPTS").ok().and_then(|v| v.parse().ok()),
        ..SessionOptions::default()
    };
    Session::start(config, options, store().as_ref(), &process_env).map_err(|e| match e {
        SessionError::Config(_) | SessionError::Endpoint(_) | SessionError::OtherDirectory { .. } => {
            (EXIT_USAGE, e.to_string())
        }
        other => (EXIT_ERROR, other.to_string()),
    })
}

fn short(v: &serde_json::Value) -> String {
    let s = match v
        .get("command")
        .or_else(|| v.get("path"))
        .or_else(|| v.get("pattern"))
        .or_else(|| v.get("url"))
    {
        Some(serde_json::Value::String(s)) => s.clone(),
        _ => v.to_string(),
    };
    let one_line = s.lines().next().unwrap_or_default();
    let mut t: String = one_line.chars().take(100).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t
}

/// Runs `prompt` to the end and prints the result in the chosen format.
pub async fn run(cli: &Cli, prompt: String) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let session = match start(cli, true) {
        Ok(s) => s,
        Err((code, msg)) => {
            out::error(&msg);
            return Ok(ExitCode::from(code));
        }
    };
    if !cli.quiet {
        for n in session.notes() {
            out::status(&format!("octo: note: {n}"));
        }
    }
    let mut rx = session.subscribe();
    // Listen for Ctrl-C before the request starts, so an early one is not lost to the default
    // handler (which would end the process without the usual cleanup and exit code).
    let mut interrupts = Interrupts::new();
    session.prompt(prompt)?;
    let mut answer = String::new();
    let mut denied = Vec::new();
    let mut error: Option<String> = None;
    let mut interrupted = false;
    let mut closed_stdout = false;
    let (reason, usage, stop_reason) = loop {
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
        if cli.output_format == OutputFormat::StreamJson && !closed_stdout {
            let line = serde_json::to_string(&event).unwrap_or_default();
            if !out::stdout(&format!("{line}\n")) {
                // The reader went away: stop working for nobody.
                closed_stdout = true;
                session.abort();
            }
        }
        match event {
            AgentEvent::RequestStart { continues: false, .. } => answer.clear(),
            AgentEvent::TextDelta { text } => answer.push_str(&text),
            AgentEvent::ToolCallStart { name, input, .. }
                if !cli.quiet && cli.output_format == OutputFormat::Text =>
            {
                out::status(&format!("● {name} {}", short(&input)));
            }
            AgentEvent::ToolCallEnd { name, is_error, duration_ms, output, .. } => {
                if is_error && duration_ms == 0 {
                    denied.push(name.clone());
                }
                if cli.verbose && cli.output_format == OutputFormat::Text {
                    let first =
                        output.lines().next().unwrap_or_default().chars().take(120).collect::<String>();
                    out::status(&format!(
                        "  {} {name} ({duration_ms} ms) {first}",
                        if is_error { "✗" } else { "✓" }
                    ));
                }
            }
            AgentEvent::Notice { message } if !cli.quiet && cli.output_format == OutputFormat::Text => {
                out::status(&format!("octo: {message}"));
            }
            AgentEvent::Retry { attempt, max_attempts, delay_ms, reason }
                if !cli.quiet && cli.output_format == OutputFormat::Text =>
            {
                out::status(&format!(
                    "octo: retrying in {:.1}s (attempt {attempt}/{max_attempts}): {reason}",
                    delay_ms as f64 / 1000.0
                ));
            }
            AgentEvent::CompactionEnd { tokens_after, messages_folded, reclaimed, .. }
                if !cli.quiet && cli.output_format == OutputFormat::Text =>
            {
                out::status(&format!(
                    "octo: compacted the conversation to ~{tokens_after} tokens ({messages_folded} messages summarized, {reclaimed} old outputs dropped)"
                ));
            }
            AgentEvent::Error { message, .. } => error = Some(message),
            AgentEvent::TurnEnd { reason, usage, stop_reason, .. } => break (reason, usage, stop_reason),
            _ => {}
        }
    };
    let status = session.status();
    let failed = reason == TurnEndReason::Failed;
    match cli.output_format {
        OutputFormat::Text => {
            if let Some(e) = &error {
                if !interrupted {
                    out::error(e);
                }
            }
            if !failed && !answer.is_empty() {
                let text = if answer.ends_with('\n') { answer.clone() } else { format!("{answer}\n") };
                out::stdout(&text);
            }
            if cli.verbose {
                if let Some(id) = session.session_id() {
                    out::status(&format!("octo: saved as session {id} (continue with `octo -c={id}`)"));
                }
                let cost = status.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
                out::status(&format!(
                    "octo: {} · {} in / {} out tokens ({} cached){cost} · {:.1}s",
                    status.model,
                    usage.input_tokens + usage.cache_write_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    started.elapsed().as_secs_f64()
                ));
            }
        }
        OutputFormat::Json => {
            let result = json!({
                "type": "result",
                "is_error": failed || interrupted,
                "answer": if failed { serde_json::Value::Null } else { json!(answer) },
                "error": error,
                "end_reason": reason,
                "stop_reason": stop_reason,
                "session_id": session.session_id(),
                "model": status.model,
                "turns": status.turns,
                "usage": usage,
                "cost_usd": status.cost_usd,
                "duration_ms": started.elapsed().as_millis() as u64,
                "denied_tool_calls": denied,
            });
            out::stdout(&format!("{result}\n"));
        }
        OutputFormat::StreamJson => {}
    }
    Ok(if interrupted || reason == TurnEndReason::Cancelled && !closed_stdout {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if failed || closed_stdout {
        ExitCode::from(EXIT_ERROR)
    } else {
        ExitCode::SUCCESS
    })
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
