//! The Sender capability stack implemented over the OpenAI Chat Completions API.

use crate::body;
use crate::config::OpenAiConfig;
use crate::parse::{response_from_json, OpenAiParser};
use octo_agent::{
    async_trait, EventStream, ProviderError, Request, Response, Sender, StreamingSender, ToolSender,
    ToolStreamingSender,
};
use octo_provider::http::{build_client, normalize_base_url};
use octo_provider::{EndpointInfo, PreparedRequest, SetupError, Transport};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;

/// A model behind an OpenAI-compatible (Chat Completions) endpoint. Implements every level of the Sender stack.
#[derive(Debug, Clone)]
pub struct OpenAiSender {
    config: Arc<OpenAiConfig>,
    transport: Transport,
    url: String,
    headers: HeaderMap,
    name: String,
}

impl OpenAiSender {
    /// Builds the sender; fails on an invalid base URL, header or proxy.
    pub fn new(config: OpenAiConfig) -> Result<Self, SetupError> {
        let base = normalize_base_url(&config.base_url)?;
        let url = format!("{base}/chat/completions");
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| SetupError::InvalidHeader {
                    // Never echo the key itself.
                    name: AUTHORIZATION.as_str().to_owned(),
                    reason: "the API key contains characters that cannot be sent in a header".into(),
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let client = build_client(&config.http)?;
        let endpoint = EndpointInfo::new(&config.endpoint, &base, &config.model, &config.key_hint);
        let transport = Transport::new(client, &config.http, endpoint, config.api_key.clone());
        let name = format!("{}:{}", config.endpoint, config.model);
        Ok(Self { config: Arc::new(config), transport, url, headers, name })
    }

    /// The configuration in use.
    pub fn config(&self) -> &OpenAiConfig {
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
        Ok(self.transport.post_sse(prepared, OpenAiParser::new(endpoint, secret)))
    }

    async fn buffered(&self, req: &Request<'_>, tools: bool) -> Result<Response, ProviderError> {
        let prepared = self.prepare(req, false, tools)?;
        let body = self.transport.post_json(&prepared).await?;
        response_from_json(&body, self.transport.endpoint())
    }
}

#[async_trait]
impl Sender for OpenAiSender {
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
impl StreamingSender for OpenAiSender {
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.stream(&request, false)
    }
}

#[async_trait]
impl ToolSender for OpenAiSender {
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.buffered(&request, true).await
    }
}

#[async_trait]
impl ToolStreamingSender for OpenAiSender {
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.stream(&request, true)
    }
}
