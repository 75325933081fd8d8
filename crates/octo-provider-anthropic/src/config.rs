//! How an Anthropic-protocol endpoint is configured.

use octo_provider::EndpointSettings;

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header value octo speaks.
pub const API_VERSION: &str = "2023-06-01";

/// How the API key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthStyle {
    /// `x-api-key: KEY` (api.anthropic.com and most compatibles).
    #[default]
    XApiKey,
    /// `Authorization: Bearer KEY` (gateways that want it).
    Bearer,
}

/// Settings of one Anthropic-protocol endpoint and model.
///
/// Requests go to `{base_url}/v1/messages` (or `{base_url}/messages` when the base URL already
/// ends in `/v1`). Without an output cap in the settings, the model's maximum from the catalog is
/// used.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// Where, which model, which key, limits and client settings.
    pub settings: EndpointSettings,
    /// How the key is sent.
    pub auth: AuthStyle,
    /// `anthropic-version` header.
    pub version: String,
    /// `anthropic-beta` flags, joined with commas.
    pub betas: Vec<String>,
    /// Put `cache_control` breakpoints on the system prompt, tools and latest messages.
    pub prompt_caching: bool,
}

impl AnthropicConfig {
    /// A configuration for api.anthropic.com with `model` and `api_key`, the model's limits
    /// looked up in the built-in catalog.
    pub fn new(model: impl Into<String>, api_key: Option<String>) -> Self {
        let mut settings = EndpointSettings::new("anthropic", DEFAULT_BASE_URL, model, api_key);
        settings.key_hint = "set ANTHROPIC_API_KEY".into();
        Self::from_settings(settings)
    }

    /// A configuration from shared endpoint settings, with this protocol's defaults.
    pub fn from_settings(settings: EndpointSettings) -> Self {
        Self {
            settings,
            auth: AuthStyle::XApiKey,
            version: API_VERSION.into(),
            betas: Vec::new(),
            prompt_caching: true,
        }
    }

    /// Sets the base URL (for Anthropic-compatible endpoints and gateways).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.settings.base_url = base_url.into();
        self
    }

    /// Sets the endpoint id used in messages.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.settings.id = endpoint.into();
        self
    }
}
