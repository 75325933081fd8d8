//! How an OpenAI-compatible endpoint is configured.

use crate::discover::LocalServer;
use crate::preset::{Preset, Quirks};
use octo_provider::EndpointSettings;

/// Settings of one Chat Completions endpoint and model. Requests go to
/// `{base_url}/chat/completions`; the key is sent as `Authorization: Bearer`. Without an output
/// cap in the settings, none is sent (the server decides).
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Where, which model, which key, limits and client settings.
    pub settings: EndpointSettings,
    /// The server's quirks.
    pub quirks: Quirks,
    /// Ask this local server for the model's context window before the first request (see
    /// [`crate::discover`]); `None` trusts `settings.model_info`.
    pub discover: Option<LocalServer>,
    /// Keep the output cap inside the context window (prompt plus output must fit): on when the
    /// window is known for this model (configured, or discovered).
    pub clamp_to_window: bool,
}

impl OpenAiConfig {
    /// A configuration from a vendor preset; `model` defaults to the preset's.
    pub fn from_preset(preset: &Preset, model: Option<&str>, api_key: Option<String>) -> Self {
        let model = model.filter(|m| !m.is_empty()).unwrap_or(preset.default_model);
        let mut settings = EndpointSettings::new(preset.id, preset.base_url, model, api_key);
        if !preset.key_env.is_empty() {
            settings.key_hint = format!("set {}", preset.key_env);
        }
        Self {
            settings,
            quirks: preset.quirks,
            discover: LocalServer::of_preset(preset.id),
            clamp_to_window: false,
        }
    }

    /// A configuration for any OpenAI-compatible server (the `custom` preset's quirks).
    pub fn custom(base_url: impl Into<String>, model: impl Into<String>, api_key: Option<String>) -> Self {
        let custom = crate::preset::preset_by_id("custom").copied().unwrap_or(crate::preset::PRESETS[0]);
        let model = model.into();
        let mut cfg = Self::from_preset(&custom, Some(&model), api_key);
        cfg.settings.base_url = base_url.into();
        cfg.discover = crate::discover::is_local_url(&cfg.settings.base_url).then_some(LocalServer::Unknown);
        cfg
    }

    /// A configuration from shared endpoint settings and a preset's quirks (no discovery, no
    /// clamping: set them as the window's source allows).
    pub fn from_settings(settings: EndpointSettings, quirks: Quirks) -> Self {
        Self { settings, quirks, discover: None, clamp_to_window: false }
    }

    /// Sets the endpoint id used in messages.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.settings.id = endpoint.into();
        self
    }

    /// Sets the base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.settings.base_url = base_url.into();
        self
    }
}
