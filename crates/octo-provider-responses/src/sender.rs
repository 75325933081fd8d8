//! The Responses protocol plugged into the shared [`HttpSender`].

use crate::body;
use crate::config::{Auth, ResponsesConfig};
use crate::parse::{response_from_json, ResponsesParser};
use octo_agent::{ProviderError, Request, Response};
use octo_provider::http::normalize_base_url;
use octo_provider::{secret_header, Connection, EndpointInfo, HttpSender, SetupError, WireProtocol};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;

/// The Responses wire protocol for one configured endpoint and model.
#[derive(Debug, Clone)]
pub struct ResponsesWire {
    config: ResponsesConfig,
    source: Arc<str>,
}

impl ResponsesWire {
    /// The configuration in use.
    pub fn config(&self) -> &ResponsesConfig {
        &self.config
    }
}

impl From<ResponsesConfig> for ResponsesWire {
    fn from(config: ResponsesConfig) -> Self {
        let source = Arc::from(config.settings.label());
        Self { config, source }
    }
}

/// A model behind a Responses endpoint, with every level of the Sender stack. Build it with
/// `ResponsesSender::new(config)`.
pub type ResponsesSender = HttpSender<ResponsesWire>;

impl WireProtocol for ResponsesWire {
    type Parser = ResponsesParser;

    fn connection(&self) -> Result<Connection, SetupError> {
        let e = &self.config.settings;
        let base = normalize_base_url(&e.base_url)?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = e.api_key.as_deref().filter(|k| !k.is_empty()) {
            match self.config.auth {
                Auth::Bearer => {
                    headers.extend(secret_header(AUTHORIZATION.as_str(), &format!("Bearer {key}"))?);
                }
                Auth::ApiKeyHeader => {
                    headers.extend(secret_header("api-key", key)?);
                }
            }
        }
        Ok(Connection {
            url: format!("{base}/responses"),
            headers,
            http: e.http.clone(),
            endpoint: EndpointInfo::new(&e.id, &base, &e.model, &e.key_hint).with_url_hint(
                "a Responses base_url usually ends in /v1 (https://api.openai.com/v1, \
                 https://<resource>.openai.azure.com/openai/v1); octo adds /responses",
            ),
            secret: e.api_key.clone(),
            name: e.label(),
        })
    }

    fn body(&self, request: &Request<'_>, stream: bool, tools: bool) -> Result<Vec<u8>, serde_json::Error> {
        body::build(request, &self.config, stream, tools)
    }

    fn parser(&self, endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>) -> ResponsesParser {
        ResponsesParser::new(endpoint, secret, Arc::clone(&self.source))
    }

    fn response(&self, body: &[u8], endpoint: &EndpointInfo) -> Result<Response, ProviderError> {
        response_from_json(body, endpoint, &self.source)
    }
}
