//! # octo-agent
//!
//! The core of the octo coding agent: what a conversation is, how the agent talks to a model, how
//! tools run, and the loop that ties them together. Front ends (the `octo` CLI, a web UI, chat
//! bridges) consume its [`AgentEvent`]s; adapters implement its traits.
//!
//! **Layer:** core, the leaf of the workspace. It depends on no other octo crate, only on small
//! general-purpose crates (`serde`, `tokio`, `futures`). Providers, tools, sessions and the app
//! all build on it.
//!
//! What is here:
//! - [`Message`] and [`ContentBlock`]: the history, with stable serde shapes.
//! - [`Usage`] and [`StopReason`]: normalized across protocols.
//! - The **Sender capability stack** — [`Sender`] → [`StreamingSender`] → [`ToolSender`] →
//!   [`ToolStreamingSender`] — discovered at run time ([`Capability::of`]).
//! - [`ToolExecutor`], [`ToolDefinition`], [`ToolMeta`] (how a tool describes itself to octo),
//!   [`ToolContext`], the [`ToolRegistry`] and the [`ToolSource`]s it is assembled from.
//! - [`PermissionGate`] and [`ApprovalBroker`]: every call is checked; approvals are ids any
//!   front end can answer.
//! - [`Agent`]: [`Agent::turn`], [`Agent::turn_stream`], [`Agent::run`], [`Agent::run_stream`];
//!   a turn runs in named steps with seats where a [`Plugin`] may act (see [`plugin`]).
//!
//! Modules depend on each other in one direction (a test checks it): `message`, `usage`, `error`
//! → `spec` → `sender`, `approval` → `event` → `channel` → `tool` → `plugin`, `context` → `agent`.
//!
//! What is not here: HTTP, wire formats, configuration, the built-in tools, persistence. Those
//! live in the crates above this one.
//!
//! ```
//! use octo_agent::{Agent, AgentEvent, Message, Request, Response, Sender, ProviderError, StopReason, Usage};
//! use async_trait::async_trait;
//! use futures_util::StreamExt;
//! use tokio_util::sync::CancellationToken;
//!
//! /// A "model" that always says hi.
//! struct Hi;
//!
//! #[async_trait]
//! impl Sender for Hi {
//!     fn name(&self) -> &str { "hi" }
//!     async fn send(&self, _req: Request<'_>) -> Result<Response, ProviderError> {
//!         Ok(Response { message: Message::assistant("hi!"), usage: Usage::default(), stop_reason: StopReason::EndTurn })
//!     }
//! }
//!
//! # fn main() -> Result<(), std::io::Error> {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let mut agent = Agent::builder(std::sync::Arc::new(Hi)).system_prompt("Be brief.").build();
//! let mut events = agent.turn_stream(Message::user("hello"), CancellationToken::new());
//! let mut text = String::new();
//! while let Some(event) = events.next().await {
//!     if let AgentEvent::TextDelta { text: t } = event {
//!         text.push_str(&t);
//!     }
//! }
//! assert_eq!(text, "hi!");
//! # });
//! # Ok(())
//! # }
//! ```

mod agent;
mod approval;
mod assemble;
mod channel;
pub mod context;
mod error;
mod event;
mod message;
pub mod plugin;
mod sender;
mod spec;
mod tool;
mod truncate;
mod usage;

pub use agent::{
    Agent, AgentBuilder, AgentConfig, AgentStream, TurnOutcome, DEFAULT_MAX_TOOL_OUTPUT_BYTES,
    DEFAULT_MAX_TURNS,
};
pub use approval::{
    AllowAll, ApprovalBroker, ApprovalDecision, ApprovalRequest, AskForWrites, DenyKind, PermissionDecision,
    PermissionGate, PermissionQuery, UnknownApproval,
};
pub use assemble::{Assembled, Assembler};
pub use channel::AnsweredBy;
pub use error::{AgentError, ErrorKind, ProviderError};
pub use event::{AgentEvent, CompactReason, TurnEndReason};
pub use message::{ContentBlock, ImageSource, Message, Role, ToolResultPart, ToolUse};
pub use plugin::{AfterTool, BeforeTool, Plugin, Plugins, ToolVerdict};
pub use sender::{
    Capability, EventStream, ReasoningEffort, Request, Response, Sender, StreamEvent, StreamingSender,
    ToolChoice, ToolSender, ToolStreamingSender, UnknownEffort,
};
pub use spec::{Access, OutputKind, Preview, Subject, ToolDefinition, ToolMeta, ToolOutcome, ToolOutput};
pub use tool::{
    parse_input, valid_tool_name, ToolContext, ToolExecutor, ToolList, ToolRegistry, ToolSource,
    SUMMARY_CHARS,
};
pub use truncate::truncate_middle;
pub use usage::{StopReason, Usage};

/// Re-exported so implementors and callers use the same version as the agent.
pub use async_trait::async_trait;
/// Re-exported: the cancellation token every turn and tool honours.
pub use tokio_util::sync::CancellationToken;
