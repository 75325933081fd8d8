//! The older HTTP+SSE transport (MCP 2024-11-05), for servers configured with `type: "sse"`:
//! a GET on the URL opens an event stream whose first `endpoint` event names where to POST
//! messages; the server's messages arrive as `message` events on that stream. The SDK (3.x)
//! has no client for it, so it is this small [`Transport`] over octo's HTTP client.

use futures_util::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use std::sync::Arc;
use std::time::Duration;

/// Why a message could not be sent (or the stream could not be opened).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    #[error("{0}")]
    Http(String),
}

/// A connected HTTP+SSE session.
pub(crate) struct LegacySse {
    client: reqwest::Client,
    post_to: Arc<str>,
    headers: reqwest::header::HeaderMap,
    rx: tokio::sync::mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Opens the event stream at `url` and waits (within `timeout`) for the `endpoint` event.
pub(crate) async fn open(
    client: reqwest::Client,
    url: &str,
    headers: reqwest::header::HeaderMap,
    timeout: Duration,
) -> Result<LegacySse, String> {
    let resp = tokio::time::timeout(
        timeout,
        client.get(url).headers(headers.clone()).header("accept", "text/event-stream").send(),
    )
    .await
    .map_err(|_| format!("{url} did not open its event stream within {}s", timeout.as_secs()))?
    .map_err(|e| format!("{url}: {}", crate::explain::reqwest_reason(&e)))?;
    let status = resp.status().as_u16();
    if status == 401 {
        return Err(format!("{url} needs a token (HTTP 401): give one with `bearer_token_env` or `octo mcp login NAME --token`"));
    }
    if !resp.status().is_success() {
        return Err(format!(
            "{url} answered HTTP {status} to the event stream's GET (is it an HTTP+SSE server?)"
        ));
    }
    let base = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
    let endpoint = tokio::time::timeout(timeout, async {
        while let Some(Ok(ev)) = events.next().await {
            if ev.event.as_deref() == Some("endpoint") {
                return ev.data;
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .ok_or_else(|| format!("{url} sent no `endpoint` event: it does not speak the HTTP+SSE transport (try `type = \"http\"`)"))?;
    let post_to = base.join(endpoint.trim()).map_err(|e| format!("{url}: its endpoint `{endpoint}`: {e}"))?;
    if post_to.origin() != base.origin() {
        return Err(format!("{url} named an endpoint on another origin ({post_to}); octo posts only to the server it was given"));
    }
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let reader = tokio::spawn(async move {
        while let Some(Ok(ev)) = events.next().await {
            if !matches!(ev.event.as_deref(), None | Some("message")) {
                continue;
            }
            let Some(data) = ev.data else { continue };
            if let Ok(msg) = serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                if tx.send(msg).await.is_err() {
                    break;
                }
            }
        }
    });
    Ok(LegacySse { client, post_to: Arc::from(post_to.as_str()), headers, rx, reader })
}

impl Transport<RoleClient> for LegacySse {
    type Error = SseError;

    fn name() -> std::borrow::Cow<'static, str> {
        "HTTP+SSE".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (client, to, headers) = (self.client.clone(), Arc::clone(&self.post_to), self.headers.clone());
        async move {
            let body = serde_json::to_string(&item).map_err(|e| SseError::Http(e.to_string()))?;
            let resp = client
                .post(&*to)
                .headers(headers)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| SseError::Http(format!("{to}: {}", crate::explain::reqwest_reason(&e))))?;
            if resp.status().is_success() {
                Ok(())
            } else {
                Err(SseError::Http(format!("{to} answered HTTP {}", resp.status().as_u16())))
            }
        }
    }

    fn receive(&mut self) -> impl std::future::Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}
