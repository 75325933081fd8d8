//! What a session is started with, and what it reports about itself.

use crate::fold::TurnSummary;
use crate::permissions::Mode;
use octo_agent::{ReasoningEffort, Usage};
use std::path::PathBuf;

/// What to start a session with. Unset fields come from the configuration.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// The workspace (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// `endpoint` or `endpoint:model`.
    pub model: Option<String>,
    /// Whether the model gets tools (`--no-tools` turns them off).
    pub no_tools: bool,
    /// Permission mode.
    pub mode: Option<Mode>,
    /// Model requests per turn.
    pub max_turns: Option<u32>,
    /// Replaces octo's base system prompt.
    pub system_prompt: Option<String>,
    /// Added at the end of the system prompt (`--append-system-prompt`).
    pub append_system_prompt: Option<String>,
    /// Output cap per request.
    pub max_tokens: Option<u32>,
    /// Reasoning effort.
    pub reasoning: Option<ReasoningEffort>,
    /// Nobody will answer approvals (headless runs): they are denied, with a message telling the
    /// model how the user can allow them.
    pub unattended: bool,
    /// The front end answers approvals that come between turns (a background sub-agent's, after
    /// its parent's turn ended) — `octo serve`'s web UI does; otherwise they are denied.
    pub approvals_between_turns: bool,
    /// Attempts per model request, the first included (default 5).
    pub max_attempts: Option<u32>,
    /// Ask for whole responses instead of streams.
    pub no_stream: bool,
    /// Save the conversation under `~/.octo/sessions` as it goes.
    pub save: bool,
    /// Continue this saved session (an id; see `sessions::SessionStore::find`).
    pub resume: Option<String>,
    /// Append every event to `logs/<session>.jsonl` in octo's home (also `log_events` in the
    /// config).
    pub log_events: bool,
    /// Ask the model for a short title after the first exchange (in the background).
    pub model_titles: bool,
    /// The id a new session is saved under (default: a fresh one), for front ends that name it
    /// before its first round (`octo acp`).
    pub session_id: Option<String>,
    /// An editor's open buffers, which `read_file` reads before the disk (`octo acp`).
    pub buffers: Option<std::sync::Arc<dyn octo_tools::Buffers>>,
}

/// Whether a turn is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for a prompt.
    Idle,
    /// A turn is running.
    Running,
}

/// A snapshot of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Idle or running.
    pub state: State,
    /// Completed turns.
    pub turns: u32,
    /// Tokens of every request so far.
    pub usage: Usage,
    /// Cost so far in USD, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// `endpoint:model`.
    pub model: String,
    /// Permission mode.
    pub mode: Mode,
    /// The OS sandbox commands run in, and how (or why there is none).
    pub sandbox: String,
    /// Prompts waiting behind the running turn.
    pub queued: usize,
    /// Tokens the conversation filled at the last request (input, cache read and write).
    pub context_tokens: u64,
    /// The model's context window, when known.
    pub context_window: Option<u64>,
}

/// The result of [`crate::Session::run`]: the turn's summary.
pub type RunResult = TurnSummary;
