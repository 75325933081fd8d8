//! One implementation of the whole Sender capability stack over HTTP, shared by every wire
//! protocol: an adapter supplies a [`WireProtocol`] (how to build a body, parse a stream and
//! parse a whole response) and gets buffered, streaming, tool and streaming-tool sending.

use crate::classify::EndpointInfo;
use crate::http::{build_client, HttpConfig, SetupError};
use crate::transport::{PreparedRequest, StreamParser, Transport};
use futures_util::future::BoxFuture;
use octo_agent::{
    async_trait, EventStream, ProviderError, Request, Response, Sender, StreamingSender, ToolSender,
    ToolStreamingSender,
};
use reqwest::header::HeaderMap;
use std::sync::Arc;
use tokio::sync::OnceCell;

/// Where and how requests of a protocol are sent, decided once when the sender is built.
#[derive(Debug, Clone)]
pub struct Connection {
    /// The full URL requests go to.
    pub url: String,
    /// Headers of every request (auth, versions, content type); mark secrets sensitive.
    pub headers: HeaderMap,
    /// Client settings.
    pub http: HttpConfig,
    /// Who the endpoint is, for error messages.
    pub endpoint: EndpointInfo,
    /// The API key, redacted from every error message.
    pub secret: Option<String>,
    /// The sender's name (`endpoint:model`).
    pub name: String,
}

/// One wire protocol: everything protocol-specific an [`HttpSender`] needs.
pub trait WireProtocol: Send + Sync + 'static {
    /// The stream parser of this protocol.
    type Parser: StreamParser;

    /// Validates the configuration and says where requests go.
    fn connection(&self) -> Result<Connection, SetupError>;

    /// Serializes a request body (`stream`: a streaming request; `tools`: include tools).
    fn body(&self, request: &Request<'_>, stream: bool, tools: bool) -> Result<Vec<u8>, serde_json::Error>;

    /// A fresh parser for one streamed response.
    fn parser(&self, endpoint: Arc<EndpointInfo>, secret: Option<Arc<str>>) -> Self::Parser;

    /// Parses a whole (non-streaming) response body.
    fn response(&self, body: &[u8], endpoint: &EndpointInfo) -> Result<Response, ProviderError>;

    /// Learns what the server can tell about the model before the first request (a local
    /// server's context window). Called once per sender, before its first request; it must be
    /// quick and never fail the request. The default learns nothing.
    fn discover<'a>(&'a self, _client: &'a reqwest::Client) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// The context window [`WireProtocol::discover`] learned, if any.
    fn context_window(&self) -> Option<u64> {
        None
    }
}

/// A model endpoint speaking protocol `W`, with every level of the Sender stack.
#[derive(Debug)]
pub struct HttpSender<W> {
    wire: W,
    transport: Transport,
    discovered: OnceCell<()>,
    endpoint: Arc<EndpointInfo>,
    secret: Option<Arc<str>>,
    url: String,
    headers: HeaderMap,
    name: String,
}

impl<W: WireProtocol> HttpSender<W> {
    /// Builds the sender from the protocol's configuration; fails on an invalid base URL, header
    /// or proxy.
    pub fn new(config: impl Into<W>) -> Result<Self, SetupError> {
        let wire = config.into();
        let c = wire.connection()?;
        let client = build_client(&c.http)?;
        let transport = Transport::new(client, &c.http, c.endpoint.clone(), c.secret.clone());
        Ok(Self {
            wire,
            transport,
            discovered: OnceCell::new(),
            endpoint: Arc::new(c.endpoint),
            secret: c.secret.map(Arc::from),
            url: c.url,
            headers: c.headers,
            name: c.name,
        })
    }

    /// The protocol (and through it, its configuration).
    pub fn wire(&self) -> &W {
        &self.wire
    }

    fn prepare(
        &self,
        req: &Request<'_>,
        stream: bool,
        tools: bool,
    ) -> Result<PreparedRequest, ProviderError> {
        let body = self.wire.body(req, stream, tools).map_err(|e| ProviderError::InvalidRequest {
            status: None,
            message: format!("could not serialize the request: {e}"),
        })?;
        Ok(PreparedRequest { url: self.url.clone(), headers: self.headers.clone(), body: body.into() })
    }

    /// Runs the protocol's discovery once, before the first request.
    async fn discover(&self) {
        self.discovered.get_or_init(|| self.wire.discover(self.transport.client())).await;
    }

    fn stream(&self, req: &Request<'_>, tools: bool) -> Result<EventStream, ProviderError> {
        let prepared = self.prepare(req, true, tools)?;
        let parser = self.wire.parser(Arc::clone(&self.endpoint), self.secret.clone());
        Ok(self.transport.post_sse(prepared, parser))
    }

    async fn buffered(&self, req: &Request<'_>, tools: bool) -> Result<Response, ProviderError> {
        self.discover().await;
        let prepared = self.prepare(req, false, tools)?;
        let body = self.transport.post_json(&prepared).await?;
        self.wire.response(&body, &self.endpoint)
    }
}

#[async_trait]
impl<W: WireProtocol> Sender for HttpSender<W> {
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

    fn context_window(&self) -> Option<u64> {
        self.wire.context_window()
    }
}

#[async_trait]
impl<W: WireProtocol> StreamingSender for HttpSender<W> {
    async fn send_stream(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.discover().await;
        self.stream(&request, false)
    }
}

#[async_trait]
impl<W: WireProtocol> ToolSender for HttpSender<W> {
    async fn send_with_tools(&self, request: Request<'_>) -> Result<Response, ProviderError> {
        self.buffered(&request, true).await
    }
}

#[async_trait]
impl<W: WireProtocol> ToolStreamingSender for HttpSender<W> {
    async fn send_stream_with_tools(&self, request: Request<'_>) -> Result<EventStream, ProviderError> {
        self.discover().await;
        self.stream(&request, true)
    }
}

/// An `Authorization: Bearer` (or other) header carrying a key, marked sensitive; the error
/// never echoes the key.
pub fn secret_header(name: &str, value: &str) -> Result<HeaderMap, SetupError> {
    let mut map = crate::http::header_map(&[(name.to_owned(), value.to_owned())]).map_err(|_| {
        SetupError::InvalidHeader {
            name: name.to_owned(),
            reason: "the API key contains characters that cannot be sent in a header".into(),
        }
    })?;
    for v in map.values_mut() {
        v.set_sensitive(true);
    }
    Ok(map)
}
