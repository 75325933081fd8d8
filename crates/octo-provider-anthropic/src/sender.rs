//! The Sender capability stack implemented over the Anthropic Messages API.

use crate::body;
use crate::config::{AnthropicConfig, AuthStyle};
use crate::parse::{response_from_json, AnthropicParser};
use octo_agent::{
    async_trait, EventStream, ProviderError, Request, Response, Sender, StreamingSender, ToolSender,
    ToolStreamingSender,
};
use octo_provider::http::{build_client, header_map, normalize_base_url};
use octo_provider::{EndpointInfo, PreparedRequest, SetupError, Transport};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;

/// A model behind an Anthropic-protocol endpoint. Implements every level of the Sender stack.
#[derive(Debug, Clone)]
pub struct AnthropicSender {
    config: Arc<AnthropicConfig>,
    transport: Transport,
    url: String,
    headers: HeaderMap,
    name: String,
}

impl AnthropicSender {
    /// Builds the sender; fails on an invalid base URL, header or proxy.
    pub fn new(config: AnthropicConfig) -> Result<Self, SetupError> {
        let base = normalize_base_url(&config.base_url)?;
        let url =
            if base.ends_with("/v1") { format!("{base}/messages") } else { format!("{base}/v1/messages") };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let extra = header_map(&[("anthropic-version".to_owned(), config.version.clone())])?;
        headers.extend(extra);
        if !config.betas.is_empty() {
            headers.extend(header_map(&[("anthropic-beta".to_owned(), config.betas.join(","))])?);
        }
        if let Some(key) = &config.api_key {
            let (name, value) = match config.auth {
                AuthStyle::XApiKey => ("x-api-key".to_owned(), key.clone()),
                AuthStyle::Bearer => (AUTHORIZATION.as_str().to_owned(), format!("Bearer {key}")),
            };
            let mut map = header_map(&[(name.clone(), value)]).map_err(|_| SetupError::InvalidHeader {
                // Never echo the key itself.
                name,
                reason: "the API key contains characters that cannot be sent in a header".into(),
            })?;
            for v in map.values_mut() {
                v.set_sensitive(true);
            }
            headers.extend(map);
        }
        let client = build_client(&config.http)?;
        let endpoint = EndpointInfo::new(&config.endpoint, &base, &config.model, &config.key_hint);
        let transport = Transport::new(client, &config.http, endpoint, config.api_key.clone());
        let name = format!("{}:{}", config.endpoint, config.model);
        Ok(Self { config: Arc::new(config), transport, url, headers, name })
    }

    /// The configuration in use.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }

    fn prepare(
        &self,
        req: &Request<'_>,
        stream: bool,
        tools: bool,
    ) -> Result<PreparedRequest, ProviderError> {
        let body =
            body::build(req, &self.config, stream, tools).map_err(|e| ProviderError::InvalidRequest {
                status: None,
                message: format!("could not serialize the request: {e}"),
            })?;
        Ok(PreparedRequest { url: self.url.clone(), headers: self.headers.clone(), body: body.into() })
    }

    fn stream(&self, req: &Request<'_>, tools: bool) -> Result<EventStream, ProviderError> {
        let prepared = self.prepare(req, true, tools)?;
        let endpoint = Arc::new(self.transport.endpoint().clone());
        let secret = self.config.api_key.as_deref().map(Arc::from);
        Ok(self.transport.post_sse(prepared, AnthropicParser::new(endpoint, secret)))
    }

    async fn buffered(&self, req: &Request<'_>, tools: bool) -> Result<Response, ProviderError> {
        let prepared = self.prepare(req, false, tools)?;
        let body = self.transport.post_json(&prepared).await?;
        response_from_json(&body, self.transport.endpoint())
    }
}

#[async_trait]
impl Sender for AnthropicSender {
    fn name(&self) -> &str {
        &self.name
    }

    async fn send(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.buffered(&request, false).await
    }

    fn as_streaming(&self) -> Option<&dyn StreamingSender> {
        Some(self)
    }

    fn as_tool(&self) -> Option<&dyn ToolSender> {
        Some(self)
    }

    fn as_tool_streaming(&self) -> Option<&dyn ToolStreamingSender> {
        Some(self)
    }
}

#[async_trait]
impl StreamingSender for AnthropicSender {
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.stream(&request, false)
    }
}

#[async_trait]
impl ToolSender for AnthropicSender {
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.buffered(&request, true).await
    }
}

#[async_trait]
impl ToolStreamingSender for AnthropicSender {
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.stream(&request, true)
    }
}
