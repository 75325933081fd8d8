//! The lines between octo and the engine program: one JSON object per line on the engine's
//! stdin (what to load, what to answer, what to stop) and on its stdout (ready, events, the
//! end of each answer). Private to the two ends, both built from this crate at one version.

use crate::stats::Stats;
use octo_agent::{ErrorKind, ProviderError, StopReason, StreamEvent, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// What octo sends.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToEngine {
    /// The first line: load this model and make a context.
    Open(Open),
    /// Answer a request; events come back under `id`.
    Job(WireJob),
    /// Stop answering request `id` (its stream was dropped).
    Cancel(u64),
}

/// How to run the model (the parts of [`crate::LocalConfig`] the engine needs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Open {
    /// The GGUF file.
    pub path: PathBuf,
    /// The most context tokens.
    pub context_size: Option<u32>,
    /// CPU threads.
    pub threads: Option<usize>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Whether tools are offered (`None`: by the model's size).
    pub tools: Option<bool>,
}

/// One request, as the worker takes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireJob {
    /// Which request this is (events come back under it).
    pub id: u64,
    /// OpenAI `messages`.
    pub messages: Value,
    /// OpenAI `tools`, when there are any.
    pub tools: Option<Value>,
    /// `auto`, `required` or `none`.
    pub tool_choice: String,
    /// The one tool a call must use.
    pub only_tool: Option<String>,
    /// Output cap.
    pub max_tokens: u32,
    /// Where a small model's answer ends when nobody set a limit.
    pub soft_cap: Option<u32>,
}

/// What the model is, once loaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Info {
    /// The context size in tokens.
    pub n_ctx: u32,
    /// A note for the user about how the model is run.
    pub notice: Option<String>,
    /// Offered no tools.
    pub chat_only: bool,
    /// Fewer parameters than a tool-call format needs.
    pub small: bool,
}

/// What the engine sends.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromEngine {
    /// The answer to `Open`.
    Ready(Result<Info, String>),
    /// One event of request `id`.
    Event(u64, WireEvent),
    /// Request `id` failed.
    Error(u64, WireError),
    /// Request `id` is over (what it did).
    End(u64, WireStats),
}

/// A [`StreamEvent`] on the wire (the ones a local model produces).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireEvent {
    /// More answer text.
    Text(String),
    /// More reasoning text.
    Thinking(String),
    /// A tool call starts.
    ToolStart { index: usize, id: String, name: String },
    /// A fragment of its arguments.
    ToolInput { index: usize, json: String },
    /// Its arguments are complete.
    ToolStop { index: usize },
    /// Usage so far.
    Usage(Usage),
    /// Why it stopped.
    Stop(StopReason),
    /// How the prompt's reading goes.
    Progress(String),
}

impl WireEvent {
    /// The wire form, or `None` for an event a local model never produces.
    #[cfg_attr(not(feature = "engine"), allow(dead_code))]
    pub fn from_event(ev: StreamEvent) -> Option<Self> {
        Some(match ev {
            StreamEvent::TextDelta(t) => Self::Text(t),
            StreamEvent::ThinkingDelta(t) => Self::Thinking(t),
            StreamEvent::ToolUseStart { index, id, name } => Self::ToolStart { index, id, name },
            StreamEvent::ToolUseInputDelta { index, partial_json } => {
                Self::ToolInput { index, json: partial_json }
            }
            StreamEvent::ToolUseStop { index } => Self::ToolStop { index },
            StreamEvent::Usage(u) => Self::Usage(u),
            StreamEvent::Stop(s) => Self::Stop(s),
            StreamEvent::Progress(p) => Self::Progress(p),
            _ => return None,
        })
    }

    /// Back to the stream event.
    pub fn into_event(self) -> StreamEvent {
        match self {
            Self::Text(t) => StreamEvent::TextDelta(t),
            Self::Thinking(t) => StreamEvent::ThinkingDelta(t),
            Self::ToolStart { index, id, name } => StreamEvent::ToolUseStart { index, id, name },
            Self::ToolInput { index, json } => StreamEvent::ToolUseInputDelta { index, partial_json: json },
            Self::ToolStop { index } => StreamEvent::ToolUseStop { index },
            Self::Usage(u) => StreamEvent::Usage(u),
            Self::Stop(s) => StreamEvent::Stop(s),
            Self::Progress(p) => StreamEvent::Progress(p),
        }
    }
}

/// A [`ProviderError`] on the wire: its kind, message and the numbers some kinds carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireError {
    kind: ErrorKind,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    number: Option<u64>,
}

impl From<&ProviderError> for WireError {
    fn from(e: &ProviderError) -> Self {
        let (message, status, number) = match e {
            ProviderError::InvalidRequest { status, message } | ProviderError::Server { status, message } => {
                (message.clone(), *status, None)
            }
            ProviderError::ContextTooLong { deficit, message } => (message.clone(), None, *deficit),
            ProviderError::RateLimited { retry_after, message }
            | ProviderError::Overloaded { retry_after, message } => {
                (message.clone(), None, retry_after.map(|d| d.as_secs()))
            }
            ProviderError::Auth { message }
            | ProviderError::Transport { message }
            | ProviderError::MalformedStream { message }
            | ProviderError::Unsupported { message }
            | ProviderError::BadEndpoint { message } => (message.clone(), None, None),
            other => (other.to_string(), None, None),
        };
        Self { kind: e.kind(), message, status, number }
    }
}

impl From<WireError> for ProviderError {
    fn from(w: WireError) -> Self {
        let WireError { kind, message, status, number } = w;
        let after = number.map(Duration::from_secs);
        match kind {
            ErrorKind::Auth => Self::Auth { message },
            ErrorKind::RateLimited => Self::RateLimited { retry_after: after, message },
            ErrorKind::Overloaded => Self::Overloaded { retry_after: after, message },
            ErrorKind::ContextTooLong => Self::ContextTooLong { deficit: number, message },
            ErrorKind::InvalidRequest => Self::InvalidRequest { status, message },
            ErrorKind::Transport => Self::Transport { message },
            ErrorKind::MalformedStream => Self::MalformedStream { message },
            ErrorKind::Unsupported => Self::Unsupported { message },
            ErrorKind::BadEndpoint => Self::BadEndpoint { message },
            ErrorKind::Cancelled => Self::Cancelled,
            _ => Self::Server { status, message },
        }
    }
}

/// [`Stats`] on the wire (durations in microseconds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WireStats {
    prompt: usize,
    evaluated: usize,
    reused: usize,
    generated: usize,
    first_token_us: Option<u64>,
    total_us: u64,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl From<&Stats> for WireStats {
    fn from(s: &Stats) -> Self {
        Self {
            prompt: s.prompt_tokens,
            evaluated: s.evaluated_tokens,
            reused: s.reused_tokens,
            generated: s.generated_tokens,
            first_token_us: s.time_to_first_token.map(micros),
            total_us: micros(s.total),
        }
    }
}

impl From<WireStats> for Stats {
    fn from(w: WireStats) -> Self {
        Self {
            prompt_tokens: w.prompt,
            evaluated_tokens: w.evaluated,
            reused_tokens: w.reused,
            generated_tokens: w.generated,
            time_to_first_token: w.first_token_us.map(Duration::from_micros),
            total: Duration::from_micros(w.total_us),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(e: ProviderError) -> ProviderError {
        let line = serde_json::to_string(&FromEngine::Error(1, WireError::from(&e))).unwrap();
        match serde_json::from_str::<FromEngine>(&line).unwrap() {
            FromEngine::Error(1, w) => w.into(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_keep_their_kind_and_numbers() {
        for e in [
            ProviderError::ContextTooLong { deficit: Some(12), message: "too long".into() },
            ProviderError::InvalidRequest { status: None, message: "bad".into() },
            ProviderError::Server { status: None, message: "engine".into() },
            ProviderError::Transport { message: "gone".into() },
            ProviderError::Cancelled,
        ] {
            assert_eq!(round_trip(e.clone()), e);
        }
    }

    #[test]
    fn events_and_stats_survive_the_line() {
        let evs = [
            StreamEvent::TextDelta("hi\nthere".into()),
            StreamEvent::ToolUseStart { index: 0, id: "c1".into(), name: "read_file".into() },
            StreamEvent::ToolUseInputDelta { index: 0, partial_json: "{\"path\":".into() },
            StreamEvent::ToolUseStop { index: 0 },
            StreamEvent::Usage(Usage {
                input_tokens: 3,
                cache_read_tokens: 4,
                output_tokens: 5,
                ..Usage::default()
            }),
            StreamEvent::Stop(StopReason::ToolUse),
            StreamEvent::Progress("reading".into()),
        ];
        for ev in evs {
            let w = WireEvent::from_event(ev.clone()).unwrap();
            let line = serde_json::to_string(&FromEngine::Event(7, w)).unwrap();
            assert!(!line.contains('\n'));
            match serde_json::from_str::<FromEngine>(&line).unwrap() {
                FromEngine::Event(7, w) => assert_eq!(w.into_event(), ev),
                other => panic!("{other:?}"),
            }
        }
        let s = Stats {
            prompt_tokens: 10,
            evaluated_tokens: 4,
            reused_tokens: 6,
            generated_tokens: 2,
            time_to_first_token: Some(Duration::from_millis(15)),
            total: Duration::from_millis(40),
        };
        assert_eq!(Stats::from(WireStats::from(&s)), s);
    }
}
