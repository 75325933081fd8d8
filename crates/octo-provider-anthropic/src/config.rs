//! How an Anthropic-protocol endpoint is configured.

use octo_provider::{HttpConfig, ModelInfo};

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
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// The endpoint's id in octo's configuration, used in messages (`anthropic`, `deepseek`...).
    pub endpoint: String,
    /// Base URL; requests go to `{base_url}/v1/messages` (or `{base_url}/messages` when it already
    /// ends in `/v1`).
    pub base_url: String,
    /// The API key; `None` sends no key (local gateways).
    pub api_key: Option<String>,
    /// How the key is sent.
    pub auth: AuthStyle,
    /// Model id.
    pub model: String,
    /// `anthropic-version` header.
    pub version: String,
    /// `anthropic-beta` flags, joined with commas.
    pub betas: Vec<String>,
    /// Output cap when a request does not set one; `None` uses the model's maximum from the
    /// catalog.
    pub max_tokens: Option<u32>,
    /// Put `cache_control` breakpoints on the system prompt, tools and latest messages.
    pub prompt_caching: bool,
    /// Limits and price of the model (from the catalog or configuration).
    pub model_info: ModelInfo,
    /// Client settings: timeouts, proxy, custom headers, retries.
    pub http: HttpConfig,
    /// Where the key comes from, as advice for error messages
    /// ("set ANTHROPIC_API_KEY or run `octo auth set anthropic`").
    pub key_hint: String,
}

impl AnthropicConfig {
    /// A configuration for api.anthropic.com with `model` and `api_key`, the model's limits
    /// looked up in the built-in catalog.
    pub fn new(model: impl Into<String>, api_key: Option<String>) -> Self {
        let model = model.into();
        let model_info = octo_provider::Catalog::builtin().info(&model);
        Self {
            endpoint: "anthropic".into(),
            base_url: DEFAULT_BASE_URL.into(),
            api_key,
            auth: AuthStyle::XApiKey,
            model,
            version: API_VERSION.into(),
            betas: Vec::new(),
            max_tokens: None,
            prompt_caching: true,
            model_info,
            http: HttpConfig::default(),
            key_hint: "set ANTHROPIC_API_KEY or run `octo auth set anthropic`".into(),
        }
    }

    /// Sets the base URL (for Anthropic-compatible endpoints and gateways).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Sets the endpoint id used in messages.
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = endpoint.into();
        self
    }
}
