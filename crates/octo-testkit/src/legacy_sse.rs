//! The test MCP server over the older HTTP+SSE transport (MCP 2024-11-05), one session: `GET
//! /sse` opens the event stream, whose first event (`endpoint`) names `/messages?session=…`;
//! messages POSTed there are answered (with 202) on the stream as `message` events. The server
//! itself runs on `rmcp` over an in-memory pipe; this module only carries lines both ways.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fixture: fail loudly

use rmcp::ServiceExt;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

type Writer = Arc<tokio::sync::Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>>;

/// Serves the test server over HTTP+SSE on a loopback port; returns the `/sse` URL and the
/// token that stops it.
pub async fn serve_http_legacy_sse(
    options: crate::mcp::Options,
) -> (String, tokio_util::sync::CancellationToken) {
    let ct = tokio_util::sync::CancellationToken::new();
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(theirs);
    tokio::spawn(async move {
        if let Ok(running) = crate::mcp::TestServer::new(options).serve((server_read, server_write)).await {
            let _ = running.waiting().await;
        }
    });
    let (read, write) = tokio::io::split(ours);
    let writer: Writer = Arc::new(tokio::sync::Mutex::new(write));
    let reader = Arc::new(Mutex::new(Some(tokio::io::BufReader::new(read))));
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let (writer, reader) = (Arc::clone(&writer), Arc::clone(&reader));
        async move { route(req, writer, reader).await }
    });
    let url = format!("{}/sse", crate::mcp::serve_router(app, &ct).await);
    (url, ct)
}

type Lines = Arc<Mutex<Option<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>>>;

async fn route(req: axum::extract::Request, writer: Writer, reader: Lines) -> axum::response::Response {
    let resp = axum::response::Response::builder();
    match (req.method().as_str(), req.uri().path()) {
        ("GET", "/sse") => {
            let Some(mut lines) = reader.lock().unwrap().take() else {
                return resp.status(409).body(axum::body::Body::from("one session only")).unwrap();
            };
            let (tx, rx) = tokio::sync::mpsc::channel::<String>(64);
            let _ = tx.send("event: endpoint\ndata: /messages?session=1\n\n".to_owned()).await;
            tokio::spawn(async move {
                let mut line = String::new();
                while lines.read_line(&mut line).await.unwrap_or(0) > 0 {
                    if tx.send(format!("event: message\ndata: {}\n\n", line.trim_end())).await.is_err() {
                        break;
                    }
                    line.clear();
                }
            });
            let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|s| (Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(s)), rx))
            });
            resp.header("content-type", "text/event-stream")
                .body(axum::body::Body::from_stream(stream))
                .unwrap()
        }
        ("POST", "/messages") => {
            let body = axum::body::to_bytes(req.into_body(), 1 << 20).await.unwrap();
            let mut w = writer.lock().await;
            w.write_all(&body).await.unwrap();
            w.write_all(b"\n").await.unwrap();
            resp.status(202).body(axum::body::Body::from("Accepted")).unwrap()
        }
        _ => resp.status(404).body(axum::body::Body::empty()).unwrap(),
    }
}
