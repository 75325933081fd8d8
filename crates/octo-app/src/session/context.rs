//! `/context`: what fills the context window, by part, from the estimates compaction uses
//! (about four characters a token), and the same total the next request is estimated at.
//!
//! The system prompt and the tool definitions are estimated from their text. The conversation
//! is estimated block by block; once the server has reported a prompt size, the conversation's
//! parts are scaled so that everything adds up to the agent's own figure for the next request
//! (the server's count plus what was added since), which is what compaction compares with the
//! window.

use octo_agent::{Agent, ContentBlock, Message};

/// One part of the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPart {
    /// What it is (`system prompt`, `MCP tools`, `tool results` …).
    pub name: &'static str,
    /// Its tokens, estimated.
    pub tokens: u64,
}

/// What `/context` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextReport {
    /// The parts, in the order they are sent.
    pub parts: Vec<ContextPart>,
    /// The next request's prompt, estimated as compaction estimates it (the parts add up to it).
    pub total: u64,
    /// The model's context window.
    pub window: u64,
    /// The share of the window at which the conversation is compacted (negative: never).
    pub threshold: f64,
}

/// The sizes of the system prompt's parts that the session knows apart (in characters).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PromptShares {
    pub memory: usize,
    pub skills: usize,
}

/// Measures `agent`'s context.
pub(super) fn measure(agent: &Agent, shares: PromptShares) -> ContextReport {
    let config = agent.config();
    let system = config.system_prompt.as_deref().unwrap_or_default();
    let system_tokens = octo_agent::context::estimate_fixed_tokens(Some(system), &[]);
    let (memory, skills) = ((shares.memory / 4) as u64, (shares.skills / 4) as u64);
    let base = system_tokens.saturating_sub(memory + skills);
    let (mut builtin, mut mcp) = (0, 0);
    for d in agent.tools().definitions() {
        let t = octo_agent::context::estimate_fixed_tokens(None, std::slice::from_ref(d));
        if d.name.starts_with("mcp__") {
            mcp += t;
        } else {
            builtin += t;
        }
    }
    let fixed = system_tokens + builtin + mcp;
    let [mut text, mut calls, mut results] = conversation(agent.history());
    let total = agent.context_tokens();
    let estimated = text + calls + results;
    let conversation = total.saturating_sub(fixed);
    if estimated > 0 && conversation != estimated {
        let scale = |n: u64| (n as f64 * conversation as f64 / estimated as f64).round() as u64;
        (calls, results) = (scale(calls), scale(results));
        text = conversation.saturating_sub(calls + results);
    } else if estimated == 0 {
        text = conversation;
    }
    let parts = [
        ("system prompt", base),
        ("memory", memory),
        ("skills", skills),
        ("built-in tools", builtin),
        ("MCP tools", mcp),
        ("messages", text),
        ("tool calls", calls),
        ("tool results", results),
    ];
    ContextReport {
        parts: parts.into_iter().map(|(name, tokens)| ContextPart { name, tokens }).collect(),
        total: fixed + text + calls + results,
        window: config.context.window,
        threshold: config.context.threshold,
    }
}

/// Messages (text, reasoning, images), tool calls and tool results, estimated.
fn conversation(history: &[Message]) -> [u64; 3] {
    let mut out = [0; 3];
    for m in history {
        for b in &m.content {
            let slot = match b {
                ContentBlock::ToolUse { .. } => 1,
                ContentBlock::ToolResult { .. } => 2,
                _ => 0,
            };
            let one = Message { role: m.role, content: vec![b.clone()] };
            out[slot] += octo_agent::context::estimate_tokens(std::slice::from_ref(&one));
        }
    }
    out
}

/// Cells of the bar.
const BAR: usize = 40;
/// A glyph per part, in order; the free space is `·`.
pub const GLYPHS: [char; 8] = ['█', '▓', '▒', '░', '▚', '■', '▪', '▫'];

impl ContextReport {
    /// The bar and the table, as plain lines.
    pub(crate) fn lines(&self) -> Vec<String> {
        let window = self.window.max(1);
        let mut bar = String::new();
        let mut used_cells = 0;
        for (i, p) in self.parts.iter().enumerate() {
            let cells = ((p.tokens as f64 / window as f64) * BAR as f64).round() as usize;
            let cells = cells.min(BAR - used_cells);
            bar.extend(std::iter::repeat_n(GLYPHS[i % GLYPHS.len()], cells));
            used_cells += cells;
        }
        bar.extend(std::iter::repeat_n('·', BAR - used_cells));
        let pct = |n: u64| n as f64 * 100.0 / window as f64;
        let mut out =
            vec![format!("  {bar}  {} of {} tokens ({:.0}%)", self.total, self.window, pct(self.total))];
        for (i, p) in self.parts.iter().enumerate().filter(|(_, p)| p.tokens > 0) {
            out.push(format!(
                "  {} {:<15} {:>8} tokens {:>5.1}%",
                GLYPHS[i % GLYPHS.len()],
                p.name,
                p.tokens,
                pct(p.tokens)
            ));
        }
        out.push(format!(
            "  · {:<15} {:>8} tokens {:>5.1}%",
            "free",
            self.window.saturating_sub(self.total),
            pct(self.window.saturating_sub(self.total))
        ));
        out.push(if self.threshold < 0.0 {
            "  automatic compaction is off".to_owned()
        } else {
            format!(
                "  compaction at {:.0}% ({} tokens); /compact to do it now",
                self.threshold * 100.0,
                (self.window as f64 * self.threshold) as u64
            )
        });
        out
    }
}
