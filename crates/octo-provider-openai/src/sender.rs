//! The Chat Completions protocol plugged into the shared [`HttpSender`].

use crate::body;
use crate::config::OpenAiConfig;
use crate::parse::{response_from_json, OpenAiParser};
use futures_util::future::BoxFuture;
use octo_agent::{ProviderError, Request, Response};
use octo_provider::http::normalize_base_url;
use octo_provider::{secret_header, Connection, EndpointInfo, HttpSender, SetupError, WireProtocol};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use std::sync::{Arc, OnceLock};

/// The Chat Completions wire protocol for one configured endpoint and model.
#[derive(Debug, Clone)]
pub struct OpenAiWire {
    config: OpenAiConfig,
    /// The context window the local server reported (set once, by discovery).
    window: Arc<OnceLock<u64>>,
}

impl OpenAiWire {
    /// The configuration in use.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

impl From<OpenAiConfig> for OpenAiWire {
    fn from(config: OpenAiConfig) -> Self {
        Self { config, window: Arc::new(OnceLock::new()) }
    }
}

/// A model behind an OpenAI-compatible (Chat Completions) endpoint, with every level of the
/// Sender stack. Build it with `OpenAiSender::new(config)`.
pub type OpenAiSender = HttpSender<OpenAiWire>;

impl WireProtocol for OpenAiWire {
    type Parser = OpenAiParser;

    fn connection(&self) -> Result<Connection, SetupError> {
        let c = &self.config;
        let e = &c.settings;
        let base = normalize_base_url(&e.base_url)?;
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = e.api_key.as_deref().filter(|k| !k.is_empty()) {
            headers.extend(secret_header(AUTHORIZATION.as_str(), &format!("Bearer {key}"))?);
        }
        Ok(Connection {
            url: format!("{base}/chat/completions"),
            headers,
            http: e.http.clone(),
            endpoint: EndpointInfo::new(&e.id, &base, &e.model, &e.key_hint).with_url_hint(
                "an OpenAI-compatible base_url usually ends in /v1 (http://localhost:8080/v1, \
                 https://api.example.com/v1); octo adds /chat/completions",
            ),
            secret: e.api_key.clone(),
            name: format!("{}:{}", e.id, e.model),
        })
    }

    fn body(&self, request: &Request<'_>, stream: bool, tools: bool) -> Result<Vec<u8>, serde_json::Error> {
        let window = match self.window.get() {
            Some(w) => Some(*w),
            None => self.config.clamp_to_window.then_some(self.config.settings.model_info.context_window),
        };
        body::build(request, &self.config, stream, tools, window)
    }

    fn discover<'a>(&'a self, client: &'a reqwest::Client) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(server) = self.config.discover else { return };
            let s = &self.config.settings;
            if let Some(w) = crate::discover::context_window(client, &s.base_url, &s.model, server).await {
                let _ = self.window.set(w);
            }
        })
    }

    fn context_window(&self) -> Option<u64> {
        self.window.get().copied()
    }

    fn parser(&self, endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>) -> OpenAiParser {
        OpenAiParser::new(endpoint, secret)
    }

    fn response(&self, body: &[u8], endpoint: &EndpointInfo) -> Result<Response, ProviderError> {
        response_from_json(body, endpoint)
    }
}
