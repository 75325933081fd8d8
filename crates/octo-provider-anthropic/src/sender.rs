//! The Anthropic Messages protocol plugged into the shared [`HttpSender`].

use crate::body;
use crate::config::{AnthropicConfig, AuthStyle};
use crate::parse::{response_from_json, AnthropicParser};
use octo_agent::{ProviderError, Request, Response};
use octo_provider::http::{header_map, normalize_base_url};
use octo_provider::{secret_header, Connection, EndpointInfo, HttpSender, SetupError, WireProtocol};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;

/// The Anthropic Messages wire protocol for one configured endpoint and model.
#[derive(Debug, Clone)]
pub struct AnthropicWire {
    config: AnthropicConfig,
}

impl AnthropicWire {
    /// The configuration in use.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }
}

impl From<AnthropicConfig> for AnthropicWire {
    fn from(config: AnthropicConfig) -> Self {
        Self { config }
    }
}

/// A model behind an Anthropic-protocol endpoint, with every level of the Sender stack. Build it
/// with `AnthropicSender::new(config)`.
pub type AnthropicSender = HttpSender<AnthropicWire>;

impl WireProtocol for AnthropicWire {
    type Parser = AnthropicParser;

    fn connection(&self) -> Result<Connection, SetupError> {
        let c = &self.config;
        let e = &c.settings;
        let base = normalize_base_url(&e.base_url)?;
        let url =
            if base.ends_with("/v1") { format!("{base}/messages") } else { format!("{base}/v1/messages") };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.extend(header_map(&[("anthropic-version".to_owned(), c.version.clone())])?);
        if !c.betas.is_empty() {
            headers.extend(header_map(&[("anthropic-beta".to_owned(), c.betas.join(","))])?);
        }
        if let Some(key) = &e.api_key {
            headers.extend(match c.auth {
                AuthStyle::XApiKey => secret_header("x-api-key", key)?,
                AuthStyle::Bearer => secret_header(AUTHORIZATION.as_str(), &format!("Bearer {key}"))?,
            });
        }
        Ok(Connection {
            url,
            headers,
            http: e.http.clone(),
            endpoint: EndpointInfo::new(&e.id, &base, &e.model, &e.key_hint).with_url_hint(
                "an Anthropic-protocol base_url is the API's root (https://api.anthropic.com, or the gateway's \
                 /anthropic path); octo adds /v1/messages",
            ),
            secret: e.api_key.clone(),
            name: format!("{}:{}", e.id, e.model),
        })
    }

    fn body(&self, request: &Request<'_>, stream: bool, tools: bool) -> Result<Vec<u8>, serde_json::Error> {
        body::build(request, &self.config, stream, tools)
    }

    fn parser(&self, endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>) -> AnthropicParser {
        AnthropicParser::new(endpoint, secret)
    }

    fn response(&self, body: &[u8], endpoint: &EndpointInfo) -> Result<Response, ProviderError> {
        response_from_json(body, endpoint)
    }
}
