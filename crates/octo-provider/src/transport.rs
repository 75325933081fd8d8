//! Sending a request with retries, and streaming its SSE response through a protocol parser.

use crate::classify::{classify_http, classify_transport, EndpointInfo};
use crate::content::{self, Kind};
use crate::http::HttpConfig;
use crate::retry::RetryPolicy;
use crate::sse::{SseDecoder, SseEvent};
use crate::waits::{is_stall, is_whole_response_timeout, read_capped};
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use octo_agent::{ContentBlock, EventStream, ProviderError, Response, StreamEvent};
use reqwest::header::HeaderMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// Error bodies are read up to this size; the rest is not needed to explain the error.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// A whole JSON reply to a streaming request is read up to this size.
const MAX_WHOLE_BODY: usize = 64 * 1024 * 1024;
/// How much of an answer that is not the API is read to show in the error.
const SHOWN_BYTES: usize = 1024;

/// A duration in seconds as a person writes it: `2`, `0.5`.
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s:.2}").trim_end_matches('0').to_owned()
    }
}

/// The stream events that deliver a whole reply: its text, thinking and tool calls, usage and
/// stop reason, as if it had streamed.
pub fn response_events(resp: Response) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    let mut index = 0;
    for block in resp.message.content {
        match block {
            ContentBlock::Text { text } => out.push(StreamEvent::TextDelta(text)),
            ContentBlock::Thinking { thinking, signature } => {
                out.push(StreamEvent::ThinkingDelta(thinking));
                if let Some(sig) = signature {
                    out.push(StreamEvent::ThinkingSignature(sig));
                }
            }
            ContentBlock::RedactedThinking { data } => out.push(StreamEvent::RedactedThinking(data)),
            ContentBlock::Reasoning { id, summary, encrypted_content, source } => {
                if !summary.is_empty() {
                    out.push(StreamEvent::ThinkingDelta(summary.clone()));
                }
                out.push(StreamEvent::Reasoning { id, summary, encrypted_content, source });
            }
            ContentBlock::ToolUse { id, name, input } => {
                out.push(StreamEvent::ToolUseStart { index, id, name });
                // Arguments that were not JSON arrive as a string; they are passed on as written
                // so the loop answers the call with an error the model can act on.
                let partial_json = match input {
                    serde_json::Value::String(raw) => raw,
                    other => other.to_string(),
                };
                out.push(StreamEvent::ToolUseInputDelta { index, partial_json });
                out.push(StreamEvent::ToolUseStop { index });
                index += 1;
            }
            _ => {}
        }
    }
    out.push(StreamEvent::Usage(resp.usage));
    out.push(StreamEvent::Stop(resp.stop_reason));
    out
}

/// Turns one protocol's SSE events into normalized stream events.
pub trait StreamParser: Clone + Send + 'static {
    /// Handles one SSE event, pushing what it means onto `out`. An `Err` ends the stream.
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;

    /// The body ended. Returns an error when the protocol's closing event never came (a
    /// connection cut mid-response); may push final events.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;

    /// Whether the closing event has been seen; anything after it is ignored.
    fn finished(&self) -> bool;

    /// The server answered the streaming request with one whole JSON reply (some servers ignore
    /// `stream: true`): parse it in this protocol and push what it says, as if it had streamed
    /// (see [`response_events`]).
    fn whole(&mut self, body: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
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
    first_byte: Duration,
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
            first_byte: config.first_byte_timeout,
            request_timeout: config.request_timeout,
        }
    }

    /// The HTTP client (for a protocol's own side requests, such as discovery).
    pub fn client(&self) -> &reqwest::Client {
        &self.client
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
            // A streaming request has no overall timeout, so bound the wait for the response head
            // (a local server may read the whole prompt before it answers).
            let head = self.first_byte;
            match tokio::time::timeout(head, builder.send()).await {
                Ok(r) => r,
                Err(_) => {
                    return Err(ProviderError::Transport {
                        message: format!(
                            "endpoint `{}` at {} sent no response within {}s (no first byte)",
                            self.endpoint.name,
                            self.endpoint.base_url,
                            secs(head)
                        ),
                    })
                }
            }
        };
        let resp = sent.map_err(|e| {
            let err = classify_transport(&e, &self.endpoint, self.secret());
            // A connect that timed out sent nothing: it is retried like a refused one.
            if buffered && e.is_timeout() && !e.is_connect() {
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
                Ok(resp) => self.whole_body(&req.url, resp).await,
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

    /// The body of a successful buffered answer, refused when it is not the API (an HTML page,
    /// plain text, nothing).
    async fn whole_body(&self, url: &str, resp: reqwest::Response) -> Result<Bytes, ProviderError> {
        let ct = content::content_type(resp.headers());
        let kind = content::kind(resp.headers());
        let body = resp.bytes().await.map_err(|e| classify_transport(&e, &self.endpoint, self.secret()))?;
        let refused = match kind {
            Kind::Other(_) => true,
            Kind::Stream { sniff: true } => {
                body.iter().all(u8::is_ascii_whitespace)
                    || matches!(content::sniff(&body), Some(Kind::Other(_)))
            }
            _ => false,
        };
        if refused {
            let shown = &body[..body.len().min(SHOWN_BYTES)];
            return Err(content::bad_endpoint(&self.endpoint, url, &ct, shown, self.secret()));
        }
        Ok(body)
    }

    /// Starts a streaming request. The returned stream connects lazily, retries connection
    /// failures and retryable statuses (yielding a [`StreamEvent::Retry`] before each wait),
    /// fails as stalled when the body is silent for the configured time, and decodes the body
    /// through `parser`. A retryable failure after part of the reply arrived (a reset, an early
    /// close, a malformed or retryable error event, a stall) starts the request again within the
    /// same attempts, announced by a `Retry` with `restart` set. A whole JSON reply is parsed as
    /// if it had streamed; an answer that is not the API (HTML, plain text, an empty body) is a
    /// `BadEndpoint` error, not retried. Dropping the stream aborts the request.
    pub fn post_sse<P: StreamParser>(&self, req: PreparedRequest, parser: P) -> EventStream {
        let driver = Driver {
            transport: self.clone(),
            req,
            fresh: parser.clone(),
            parser,
            content_seen: false,
            attempt: 1,
            stalls: 0,
            empties: 0,
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

enum State {
    Connect {
        attempt: u32,
    },
    Wait {
        attempt: u32,
        delay: Duration,
    },
    Open {
        body: Body,
        decoder: SseDecoder,
        sniff: bool,
        bytes: usize,
    },
    /// Reading a whole JSON reply.
    Whole {
        body: Body,
        buf: Vec<u8>,
    },
    /// Reading the first bytes of an answer that is not the API, to show them.
    Reject {
        body: Body,
        buf: Vec<u8>,
        content_type: String,
    },
    Done,
}

type Body = BoxStream<'static, reqwest::Result<Bytes>>;

struct Driver<P> {
    transport: Transport,
    req: PreparedRequest,
    /// The parser as it was before the first byte, to start over on a retry.
    fresh: P,
    parser: P,
    /// Whether anything the user sees (not usage, not retry notices) has been produced: a retry
    /// after that restarts the reply.
    content_seen: bool,
    /// The attempt in progress.
    attempt: u32,
    /// Stalls retried so far (one at most: a second fails the request).
    stalls: u32,
    /// Empty answers retried so far (one at most).
    empties: u32,
    state: State,
    queue: VecDeque<Result<StreamEvent, ProviderError>>,
    scratch: Vec<StreamEvent>,
    sse: Vec<SseEvent>,
}

/// What reading one more chunk gave.
enum Read {
    Chunk(Bytes),
    End,
    Failed(ProviderError),
}

/// Reads the next chunk of `body`, failing as stalled after the transport's stall timeout (the
/// first-byte timeout while nothing has arrived).
async fn read(transport: &Transport, body: &mut Body, first: bool) -> Read {
    let wait = if first { transport.first_byte } else { transport.stall };
    match tokio::time::timeout(wait, body.next()).await {
        Err(_) if first => Read::Failed(ProviderError::Transport {
            message: format!(
                "endpoint `{}` sent no first byte within {}s (stalled stream)",
                transport.endpoint.name,
                secs(wait)
            ),
        }),
        Err(_) => Read::Failed(ProviderError::Transport {
            message: format!(
                "endpoint `{}` stopped sending for {}s mid-response (stalled stream)",
                transport.endpoint.name,
                secs(wait)
            ),
        }),
        Ok(Some(Err(e))) => Read::Failed(classify_transport(&e, &transport.endpoint, transport.secret())),
        Ok(Some(Ok(chunk))) => Read::Chunk(chunk),
        Ok(None) => Read::End,
    }
}

impl<P: StreamParser> Driver<P> {
    fn bad_endpoint(&self, content_type: &str, body: &[u8]) -> ProviderError {
        content::bad_endpoint(
            &self.transport.endpoint,
            &self.req.url,
            content_type,
            body,
            self.transport.secret(),
        )
    }

    /// The next item of the stream: each state's step runs until one queues something or the
    /// stream is over.
    async fn next(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            // Each step leaves the state `Done` unless it sets the next one.
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return None,
                State::Wait { attempt, delay } => {
                    tokio::time::sleep(delay).await;
                    self.state = State::Connect { attempt };
                }
                State::Connect { attempt } => self.connect(attempt).await,
                State::Whole { body, buf } => self.read_whole(body, buf).await,
                State::Reject { body, buf, content_type } => {
                    self.read_rejected(body, buf, content_type).await;
                }
                State::Open { body, decoder, sniff, bytes } => {
                    self.read_stream(body, decoder, sniff, bytes).await;
                }
            }
        }
    }

    /// Sends attempt `attempt`; an answer starts over with a fresh parser, read as its content
    /// type says.
    async fn connect(&mut self, attempt: u32) {
        self.attempt = attempt;
        match self.transport.attempt(&self.req, false).await {
            Ok(resp) => {
                self.parser = self.fresh.clone();
                let kind = content::kind(resp.headers());
                let content_type = content::content_type(resp.headers());
                let body = resp.bytes_stream().boxed();
                self.state = match kind {
                    Kind::Stream { sniff } => {
                        State::Open { body, decoder: SseDecoder::new(), sniff, bytes: 0 }
                    }
                    Kind::Json => State::Whole { body, buf: Vec::new() },
                    Kind::Other(_) => State::Reject { body, buf: Vec::new(), content_type },
                };
            }
            Err(e) => self.fail(e),
        }
    }

    /// Reads more of a whole JSON reply; at its end, parses it.
    async fn read_whole(&mut self, mut body: Body, mut buf: Vec<u8>) {
        match read(&self.transport, &mut body, false).await {
            Read::Chunk(chunk) if buf.len() + chunk.len() > MAX_WHOLE_BODY => {
                self.fail(ProviderError::MalformedStream {
                    message: format!("the reply is larger than {} MB", MAX_WHOLE_BODY >> 20),
                });
            }
            Read::Chunk(chunk) => {
                buf.extend_from_slice(&chunk);
                self.state = State::Whole { body, buf };
            }
            Read::Failed(e) => self.fail(e),
            Read::End => self.parse_whole(&buf),
        }
    }

    /// Parses a whole JSON reply into the queue; nothing of a reply that fails to parse is kept.
    fn parse_whole(&mut self, buf: &[u8]) {
        let mut out = std::mem::take(&mut self.scratch);
        match self.parser.whole(buf, &mut out) {
            Ok(()) => self.enqueue(&mut out),
            Err(e) => {
                out.clear();
                self.fail(e);
            }
        }
        self.scratch = out;
    }

    /// Reads the first bytes of an answer that is not the API, then fails with them.
    async fn read_rejected(&mut self, mut body: Body, mut buf: Vec<u8>, content_type: String) {
        match read(&self.transport, &mut body, false).await {
            Read::Chunk(chunk) if buf.len() < SHOWN_BYTES => {
                buf.extend_from_slice(&chunk);
                self.state = State::Reject { body, buf, content_type };
            }
            _ => {
                buf.truncate(SHOWN_BYTES);
                let e = self.bad_endpoint(&content_type, &buf);
                self.fail(e);
            }
        }
    }

    /// Reads more of an SSE body; `bytes` is how much of it has arrived so far.
    async fn read_stream(&mut self, mut body: Body, decoder: SseDecoder, sniff: bool, bytes: usize) {
        match read(&self.transport, &mut body, bytes == 0).await {
            Read::Failed(e) => self.fail(e),
            Read::Chunk(chunk) => self.stream_chunk(body, decoder, sniff, bytes, chunk),
            Read::End if bytes == 0 && self.empties == 0 => {
                // One empty answer is retried: a proxy or a server restarting does this once.
                self.empties += 1;
                self.fail(ProviderError::Server {
                    status: None,
                    message: format!(
                        "endpoint `{}` answered with an empty body",
                        self.transport.endpoint.name
                    ),
                });
            }
            Read::End if bytes == 0 => {
                let e = content::empty_reply(
                    &self.transport.endpoint,
                    &self.req.url,
                    if sniff { "" } else { "text/event-stream" },
                    self.req.body.len(),
                    self.transport.secret(),
                );
                self.fail(e);
            }
            Read::End => self.stream_end(decoder),
        }
    }

    /// Decodes one chunk of an SSE body, unless its first bytes show it is something else.
    fn stream_chunk(&mut self, body: Body, mut decoder: SseDecoder, sniff: bool, bytes: usize, chunk: Bytes) {
        // Without a content type, the first bytes say what the body is.
        match (sniff && bytes == 0).then(|| content::sniff(&chunk)).flatten() {
            Some(Kind::Json) => self.state = State::Whole { body, buf: chunk.to_vec() },
            Some(Kind::Other(ct)) => {
                self.state = State::Reject { body, buf: chunk.to_vec(), content_type: ct };
            }
            _ => {
                decoder.feed(&chunk, &mut self.sse);
                if self.parse_pending() {
                    let bytes = bytes + chunk.len();
                    self.state = State::Open { body, decoder, sniff, bytes };
                }
            }
        }
    }

    /// The SSE body ended: parses what is left, and lets the parser say whether the reply was
    /// complete.
    fn stream_end(&mut self, mut decoder: SseDecoder) {
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

    /// Handles a failure of the current attempt: retry when the error is retryable and attempts
    /// are left (a restart, voiding what was streamed, when part of the reply had arrived), else
    /// report it. The state is `Done` unless a retry is set up.
    fn fail(&mut self, e: ProviderError) {
        let next = self.attempt + 1;
        if is_stall(&e) {
            // A stall is retried once: a second one means the server is stuck, and five
            // attempts of two minutes each would leave the user waiting ten.
            self.stalls += 1;
            if self.stalls > 1 {
                self.queue.push_back(Err(e));
                return;
            }
        }
        match self.transport.retry.delay_before(next, &e) {
            Some(delay) => {
                let restart = std::mem::take(&mut self.content_seen);
                self.queue.push_back(Ok(StreamEvent::Retry {
                    attempt: next,
                    max_attempts: self.transport.retry.max_attempts,
                    delay,
                    reason: crate::classify::short_reason(&e.to_string()),
                    restart,
                }));
                self.state = State::Wait { attempt: next, delay };
            }
            None => self.queue.push_back(Err(e)),
        }
    }
}
