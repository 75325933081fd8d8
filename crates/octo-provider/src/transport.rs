//! Sending a request with retries, and streaming its SSE response through a protocol parser.

use crate::classify::{classify_http, classify_transport, EndpointInfo};
use crate::http::HttpConfig;
use crate::retry::RetryPolicy;
use crate::sse::{SseDecoder, SseEvent};
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use octo_agent::{EventStream, ProviderError, StreamEvent};
use reqwest::header::HeaderMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// Error bodies are read up to this size; the rest is not needed to explain the error.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Turns one protocol's SSE events into normalized stream events.
pub trait StreamParser: Clone + Send + 'static {
    /// Handles one SSE event, pushing what it means onto `out`. An `Err` ends the stream.
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;

    /// The body ended. Returns an error when the protocol's closing event never came (a
    /// connection cut mid-response); may push final events.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;

    /// Whether the closing event has been seen; anything after it is ignored.
    fn finished(&self) -> bool;
}

/// One prepared HTTP request: everything needed to send it again on retry.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// Full URL.
    pub url: String,
    /// Headers for this request (auth, versions); the client's defaults are added.
    pub headers: HeaderMap,
    /// The serialized JSON body.
    pub body: Bytes,
}

/// An endpoint's client, retry policy and identity: what every request to it shares.
#[derive(Debug, Clone)]
pub struct Transport {
    client: reqwest::Client,
    endpoint: Arc<EndpointInfo>,
    secret: Option<Arc<str>>,
    retry: RetryPolicy,
    stall: Duration,
    request_timeout: Duration,
}

impl Transport {
    /// A transport for `endpoint`; `secret` (the API key) is redacted from every error message.
    pub fn new(
        client: reqwest::Client,
        config: &HttpConfig,
        endpoint: EndpointInfo,
        secret: Option<String>,
    ) -> Self {
        Self {
            client,
            endpoint: Arc::new(endpoint),
            secret: secret.map(Arc::from),
            retry: config.retry,
            stall: config.stall_timeout,
            request_timeout: config.request_timeout,
        }
    }

    /// Who this transport talks to.
    pub fn endpoint(&self) -> &EndpointInfo {
        &self.endpoint
    }

    fn secret(&self) -> Option<&str> {
        self.secret.as_deref()
    }

    /// Sends once; a non-success status is classified.
    async fn attempt(
        &self,
        req: &PreparedRequest,
        buffered: bool,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut builder = self.client.post(&req.url).headers(req.headers.clone()).body(req.body.clone());
        if buffered {
            builder = builder.timeout(self.request_timeout);
        }
        let sent = if buffered {
            builder.send().await
        } else {
            // A streaming request has no overall timeout, so bound the wait for the response head.
            match tokio::time::timeout(self.stall, builder.send()).await {
                Ok(r) => r,
                Err(_) => {
                    return Err(ProviderError::Transport {
                        message: format!(
                            "endpoint `{}` at {} sent no response within {}s",
                            self.endpoint.name,
                            self.endpoint.base_url,
                            self.stall.as_secs()
                        ),
                    })
                }
            }
        };
        let resp = sent.map_err(|e| {
            let err = classify_transport(&e, &self.endpoint, self.secret());
            if buffered && e.is_timeout() {
                // The whole generation ran out of time; sending it again would likely do the same
                // (and may be billed twice).
                return ProviderError::Server {
                    status: None,
                    message: format!(
                        "{err} (no complete response within {}s)",
                        self.request_timeout.as_secs()
                    ),
                };
            }
            err
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let headers = resp.headers().clone();
        // A gateway can send an error head and then a body that never ends: bound the read.
        let body =
            tokio::time::timeout(self.stall, read_capped(resp, MAX_ERROR_BODY)).await.unwrap_or_default();
        Err(classify_http(status.as_u16(), &headers, &body, &self.endpoint, self.secret()))
    }

    /// Sends a request and returns the whole success body, retrying per the policy.
    pub async fn post_json(&self, req: &PreparedRequest) -> Result<Bytes, ProviderError> {
        let mut attempt = 1;
        loop {
            let result = match self.attempt(req, true).await {
                Ok(resp) => {
                    resp.bytes().await.map_err(|e| classify_transport(&e, &self.endpoint, self.secret()))
                }
                Err(e) => Err(e),
            };
            match result {
                Ok(body) => return Ok(body),
                Err(e) if is_whole_response_timeout(&e) => return Err(e),
                Err(e) => match self.retry.delay_before(attempt + 1, &e) {
                    Some(delay) => {
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                    }
                    None => return Err(e),
                },
            }
        }
    }

    /// Starts a streaming request. The returned stream connects lazily, retries connection
    /// failures and retryable statuses (yielding a [`StreamEvent::Retry`] before each wait),
    /// fails as stalled when the body is silent for the configured time, and decodes the body
    /// through `parser`. Dropping the stream aborts the request.
    pub fn post_sse<P: StreamParser>(&self, req: PreparedRequest, parser: P) -> EventStream {
        let driver = Driver {
            transport: self.clone(),
            req,
            fresh: parser.clone(),
            parser,
            content_seen: false,
            attempt: 1,
            state: State::Connect { attempt: 1 },
            queue: VecDeque::new(),
            scratch: Vec::new(),
            sse: Vec::new(),
        };
        Box::pin(stream::unfold(driver, |mut d| async move {
            let item = d.next().await?;
            Some((item, d))
        }))
    }
}

fn is_whole_response_timeout(e: &ProviderError) -> bool {
    matches!(e, ProviderError::Server { status: None, message } if message.contains("no complete response within"))
}

async fn read_capped(resp: reqwest::Response, cap: usize) -> Vec<u8> {
    let mut body = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(Ok(chunk)) = s.next().await {
        let room = cap.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= cap {
            break;
        }
    }
    body
}

enum State {
    Connect { attempt: u32 },
    Wait { attempt: u32, delay: Duration },
    Open { body: BoxStream<'static, reqwest::Result<Bytes>>, decoder: SseDecoder },
    Done,
}

struct Driver<P> {
    transport: Transport,
    req: PreparedRequest,
    /// The parser as it was before the first byte, to start over on a retry.
    fresh: P,
    parser: P,
    /// Whether anything the user sees (not usage, not retry notices) has been produced: after
    /// that, a failure is reported rather than retried.
    content_seen: bool,
    /// The attempt in progress.
    attempt: u32,
    state: State,
    queue: VecDeque<Result<StreamEvent, ProviderError>>,
    scratch: Vec<StreamEvent>,
    sse: Vec<SseEvent>,
}

impl<P: StreamParser> Driver<P> {
    async fn next(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return None,
                State::Wait { attempt, delay } => {
                    tokio::time::sleep(delay).await;
                    self.state = State::Connect { attempt };
                }
                State::Connect { attempt } => {
                    self.attempt = attempt;
                    match self.transport.attempt(&self.req, false).await {
                        Ok(resp) => {
                            self.parser = self.fresh.clone();
                            self.state =
                                State::Open { body: resp.bytes_stream().boxed(), decoder: SseDecoder::new() }
                        }
                        Err(e) => self.fail(e),
                    }
                }
                State::Open { mut body, mut decoder } => {
                    let stall = self.transport.stall;
                    match tokio::time::timeout(stall, body.next()).await {
                        Err(_) => {
                            let e = ProviderError::Transport {
                                message: format!(
                                    "endpoint `{}` stopped sending for {}s mid-response (stalled stream)",
                                    self.transport.endpoint.name,
                                    stall.as_secs()
                                ),
                            };
                            self.fail(e);
                        }
                        Ok(Some(Err(e))) => {
                            let e = classify_transport(&e, &self.transport.endpoint, self.transport.secret());
                            self.fail(e);
                        }
                        Ok(Some(Ok(chunk))) => {
                            decoder.feed(&chunk, &mut self.sse);
                            if self.parse_pending() {
                                self.state = State::Open { body, decoder };
                            }
                        }
                        Ok(None) => {
                            decoder.finish(&mut self.sse);
                            if self.parse_pending() {
                                let mut out = std::mem::take(&mut self.scratch);
                                let end = self.parser.end(&mut out);
                                self.enqueue(&mut out);
                                self.scratch = out;
                                if let Err(e) = end {
                                    self.fail(e);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Runs decoded SSE events through the parser. Returns whether the stream goes on (no error,
    /// closing event not yet seen).
    fn parse_pending(&mut self) -> bool {
        let mut out = std::mem::take(&mut self.scratch);
        let mut sse = std::mem::take(&mut self.sse);
        let mut failed = None;
        for ev in sse.drain(..) {
            if self.parser.finished() {
                break;
            }
            if let Err(e) = self.parser.event(ev, &mut out) {
                failed = Some(e);
                break;
            }
        }
        sse.clear();
        self.sse = sse;
        self.enqueue(&mut out);
        self.scratch = out;
        match failed {
            Some(e) => {
                self.fail(e);
                false
            }
            None => !self.parser.finished(),
        }
    }

    fn enqueue(&mut self, out: &mut Vec<StreamEvent>) {
        for ev in out.drain(..) {
            if !matches!(ev, StreamEvent::Usage(_) | StreamEvent::Retry { .. }) {
                self.content_seen = true;
            }
            self.queue.push_back(Ok(ev));
        }
    }

    /// Handles a failure of the current attempt: retry when nothing visible has been produced
    /// and the error is retryable, else report it. The state is `Done` unless a retry is set up.
    fn fail(&mut self, e: ProviderError) {
        let next = self.attempt + 1;
        match (self.content_seen, self.transport.retry.delay_before(next, &e)) {
            (false, Some(delay)) => {
                self.queue.push_back(Ok(StreamEvent::Retry {
                    attempt: next,
                    max_attempts: self.transport.retry.max_attempts,
                    delay,
                    reason: e.to_string(),
                }));
                self.state = State::Wait { attempt: next, delay };
            }
            _ => self.queue.push_back(Err(e)),
        }
    }
}
