//! How an OpenAI-compatible endpoint is configured.

use crate::preset::{Preset, Quirks};
use octo_provider::{Catalog, HttpConfig, ModelInfo};

/// Settings of one Chat Completions endpoint and model.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// The endpoint's id in octo's configuration, used in messages.
    pub endpoint: String,
    /// Base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The API key, sent as `Authorization: Bearer`; `None` sends none (local servers).
    pub api_key: Option<String>,
    /// Model id.
    pub model: String,
    /// The server's quirks.
    pub quirks: Quirks,
    /// Output cap when a request does not set one; `None` sends none (the server decides).
    pub max_tokens: Option<u32>,
    /// Limits and price of the model.
    pub model_info: ModelInfo,
    /// Client settings: timeouts, proxy, custom headers, retries.
    pub http: HttpConfig,
    /// Where the key comes from, as advice for error messages.
    pub key_hint: String,
}

impl OpenAiConfig {
    /// A configuration from a vendor preset; `model` defaults to the preset's.
    pub fn from_preset(preset: &Preset, model: Option<&str>, api_key: Option<String>) -> Self {
        let model = model.filter(|m| !m.is_empty()).unwrap_or(preset.default_model).to_owned();
        let key_hint = if preset.key_env.is_empty() {
            format!("this server needs no key by default; if yours does, run `octo auth set {}`", preset.id)
        } else {
            format!("set {} or run `octo auth set {}`", preset.key_env, preset.id)
        };
        Self {
            endpoint: preset.id.to_owned(),
            base_url: preset.base_url.to_owned(),
            api_key,
            model_info: Catalog::builtin().info(&model),
            model,
            quirks: preset.quirks,
            max_tokens: None,
            http: HttpConfig::default(),
            key_hint,
        }
    }

    /// A configuration for any OpenAI-compatible server (the `custom` preset's quirks).
    pub fn custom(base_url: impl Into<String>, model: impl Into<String>, api_key: Option<String>) -> Self {
        let custom = crate::preset::preset_by_id("custom").copied().unwrap_or(crate::preset::PRESETS[0]);
        let model = model.into();
        let mut cfg = Self::from_preset(&custom, Some(&model), api_key);
        cfg.base_url = base_url.into();
        cfg.key_hint = "run `octo auth set <endpoint>` or set the key in the endpoint's configuration".into();
        cfg
    }

    /// Sets the endpoint id used in messages.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = endpoint.into();
        self
    }

    /// Sets the base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }
}
