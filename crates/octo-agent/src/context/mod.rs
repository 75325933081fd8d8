//! Keeping long conversations inside the model's context window: measuring occupancy, reclaiming
//! old tool output, summarizing old turns, repairing dangling tool calls and spotting loops.
//!
//! Tiers, cheapest first (see dev-docs/compaction.md):
//! 1. **Reclaim** — no model call: old tool results (and old arguments a tool declares
//!    reclaimable, such as the content of a written file) above a size are replaced by a short
//!    placeholder; the most recent ones stay verbatim.
//! 2. **Summarize** — one model call: everything before a tail of whole user turns is folded into
//!    a structured summary; a tool call is never split from its result, and the system prompt is
//!    never folded.

mod loops;
mod reclaim;
mod repair;
mod summarize;
mod tokens;

pub(crate) use loops::{LoopDetector, Verdict};
pub use reclaim::reclaim;
pub use repair::repair_dangling;
pub use summarize::{ask_text, fold, split_point, transcript};
pub use tokens::{estimate_fixed_tokens, estimate_tokens, Occupancy};

use crate::message::Message;
use std::path::PathBuf;

/// The name of the tool that lets the model ask for compaction.
pub const COMPACT_TOOL: &str = "compact_conversation";

/// `compact_conversation`: the model asks for the conversation to be compacted before its next
/// step (the loop does the work after the round).
#[derive(Debug, Clone, Copy, Default)]
pub struct CompactTool;

#[async_trait::async_trait]
impl crate::tool::ToolExecutor for CompactTool {
    fn definition(&self) -> crate::spec::ToolDefinition {
        crate::spec::ToolDefinition::new(
            COMPACT_TOOL,
            "Summarize older turns and drop their tool output, to free context; rules and recent work stay. \
             Use it between phases of a long task.",
            serde_json::json!({"type": "object", "properties": {}}),
        )
    }

    fn meta(&self) -> crate::spec::ToolMeta {
        crate::spec::ToolMeta::reads().concurrency_safe(false)
    }

    async fn execute(
        &self,
        _input: serde_json::Value,
        _ctx: &crate::tool::ToolContext,
    ) -> crate::spec::ToolOutput {
        crate::spec::ToolOutput::text("The conversation will be compacted before your next step.")
    }
}

/// When and how the agent compacts its history.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextConfig {
    /// The model's context window in tokens; 0 when unknown (automatic compaction is off).
    pub window: u64,
    /// Compact when occupancy passes this fraction of the window; negative disables.
    pub threshold: f64,
    /// Tool results kept verbatim by reclaiming, newest first.
    pub keep_recent_results: usize,
    /// Older tool results (and edit arguments) larger than this are reclaimed.
    pub reclaim_min_bytes: usize,
    /// Share of the window the kept tail of turns may use when summarizing.
    pub keep_ratio: f64,
    /// Automatic summarizing is skipped when it would fold less than this share of the history.
    pub anti_thrash: f64,
    /// The same call (or pattern of calls) this many times in a turn draws a warning.
    pub loop_warn: usize,
    /// ...and this many times stops the turn.
    pub loop_stop: usize,
    /// How often a reply cut off at the output limit is continued.
    pub max_continuations: u32,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            window: 0,
            threshold: 0.75,
            keep_recent_results: 6,
            reclaim_min_bytes: 4 * 1024,
            keep_ratio: 0.30,
            anti_thrash: 0.15,
            loop_warn: 3,
            loop_stop: 5,
            max_continuations: 3,
        }
    }
}

/// Stores folded messages somewhere the user can read them (next to the session) and returns
/// where, so the summary can name it.
pub trait Archiver: Send + Sync {
    /// Archives `folded`; `None` when it could not.
    fn archive(&self, folded: &[Message]) -> Option<PathBuf>;
}
