//! Who is scored: octo itself, in-process through the launcher (every tool behind the permission
//! gate in `auto` mode, commands in the OS sandbox with the network off), or another agent's
//! command line run in the same folder and sandbox (`--agent-cmd 'claude -p {prompt}'`; with the
//! network on, which such an agent needs to reach its model).

use octo_app::config::Overrides;
use octo_app::{Launch, Launcher, Session, SessionOptions, TurnEndReason};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;

/// Limits on one task's agent.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Model requests per attempt.
    pub max_turns: u32,
    /// Wall time for the whole task (all attempts).
    pub wall: Duration,
    /// USD per task.
    pub max_cost: Option<f64>,
}

/// The agent being scored.
#[derive(Clone)]
pub enum Agent {
    /// octo, from this launcher (the user's config and keys), on `endpoint`/`model` when given.
    Octo {
        /// Where sessions come from.
        launcher: Box<Launcher>,
        /// `endpoint` or `endpoint:model`.
        endpoint: Option<String>,
        /// A model of that endpoint.
        model: Option<String>,
    },
    /// Another agent's command line: `{prompt}`, `{prompt_file}` and `{dir}` are filled in
    /// (shell-quoted).
    Command(String),
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// What an attempt of the agent came to (before verifying).
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// How it ended, in words (`finished`, `max turns`, `time limit` …).
    pub end: String,
    /// Set when the attempt could not be made at all (`endpoint`, `agent`): no score.
    pub error: Option<(String, String)>,
}

/// Figures gathered over a task's attempts (octo only).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Model requests.
    pub turns: u32,
    /// Tool calls.
    pub tool_calls: u32,
    /// Input tokens (cache reads not included).
    pub tokens_in: u64,
    /// Output tokens.
    pub tokens_out: u64,
    /// Cache reads.
    pub tokens_cached: u64,
    /// USD (`None`: price unknown).
    pub cost_usd: Option<f64>,
}

/// One task's agent, alive across its attempts.
pub enum Run {
    /// An octo session in the task's folder.
    Octo(Box<Session>, Stats),
    /// An outside command for the task's folder.
    Command {
        /// The template.
        template: String,
        /// The folder.
        dir: PathBuf,
    },
}

impl Agent {
    /// Who this is, for the results' header.
    pub fn label(&self) -> String {
        match self {
            Self::Octo { endpoint, model, .. } => {
                // A local GGUF by path is named by its file.
                let model = model.as_ref().map(|m| match m.rsplit_once('/') {
                    Some((_, file)) if m.ends_with(".gguf") => file.to_owned(),
                    _ => m.clone(),
                });
                let which = match (endpoint, &model) {
                    (Some(e), Some(m)) => format!("{e}:{m}"),
                    (Some(e), None) => e.clone(),
                    (None, Some(m)) => m.clone(),
                    (None, None) => "the configured model".into(),
                };
                format!("octo {which}")
            }
            Self::Command(t) => format!("cmd: {t}"),
        }
    }

    /// Starts the agent for a task in `dir`.
    pub fn begin(&self, dir: &Path, limits: &Limits) -> Result<Run, (String, String)> {
        match self {
            Self::Octo { launcher, endpoint, model } => {
                let overrides = Overrides {
                    endpoint: endpoint.clone(),
                    model: model.clone(),
                    permission_mode: Some("auto".into()),
                    max_turns: Some(limits.max_turns),
                    max_budget_usd: limits.max_cost.map(|c| c.to_string()),
                    ..Overrides::default()
                };
                let options = SessionOptions {
                    unattended: true,
                    save: false,
                    model_titles: false,
                    // As for `octo`: attempts per model request, retries included.
                    max_attempts: std::env::var("OCTO_MAX_ATTEMPTS").ok().and_then(|v| v.parse().ok()),
                    ..SessionOptions::default()
                };
                let launch =
                    Launch { workspace: Some(dir.to_path_buf()), overrides, options, ..Launch::default() };
                let kind = |e: &octo_app::LaunchError| if e.is_usage() { "setup" } else { "endpoint" };
                match launcher.start(launch) {
                    Ok(s) => Ok(Run::Octo(Box::new(s), Stats { cost_usd: Some(0.0), ..Stats::default() })),
                    Err(e) => Err((kind(&e).to_owned(), e.to_string())),
                }
            }
            Self::Command(t) => Ok(Run::Command { template: t.clone(), dir: dir.to_path_buf() }),
        }
    }
}

/// `text` as one word of a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl Run {
    /// Gives the agent `prompt`, until it is done or `deadline`.
    pub async fn attempt(&mut self, prompt: &str, deadline: Instant) -> Step {
        let left = deadline.saturating_duration_since(Instant::now());
        match self {
            Self::Octo(session, stats) => octo_attempt(session, stats, prompt, left).await,
            Self::Command { template, dir } => command_attempt(template, dir, prompt, left).await,
        }
    }

    /// What the attempts used.
    pub fn stats(&self) -> Option<Stats> {
        match self {
            Self::Octo(_, s) => Some(s.clone()),
            Self::Command { .. } => None,
        }
    }

    /// Stops what the agent left running.
    pub fn end(&self) {
        if let Self::Octo(s, _) = self {
            s.close();
            let _ = s.tools().stop_processes();
        }
    }
}

async fn octo_attempt(session: &Session, stats: &mut Stats, prompt: &str, left: Duration) -> Step {
    let summary = match tokio::time::timeout(left, session.run(prompt)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Step { end: "error".into(), error: Some(("agent".into(), e.to_string())) },
        Err(_) => {
            session.abort();
            session.settle().await;
            return Step { end: "time limit".into(), error: None };
        }
    };
    stats.turns += summary.requests;
    stats.tool_calls += u32::try_from(summary.tool_calls.len()).unwrap_or(u32::MAX);
    stats.tokens_in += summary.usage.input_tokens + summary.usage.cache_write_tokens;
    stats.tokens_out += summary.usage.output_tokens;
    stats.tokens_cached += summary.usage.cache_read_tokens;
    // Unknown once any attempt's price is unknown.
    stats.cost_usd = stats.cost_usd.zip(summary.cost_usd).map(|(a, b)| a + b);
    let end = match summary.end_reason {
        TurnEndReason::Completed => "finished",
        TurnEndReason::MaxTurns => "max turns",
        TurnEndReason::BudgetExceeded => "budget",
        TurnEndReason::LoopDetected => "loop stopped",
        TurnEndReason::Cancelled => "cancelled",
        _ => "failed",
    };
    let error = (summary.end_reason == TurnEndReason::Failed)
        .then(|| ("endpoint".to_owned(), summary.error.clone().unwrap_or_else(|| "the turn failed".into())));
    Step { end: end.into(), error }
}

async fn command_attempt(template: &str, dir: &Path, prompt: &str, left: Duration) -> Step {
    let prompt_file = dir.with_extension("prompt.md");
    if let Err(e) = std::fs::write(&prompt_file, prompt) {
        return Step { end: "error".into(), error: Some(("setup".into(), e.to_string())) };
    }
    let line = template
        .replace("{prompt_file}", &quote(&prompt_file.to_string_lossy()))
        .replace("{prompt}", &quote(prompt))
        .replace("{dir}", &quote(&dir.to_string_lossy()));
    let spill = dir.with_extension("agent-output.txt");
    match crate::verify::run_agent(&line, dir, left, &spill).await {
        Ok(r) if r.timed_out => Step { end: "time limit".into(), error: None },
        Ok(r) if r.ok => Step { end: "finished".into(), error: None },
        Ok(r) => Step { end: format!("agent ended: {}", r.ending), error: None },
        Err(e) => Step { end: "error".into(), error: Some(("agent".into(), e.to_string())) },
    }
}
