//! WebSocket connections to a platform's event gateway (TLS through rustls and the system's
//! roots).

use crate::platform::PlatformError;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// An open gateway connection.
pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Connects to `url` (ws:// or wss://), giving up after 30 seconds.
pub(crate) async fn connect(what: &str, url: &str) -> Result<Ws, PlatformError> {
    // The TLS provider the HTTP clients use serves the WebSocket too.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let shown = url.split('?').next().unwrap_or(url);
    match tokio::time::timeout(Duration::from_secs(30), tokio_tungstenite::connect_async(url)).await {
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(e)) => Err(PlatformError::Other(format!("{what}: cannot connect to {shown}: {e}"))),
        Err(_) => Err(PlatformError::Other(format!("{what}: connecting to {shown} timed out"))),
    }
}
