//! The Sender capability stack: how the agent talks to a model.
//!
//! A provider implements what it can:
//!
//! | trait | adds |
//! |---|---|
//! | [`Sender`] | one buffered request → one complete response |
//! | [`StreamingSender`] | the response as a stream of [`StreamEvent`]s |
//! | [`ToolSender`] | tool definitions in the request, tool calls in the response |
//! | [`ToolStreamingSender`] | both |
//!
//! The agent discovers the highest capability at run time through [`Sender::as_streaming`],
//! [`Sender::as_tool`] and [`Sender::as_tool_streaming`]; a provider without streaming or tools
//! still works, with fewer features, and never fails to compile. See [`Capability`].

use crate::error::ProviderError;
use crate::message::Message;
use crate::spec::ToolDefinition;
use crate::usage::{StopReason, Usage};
use async_trait::async_trait;
use futures_core::Stream;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

/// How hard the model should think before answering. Adapters map it to their protocol (a
/// thinking budget, a `reasoning_effort` string) or ignore it where the model cannot reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// No extended reasoning.
    #[default]
    Off,
    /// A little.
    Low,
    /// A moderate amount.
    Medium,
    /// A lot.
    High,
    /// As much as the model allows.
    Max,
}

impl ReasoningEffort {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Max => "max",
        }
    }
}

impl fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReasoningEffort {
    type Err = UnknownEffort;
    fn from_str(s: &str) -> Result<Self, UnknownEffort> {
        match s.to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(Self::Off),
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "max" => Ok(Self::Max),
            other => Err(UnknownEffort(other.to_owned())),
        }
    }
}

/// A reasoning effort that is not one of the known names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown reasoning effort `{0}`: use off, low, medium, high or max")]
pub struct UnknownEffort(pub String);

/// Whether and which tool the model must call. Adapters map it to their protocol.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolChoice<'a> {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must call some tool.
    Any,
    /// The model must not call tools (they stay defined, which keeps prompt caches valid).
    None,
    /// The model must call this tool.
    Tool(&'a str),
}

/// One request to a model. It borrows the history so sending never copies it; the model itself is
/// part of the sender (an adapter is built for one endpoint and model).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Request<'a> {
    /// System prompt, sent in whatever slot the protocol has for it.
    pub system: Option<&'a str>,
    /// The conversation so far, oldest first; the last message is the user's.
    pub messages: &'a [Message],
    /// Tools the model may call; empty for plain chat. Ignored by a plain [`Sender::send`].
    pub tools: &'a [ToolDefinition],
    /// Output cap; `None` lets the adapter choose (usually from its model catalog).
    pub max_tokens: Option<u32>,
    /// Reasoning effort.
    pub reasoning: ReasoningEffort,
    /// Whether the model must, may or must not call tools.
    pub tool_choice: ToolChoice<'a>,
}

impl<'a> Request<'a> {
    /// A request for `messages` with no system prompt, no tools and default limits.
    pub fn new(messages: &'a [Message]) -> Self {
        Self {
            system: None,
            messages,
            tools: &[],
            max_tokens: None,
            reasoning: ReasoningEffort::Off,
            tool_choice: ToolChoice::Auto,
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: &'a str) -> Self {
        self.system = Some(system);
        self
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: &'a [ToolDefinition]) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the output cap.
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Sets the reasoning effort.
    pub fn with_reasoning(mut self, reasoning: ReasoningEffort) -> Self {
        self.reasoning = reasoning;
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice<'a>) -> Self {
        self.tool_choice = tool_choice;
        self
    }
}

/// A complete, buffered response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The assistant message.
    pub message: Message,
    /// Tokens used by this request.
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
}

/// One normalized item of a streamed response. Adapters turn their protocol into this sequence;
/// the agent assembles it into a [`Message`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// More answer text.
    TextDelta(String),
    /// More reasoning text.
    ThinkingDelta(String),
    /// The signature that closes the current thinking block.
    ThinkingSignature(String),
    /// A complete redacted (encrypted) reasoning block.
    RedactedThinking(String),
    /// A complete reasoning item of the provider's own (see [`crate::ContentBlock::Reasoning`]);
    /// its summary, if shown, came as [`StreamEvent::ThinkingDelta`]s just before.
    Reasoning {
        /// The provider's id of the item.
        id: String,
        /// Its readable summary.
        summary: String,
        /// The encrypted reasoning.
        encrypted_content: Option<String>,
        /// `endpoint:model` it came from.
        source: String,
    },
    /// A tool call starts. `index` identifies it among the calls of this response.
    ToolUseStart {
        /// Position of the call in this response.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments; fragments concatenate in order.
    ToolUseInputDelta {
        /// Which call.
        index: usize,
        /// The fragment.
        partial_json: String,
    },
    /// A tool call's arguments are complete.
    ToolUseStop {
        /// Which call.
        index: usize,
    },
    /// The provider's latest usage totals for this response (replaces, not adds to, any earlier
    /// `Usage` of the same response).
    Usage(Usage),
    /// Why the model stopped. Usually the last item.
    Stop(StopReason),
    /// The provider is about to retry after a retryable failure.
    Retry {
        /// Attempt number about to start (2 for the first retry).
        attempt: u32,
        /// The most attempts that will be made.
        max_attempts: u32,
        /// How long it waits first.
        delay: Duration,
        /// Why the previous attempt failed.
        reason: String,
        /// The failure came after part of the reply had arrived: everything this stream yielded
        /// so far is void, and the reply starts again from nothing.
        restart: bool,
    },
    /// How the wait for the first token is going, in words ("reading the prompt: 1024 of 3400
    /// tokens"); a model run in the process says it while it reads a long prompt. Nothing of
    /// the reply.
    Progress(String),
}

/// A stream of response items. Dropping it cancels the request.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static>>;

/// A model endpoint that answers one request with one buffered response.
#[async_trait]
pub trait Sender: Send + Sync {
    /// A short name for messages and status (`anthropic:claude-sonnet-4-5`).
    fn name(&self) -> &str;

    /// Sends one request and waits for the whole response. Tools in the request are ignored unless
    /// the sender is also a [`ToolSender`].
    async fn send(&self, request: Request<'_>) -> Result<Response, ProviderError>;

    /// This sender as a [`StreamingSender`], when it can stream.
    fn as_streaming(&self) -> Option<&dyn StreamingSender> {
        None
    }

    /// This sender as a [`ToolSender`], when it supports tools.
    fn as_tool(&self) -> Option<&dyn ToolSender> {
        None
    }

    /// This sender as a [`ToolStreamingSender`], when it streams tool calls.
    fn as_tool_streaming(&self) -> Option<&dyn ToolStreamingSender> {
        None
    }

    /// The model's context window as the server reports it, once known (a local server says
    /// what it was started with). `None` when the sender does not know better than the catalog.
    fn context_window(&self) -> Option<u64> {
        None
    }
}

/// A sender that streams its responses.
#[async_trait]
pub trait StreamingSender: Sender {
    /// Starts a request and returns its stream of items. Tools in the request are ignored.
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError>;
}

/// A sender that accepts tool definitions and returns tool calls.
#[async_trait]
pub trait ToolSender: Sender {
    /// Sends a request including its tools and waits for the whole response.
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError>;
}

/// A sender that streams responses that may contain tool calls.
#[async_trait]
pub trait ToolStreamingSender: StreamingSender + ToolSender {
    /// Starts a request including its tools and returns its stream of items.
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError>;
}

/// The highest capability a sender offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Buffered text only.
    Buffered,
    /// Streamed text, no tools.
    Streaming,
    /// Tools, buffered.
    Tools,
    /// Tools, streamed.
    ToolStreaming,
}

impl Capability {
    /// Discovers the highest capability of `sender`.
    pub fn of(sender: &dyn Sender) -> Self {
        if sender.as_tool_streaming().is_some() {
            Self::ToolStreaming
        } else if sender.as_tool().is_some() {
            Self::Tools
        } else if sender.as_streaming().is_some() {
            Self::Streaming
        } else {
            Self::Buffered
        }
    }

    /// Whether tool definitions reach the model.
    pub fn tools(self) -> bool {
        matches!(self, Self::Tools | Self::ToolStreaming)
    }

    /// Whether responses stream.
    pub fn streaming(self) -> bool {
        matches!(self, Self::Streaming | Self::ToolStreaming)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_effort_parses() {
        assert_eq!("HIGH".parse::<ReasoningEffort>().unwrap(), ReasoningEffort::High);
        assert_eq!("none".parse::<ReasoningEffort>().unwrap(), ReasoningEffort::Off);
        let err = "extreme".parse::<ReasoningEffort>().unwrap_err();
        assert!(err.to_string().contains("off, low, medium, high or max"), "{err}");
    }
}
