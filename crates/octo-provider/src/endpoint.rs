//! What every endpoint needs, whatever its wire protocol: where it is, how it authenticates, which
//! model, its limits, and the client settings. Each adapter's configuration holds one of these
//! plus what only its protocol has.

use crate::catalog::{Catalog, ModelInfo};
use crate::http::HttpConfig;

/// The protocol-independent settings of one endpoint and model.
#[derive(Debug, Clone)]
pub struct EndpointSettings {
    /// The endpoint's id in the application's configuration, used in messages.
    pub id: String,
    /// Base URL of the API.
    pub base_url: String,
    /// The API key; `None` sends none (local servers and gateways).
    pub api_key: Option<String>,
    /// Model id.
    pub model: String,
    /// Output cap when a request does not set one; `None` lets the adapter or server decide.
    pub max_tokens: Option<u32>,
    /// Limits and price of the model.
    pub model_info: ModelInfo,
    /// Client settings: timeouts, proxy, custom headers, retries.
    pub http: HttpConfig,
    /// Advice on where the key comes from, added to authentication errors. The application fills
    /// it in (it knows its own commands and variables); empty adds nothing.
    pub key_hint: String,
}

impl EndpointSettings {
    /// Settings for `model` at `base_url`, its limits from the built-in catalog.
    pub fn new(
        id: impl Into<String>,
        base_url: impl Into<String>,
        model: impl Into<String>,
        api_key: Option<String>,
    ) -> Self {
        let model = model.into();
        Self {
            id: id.into(),
            base_url: base_url.into(),
            api_key,
            model_info: Catalog::builtin().info(&model),
            model,
            max_tokens: None,
            http: HttpConfig::default(),
            key_hint: String::new(),
        }
    }

    /// `id:model`, the name a sender goes by.
    pub fn label(&self) -> String {
        format!("{}:{}", self.id, self.model)
    }
}
