//! The numbers that decide how a local model is run: when it is too small for tools, where a
//! small model's answer ends, the default context.

/// Parameters below which a model runs as plain chat unless told otherwise.
pub const TOOL_PARAMS: u64 = 1_000_000_000;

/// Where the answer of a model smaller than [`TOOL_PARAMS`] ends when nobody set a limit: a few
/// paragraphs, reached within about 30 s on two cores (the new user's first answer).
pub const SMALL_ANSWER: u32 = 768;

/// The default context cap: enough for an agent's prompt and some history without a large
/// model's full window (which can need gigabytes of KV cache).
pub const DEFAULT_CONTEXT: u32 = 8192;
