//! Vendor presets: base URL, key variable, default model and quirks of each OpenAI-compatible
//! server. A preset is data; every vendor runs through the same adapter.

/// How an output cap is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_tokens` (most compatible servers).
    MaxTokens,
    /// `max_completion_tokens` (OpenAI; required by its reasoning models).
    MaxCompletionTokens,
    /// `max_completion_tokens` for OpenAI reasoning families (`o1`, `o3`, `o4`, `gpt-5`),
    /// `max_tokens` otherwise: for gateways that serve both.
    ByModel,
}

/// How a reasoning effort is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningStyle {
    /// Not sent: the vendor picks reasoning by model (DeepSeek's `deepseek-reasoner`).
    None,
    /// Top-level `reasoning_effort: low|medium|high`, for model families that accept it.
    Effort,
    /// OpenRouter's `reasoning: {effort}` object.
    OpenRouter,
}

/// The quirks of one vendor's server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quirks {
    /// Which output-cap field to send.
    pub max_tokens_field: MaxTokensField,
    /// How reasoning effort is sent.
    pub reasoning: ReasoningStyle,
    /// Send `stream_options: {include_usage: true}` (usage arrives in a final chunk).
    pub stream_usage: bool,
    /// Send the model's earlier `reasoning_content` back on assistant messages of the current
    /// turn (DeepSeek and Kimi thinking models need it between tool calls).
    pub replay_reasoning: bool,
}

/// The default quirks: plain Chat Completions.
pub const STANDARD: Quirks = Quirks {
    max_tokens_field: MaxTokensField::MaxTokens,
    reasoning: ReasoningStyle::None,
    stream_usage: true,
    replay_reasoning: false,
};

/// One vendor's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The preset's id (`openai`, `deepseek`, ...), also the default endpoint name.
    pub id: &'static str,
    /// A human name for messages.
    pub display: &'static str,
    /// Base URL; requests go to `{base}/chat/completions`. Empty for `custom`.
    pub base_url: &'static str,
    /// The environment variable that usually holds the key; empty when no key is needed.
    pub key_env: &'static str,
    /// Whether the server refuses requests without a key.
    pub requires_key: bool,
    /// The model used when none is configured.
    pub default_model: &'static str,
    /// The server's quirks.
    pub quirks: Quirks,
}

const fn preset(
    id: &'static str,
    display: &'static str,
    base_url: &'static str,
    key_env: &'static str,
    default_model: &'static str,
    quirks: Quirks,
) -> Preset {
    Preset { id, display, base_url, key_env, requires_key: !key_env.is_empty(), default_model, quirks }
}

const LOCAL: Quirks = STANDARD;

/// Every built-in preset.
pub const PRESETS: &[Preset] = &[
    preset(
        "openai",
        "OpenAI",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        "gpt-4.1",
        Quirks {
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            reasoning: ReasoningStyle::Effort,
            ..STANDARD
        },
    ),
    preset(
        "gemini",
        "Google Gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "GEMINI_API_KEY",
        "gemini-2.5-pro",
        Quirks { reasoning: ReasoningStyle::Effort, ..STANDARD },
    ),
    preset(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com/v1",
        "DEEPSEEK_API_KEY",
        "deepseek-chat",
        Quirks { replay_reasoning: true, ..STANDARD },
    ),
    preset(
        "moonshot",
        "Kimi (Moonshot)",
        "https://api.moonshot.ai/v1",
        "MOONSHOT_API_KEY",
        "kimi-k2-0905-preview",
        Quirks { replay_reasoning: true, ..STANDARD },
    ),
    preset(
        "qwen",
        "Qwen (DashScope / Bailian)",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        "DASHSCOPE_API_KEY",
        "qwen3-coder-plus",
        STANDARD,
    ),
    preset("glm", "GLM (Z.ai)", "https://api.z.ai/api/paas/v4", "ZAI_API_KEY", "glm-4.6", STANDARD),
    preset(
        "zhipu",
        "GLM (Zhipu BigModel)",
        "https://open.bigmodel.cn/api/paas/v4",
        "ZHIPUAI_API_KEY",
        "glm-4.6",
        STANDARD,
    ),
    preset(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        "anthropic/claude-sonnet-4.5",
        Quirks {
            max_tokens_field: MaxTokensField::ByModel,
            reasoning: ReasoningStyle::OpenRouter,
            ..STANDARD
        },
    ),
    preset(
        "xai",
        "xAI",
        "https://api.x.ai/v1",
        "XAI_API_KEY",
        "grok-code-fast-1",
        Quirks { reasoning: ReasoningStyle::Effort, ..STANDARD },
    ),
    preset(
        "groq",
        "Groq",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        "openai/gpt-oss-120b",
        Quirks { reasoning: ReasoningStyle::Effort, ..STANDARD },
    ),
    preset("ollama", "Ollama", "http://localhost:11434/v1", "", "qwen2.5-coder", LOCAL),
    preset("lmstudio", "LM Studio", "http://localhost:1234/v1", "", "local-model", LOCAL),
    preset("vllm", "vLLM", "http://localhost:8000/v1", "", "default", LOCAL),
    preset("llamacpp", "llama.cpp server", "http://localhost:8080/v1", "", "default", LOCAL),
    preset(
        "custom",
        "OpenAI-compatible server",
        "",
        "",
        "",
        Quirks { max_tokens_field: MaxTokensField::ByModel, reasoning: ReasoningStyle::Effort, ..STANDARD },
    ),
];

/// The preset called `id`.
pub fn preset_by_id(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id.eq_ignore_ascii_case(id))
}

/// Whether `model` is one of OpenAI's reasoning families, which take `max_completion_tokens`
/// and `reasoning_effort`.
pub fn is_openai_reasoning_model(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5"].iter().any(|p| m == *p || m.starts_with(&format!("{p}-")))
}

/// Whether `reasoning_effort` means something for `model` (OpenAI reasoning families, gpt-oss,
/// Grok mini models).
pub fn accepts_reasoning_effort(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    is_openai_reasoning_model(&m) || m.starts_with("gpt-oss") || m.starts_with("grok-3-mini")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_unique_and_complete() {
        let mut ids: Vec<&str> = PRESETS.iter().map(|p| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), PRESETS.len());
        for p in PRESETS.iter().filter(|p| p.id != "custom") {
            assert!(p.base_url.starts_with("http"), "{}", p.id);
            assert!(!p.default_model.is_empty(), "{}", p.id);
        }
        assert!(preset_by_id("DeepSeek").is_some());
        assert!(preset_by_id("nope").is_none());
        assert!(!preset_by_id("ollama").unwrap().requires_key);
        assert!(preset_by_id("openai").unwrap().requires_key);
    }

    #[test]
    fn reasoning_families() {
        for m in ["o1", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini", "openai/gpt-5"] {
            assert!(is_openai_reasoning_model(m), "{m}");
        }
        for m in ["gpt-4o", "gpt-4.1", "omni-moderation", "o10x", "deepseek-chat"] {
            assert!(!is_openai_reasoning_model(m), "{m}");
        }
        assert!(accepts_reasoning_effort("openai/gpt-oss-120b"));
        assert!(!accepts_reasoning_effort("llama-3.3-70b"));
    }
}
