//! What octo knows about common models: context window, output cap and price.
//!
//! The built-in table covers the usual models of each vendor, matched by the longest prefix of the
//! model id (so dated snapshots such as `claude-sonnet-4-5-20250929` match `claude-sonnet-4-5`).
//! Gateways' `vendor/model` ids (OpenRouter) match on the part after the last `/`. Anything can be
//! overridden from configuration with [`Catalog::set`]. Prices are USD per million tokens as the
//! vendors published them; they change, so treat costs as estimates and override when needed.

use octo_agent::Usage;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// USD per million tokens, per usage bucket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Uncached input.
    pub input: f64,
    /// Output (including reasoning).
    pub output: f64,
    /// Input read from cache.
    pub cache_read: f64,
    /// Input written to cache.
    pub cache_write: f64,
}

impl Price {
    /// The cost of `usage` in USD.
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_read_tokens as f64 * self.cache_read
            + usage.cache_write_tokens as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// Limits and price of one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Tokens the prompt and output may occupy together.
    pub context_window: u64,
    /// The most output tokens one response may have.
    pub max_output: u32,
    /// Price, when known.
    pub price: Option<Price>,
}

/// What is assumed for a model the catalog does not know.
pub const UNKNOWN_MODEL: ModelInfo = ModelInfo { context_window: 128_000, max_output: 8_192, price: None };

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Option<Price> {
    Some(Price { input, output, cache_read, cache_write })
}

const fn m(context_window: u64, max_output: u32, price: Option<Price>) -> ModelInfo {
    ModelInfo { context_window, max_output, price }
}

/// The built-in table: (model id prefix, info).
const BUILTIN: &[(&str, ModelInfo)] = &[
    // Anthropic
    ("claude-opus-4-5", m(200_000, 64_000, p(5.0, 25.0, 0.5, 6.25))),
    ("claude-opus-4-1", m(200_000, 32_000, p(15.0, 75.0, 1.5, 18.75))),
    ("claude-opus-4", m(200_000, 32_000, p(15.0, 75.0, 1.5, 18.75))),
    ("claude-sonnet-4-5", m(200_000, 64_000, p(3.0, 15.0, 0.3, 3.75))),
    ("claude-sonnet-4", m(200_000, 64_000, p(3.0, 15.0, 0.3, 3.75))),
    ("claude-haiku-4-5", m(200_000, 64_000, p(1.0, 5.0, 0.1, 1.25))),
    ("claude-3-7-sonnet", m(200_000, 64_000, p(3.0, 15.0, 0.3, 3.75))),
    ("claude-3-5-sonnet", m(200_000, 8_192, p(3.0, 15.0, 0.3, 3.75))),
    ("claude-3-5-haiku", m(200_000, 8_192, p(0.8, 4.0, 0.08, 1.0))),
    ("claude-3-haiku", m(200_000, 4_096, p(0.25, 1.25, 0.03, 0.3))),
    ("claude", m(200_000, 8_192, None)),
    // Google (through its OpenAI-compatible endpoint); prices for prompts up to 200k tokens
    ("gemini-2.5-pro", m(1_048_576, 65_536, p(1.25, 10.0, 0.31, 0.0))),
    ("gemini-2.5-flash-lite", m(1_048_576, 65_536, p(0.1, 0.4, 0.025, 0.0))),
    ("gemini-2.5-flash", m(1_048_576, 65_536, p(0.3, 2.5, 0.075, 0.0))),
    ("gemini-2.0-flash", m(1_048_576, 8_192, p(0.1, 0.4, 0.025, 0.0))),
    ("gemini", m(1_048_576, 8_192, None)),
    // OpenAI
    ("gpt-5.1-codex-mini", m(400_000, 128_000, p(0.25, 2.0, 0.025, 0.0))),
    ("gpt-5.1-codex", m(400_000, 128_000, p(1.25, 10.0, 0.125, 0.0))),
    ("gpt-5.1", m(400_000, 128_000, p(1.25, 10.0, 0.125, 0.0))),
    ("gpt-5-codex", m(400_000, 128_000, p(1.25, 10.0, 0.125, 0.0))),
    ("gpt-5-mini", m(400_000, 128_000, p(0.25, 2.0, 0.025, 0.0))),
    ("gpt-5-nano", m(400_000, 128_000, p(0.05, 0.4, 0.005, 0.0))),
    ("gpt-5", m(400_000, 128_000, p(1.25, 10.0, 0.125, 0.0))),
    ("gpt-4.1-mini", m(1_047_576, 32_768, p(0.4, 1.6, 0.1, 0.0))),
    ("gpt-4.1-nano", m(1_047_576, 32_768, p(0.1, 0.4, 0.025, 0.0))),
    ("gpt-4.1", m(1_047_576, 32_768, p(2.0, 8.0, 0.5, 0.0))),
    ("gpt-4o-mini", m(128_000, 16_384, p(0.15, 0.6, 0.075, 0.0))),
    ("gpt-4o", m(128_000, 16_384, p(2.5, 10.0, 1.25, 0.0))),
    ("o4-mini", m(200_000, 100_000, p(1.1, 4.4, 0.275, 0.0))),
    ("o3-mini", m(200_000, 100_000, p(1.1, 4.4, 0.55, 0.0))),
    ("o3", m(200_000, 100_000, p(2.0, 8.0, 0.5, 0.0))),
    ("gpt-oss", m(131_072, 32_768, None)),
    // DeepSeek
    ("deepseek-chat", m(128_000, 8_192, p(0.28, 0.42, 0.028, 0.0))),
    ("deepseek-reasoner", m(128_000, 64_000, p(0.28, 0.42, 0.028, 0.0))),
    // Moonshot / Kimi
    ("kimi-k2-thinking", m(262_144, 32_768, p(0.6, 2.5, 0.15, 0.0))),
    ("kimi-k2", m(262_144, 32_768, p(0.6, 2.5, 0.15, 0.0))),
    // Qwen
    ("qwen3-coder-plus", m(1_000_000, 65_536, p(1.0, 5.0, 0.1, 0.0))),
    ("qwen3-coder", m(262_144, 65_536, None)),
    ("qwen-max", m(131_072, 8_192, None)),
    ("qwen", m(131_072, 8_192, None)),
    // Zhipu GLM
    ("glm-4.6", m(200_000, 128_000, p(0.6, 2.2, 0.11, 0.0))),
    ("glm-4.5", m(128_000, 96_000, p(0.6, 2.2, 0.11, 0.0))),
    // xAI
    ("grok-code-fast", m(256_000, 10_000, p(0.2, 1.5, 0.02, 0.0))),
    ("grok-4", m(256_000, 64_000, p(3.0, 15.0, 0.75, 0.0))),
];

/// Families known to read images, and families known not to (by the longest matching prefix of
/// the bare model id); anything else is unknown and gets the benefit of the doubt.
const IMAGES: &[(&str, bool)] = &[
    ("claude", true),
    ("gpt-4o", true),
    ("gpt-4.1", true),
    ("gpt-5", true),
    ("o3", true),
    ("o4", true),
    ("gemini", true),
    ("grok-4", true),
    ("qwen-vl", true),
    ("qwen2.5-vl", true),
    ("glm-4.5v", true),
    ("llava", true),
    ("gpt-oss", false),
    ("deepseek", false),
    ("kimi-k2", false),
    ("qwen3-coder", false),
    ("qwen-max", false),
    ("glm-4.6", false),
    ("glm-4.5", false),
    ("grok-code", false),
    ("o3-mini", false),
];

/// Whether `model` takes images: `Some(false)` for families known not to (so front ends can say
/// so before a request fails), `None` when unknown.
pub fn accepts_images(model: &str) -> Option<bool> {
    let bare = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    IMAGES.iter().filter(|(p, _)| bare.starts_with(p)).max_by_key(|(p, _)| p.len()).map(|(_, yes)| *yes)
}

/// Model limits and prices: the built-in table plus configured overrides.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    overrides: HashMap<String, ModelInfo>,
}

impl Catalog {
    /// The built-in table with no overrides.
    pub fn builtin() -> Self {
        Self::default()
    }

    /// Overrides (or adds) the info for one exact model id.
    pub fn set(&mut self, model: impl Into<String>, info: ModelInfo) -> &mut Self {
        self.overrides.insert(model.into(), info);
        self
    }

    /// What is known about `model`: an override for the exact id, else the longest matching
    /// built-in prefix, else `None`.
    pub fn lookup(&self, model: &str) -> Option<ModelInfo> {
        if let Some(info) = self.overrides.get(model) {
            return Some(*info);
        }
        let bare = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        BUILTIN
            .iter()
            .filter(|(prefix, _)| bare.starts_with(prefix))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, info)| *info)
    }

    /// Like [`Catalog::lookup`], falling back to [`UNKNOWN_MODEL`].
    pub fn info(&self, model: &str) -> ModelInfo {
        self.lookup(model).unwrap_or(UNKNOWN_MODEL)
    }

    /// The cost of `usage` on `model` in USD, when its price is known.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.lookup(model).and_then(|i| i.price).map(|p| p.cost(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_snapshots_match() {
        let c = Catalog::builtin();
        assert_eq!(c.info("claude-sonnet-4-5-20250929").max_output, 64_000);
        assert_eq!(c.info("claude-opus-4-5-20251101").price.unwrap().input, 5.0);
        assert_eq!(c.info("claude-opus-4-20250514").price.unwrap().input, 15.0);
        assert_eq!(c.info("gpt-4o-mini-2024-07-18").price.unwrap().input, 0.15);
        assert_eq!(c.info("gpt-4o").price.unwrap().input, 2.5);
        assert_eq!(c.info("anthropic/claude-haiku-4-5").price.unwrap().output, 5.0, "gateway ids");
        assert_eq!(c.info("DeepSeek-Chat").context_window, 128_000, "case-insensitive");
        assert_eq!(c.lookup("my-local-llama"), None);
        assert_eq!(c.info("my-local-llama"), UNKNOWN_MODEL);
    }

    #[test]
    fn overrides_beat_the_table() {
        let mut c = Catalog::builtin();
        c.set("claude-sonnet-4-5", m(1_000_000, 64_000, None));
        assert_eq!(c.info("claude-sonnet-4-5").context_window, 1_000_000);
        assert_eq!(c.info("claude-sonnet-4-5-20250929").context_window, 200_000, "override is exact");
    }

    #[test]
    fn cost_uses_every_bucket() {
        let c = Catalog::builtin();
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 1_000_000,
            estimated: false,
            reasoning_tokens: 0,
        };
        let cost = c.cost("claude-sonnet-4-5", &u).unwrap();
        assert!((cost - (3.0 + 15.0 + 0.3 + 3.75)).abs() < 1e-9, "{cost}");
        assert_eq!(c.cost("unknown", &u), None);
    }
}
