//! A raw TCP server for what a mock HTTP server cannot do: a body that stops mid-stream and
//! stalls, or a connection cut in the middle of a chunk.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server does after writing its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Keep the connection open, sending nothing, for this long.
    Hang(Duration),
    /// Close the connection at once.
    Close,
    /// Reset the connection (TCP RST, as a crashed server or a dropped route does).
    Reset,
}

/// Starts a server on loopback that answers each connection by reading the request head, writing
/// `response` verbatim, then doing `after`. Returns its base URL (`http://127.0.0.1:PORT`).
pub async fn serve(response: Vec<u8>, after: After) -> std::io::Result<String> {
    Ok(serve_sequence(vec![(response, after)]).await?.base)
}

/// A raw server answering connections from a script.
#[derive(Debug, Clone)]
pub struct RawServer {
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub base: String,
    connections: Arc<AtomicUsize>,
}

impl RawServer {
    /// How many connections (requests) it has answered.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Starts a server on loopback whose n-th connection gets the n-th `(response, after)` (the last
/// one again once the script is used up).
pub async fn serve_sequence(script: Vec<(Vec<u8>, After)>) -> std::io::Result<RawServer> {
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let addr = listener.local_addr()?;
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&connections);
    let script = Arc::new(script);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let Some((response, after)) = script.get(n).or_else(|| script.last()).cloned() else { continue };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                let mut seen = Vec::new();
                // Read until the end of the request head; the body is not needed.
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                if sock.write_all(&response).await.is_err() {
                    return;
                }
                let _ = sock.flush().await;
                match after {
                    After::Hang(d) => tokio::time::sleep(d).await,
                    After::Close => {}
                    After::Reset => {
                        let _ = sock.set_zero_linger();
                    }
                }
            });
        }
    });
    Ok(RawServer { base: format!("http://{addr}"), connections })
}

/// A whole chunked `text/event-stream` 200 response carrying `body`.
pub fn sse_response(body: &str) -> Vec<u8> {
    let mut v = sse_head();
    v.extend(chunk(body));
    v.extend_from_slice(b"0\r\n\r\n");
    v
}

/// The head of a chunked `text/event-stream` 200 response.
pub fn sse_head() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n".to_vec()
}

/// `data` as one HTTP/1.1 chunk.
pub fn chunk(data: &str) -> Vec<u8> {
    let mut v = format!("{:x}\r\n", data.len()).into_bytes();
    v.extend_from_slice(data.as_bytes());
    v.extend_from_slice(b"\r\n");
    v
}
