//! How a Responses endpoint is configured, and the vendor presets.

use octo_provider::EndpointSettings;

/// How the key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <key>` (OpenAI, OpenRouter, most servers; Azure accepts it too).
    Bearer,
    /// `api-key: <key>` (Azure OpenAI's own header).
    ApiKeyHeader,
}

/// Settings of one Responses endpoint and model. Requests go to `{base_url}/responses`.
#[derive(Debug, Clone)]
pub struct ResponsesConfig {
    /// Where, which model, which key, limits and client settings.
    pub settings: EndpointSettings,
    /// How the key is sent.
    pub auth: Auth,
    /// Whether the vendor keeps responses (`store`). Off by default: nothing is kept on the
    /// vendor's side, and reasoning travels back encrypted (`include:
    /// ["reasoning.encrypted_content"]`).
    pub store: bool,
    /// Ask for reasoning summaries (`reasoning.summary: "auto"`), shown as thinking.
    pub reasoning_summary: bool,
    /// Send `prompt_cache_key` (one per conversation) so the vendor's prompt cache is found again.
    pub cache_key: bool,
}

impl ResponsesConfig {
    /// A configuration with the usual settings: bearer key, nothing stored, summaries, cache key.
    pub fn new(settings: EndpointSettings) -> Self {
        Self { settings, auth: Auth::Bearer, store: false, reasoning_summary: true, cache_key: true }
    }

    /// A configuration from a preset; `model` defaults to the preset's.
    pub fn from_preset(preset: &Preset, model: Option<&str>, api_key: Option<String>) -> Self {
        let model = model.filter(|m| !m.is_empty()).unwrap_or(preset.default_model);
        let mut settings = EndpointSettings::new(preset.id, preset.base_url, model, api_key);
        if !preset.key_env.is_empty() {
            settings.key_hint = format!("set {}", preset.key_env);
        }
        Self { auth: preset.auth, ..Self::new(settings) }
    }

    /// A configuration for any server that speaks the Responses API.
    pub fn custom(base_url: impl Into<String>, model: impl Into<String>, api_key: Option<String>) -> Self {
        Self::new(EndpointSettings::new("custom", base_url, model, api_key))
    }
}

/// One vendor's defaults for the Responses API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The preset's id, also the default endpoint name.
    pub id: &'static str,
    /// A human name for messages.
    pub display: &'static str,
    /// Base URL; requests go to `{base}/responses`. Empty when it must be configured.
    pub base_url: &'static str,
    /// The environment variable that usually holds the key.
    pub key_env: &'static str,
    /// The model used when none is configured.
    pub default_model: &'static str,
    /// How the key is sent.
    pub auth: Auth,
}

/// The presets: OpenAI's own API, Azure OpenAI's v1 API (set `base_url` to
/// `https://<resource>.openai.azure.com/openai/v1`) and OpenRouter's Responses endpoint.
pub const PRESETS: &[Preset] = &[
    Preset {
        id: "openai",
        display: "OpenAI",
        base_url: "https://api.openai.com/v1",
        key_env: "OPENAI_API_KEY",
        default_model: "gpt-5.1",
        auth: Auth::Bearer,
    },
    Preset {
        id: "azure",
        display: "Azure OpenAI",
        base_url: "",
        key_env: "AZURE_OPENAI_API_KEY",
        default_model: "gpt-5.1",
        auth: Auth::ApiKeyHeader,
    },
    Preset {
        id: "openrouter-responses",
        display: "OpenRouter (Responses)",
        base_url: "https://openrouter.ai/api/v1",
        key_env: "OPENROUTER_API_KEY",
        default_model: "openai/gpt-5.1",
        auth: Auth::Bearer,
    },
];

/// The preset with this id.
pub fn preset_by_id(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}
