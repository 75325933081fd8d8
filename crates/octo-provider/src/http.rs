//! The HTTP client every provider shares: rustls, timeouts, proxies from the environment, custom
//! headers per endpoint.

use crate::retry::RetryPolicy;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::time::Duration;
use thiserror::Error;

/// A provider could not be set up from its configuration.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupError {
    /// A custom header has an invalid name or value.
    #[error("invalid header `{name}`: {reason}")]
    InvalidHeader {
        /// The header's name as configured.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The configured proxy is not a valid URL.
    #[error("invalid proxy `{0}`: use a URL such as http://proxy.local:3128")]
    InvalidProxy(String),
    /// The base URL is not an http(s) URL.
    #[error("invalid base URL `{0}`: use a URL such as https://api.example.com")]
    InvalidBaseUrl(String),
    /// The TLS or HTTP stack could not be initialised.
    #[error("could not build the HTTP client: {0}")]
    Client(String),
}

/// Settings of the shared HTTP client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Time allowed for a whole buffered (non-streaming) request.
    pub request_timeout: Duration,
    /// A stream that sends nothing (not even a keep-alive) for this long after its first byte
    /// fails as stalled.
    pub stall_timeout: Duration,
    /// How long a streamed request waits for the response and its first byte (a local server
    /// may read a long prompt first, sending nothing).
    pub first_byte_timeout: Duration,
    /// Extra headers sent with every request to this endpoint.
    pub headers: Vec<(String, String)>,
    /// An explicit proxy URL. Without one, `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`/`NO_PROXY` from
    /// the environment apply.
    pub proxy: Option<String>,
    /// Retry policy for failed requests.
    pub retry: RetryPolicy,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(15),
            request_timeout: Duration::from_secs(600),
            stall_timeout: Duration::from_secs(120),
            first_byte_timeout: Duration::from_secs(300),
            headers: Vec::new(),
            proxy: None,
            retry: RetryPolicy::default(),
        }
    }
}

/// The `user-agent` octo sends.
pub const USER_AGENT: &str = concat!("octo/", env!("CARGO_PKG_VERSION"));

/// Converts configured header pairs, naming the bad one on error.
pub fn header_map(pairs: &[(String, String)]) -> Result<HeaderMap, SetupError> {
    let mut map = HeaderMap::with_capacity(pairs.len());
    for (k, v) in pairs {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| SetupError::InvalidHeader { name: k.clone(), reason: e.to_string() })?;
        let value = HeaderValue::from_str(v)
            .map_err(|e| SetupError::InvalidHeader { name: k.clone(), reason: e.to_string() })?;
        map.append(name, value);
    }
    Ok(map)
}

/// Builds a client for one endpoint (its TLS from [`crate::tls`]: the trusted roots
/// are loaded at the first `https` handshake, not here).
pub fn build_client(config: &HttpConfig) -> Result<reqwest::Client, SetupError> {
    let mut builder = builder()?
        .user_agent(USER_AGENT)
        .connect_timeout(config.connect_timeout)
        .tcp_nodelay(true)
        .pool_idle_timeout(Duration::from_secs(90))
        .default_headers(header_map(&config.headers)?);
    if let Some(proxy) = &config.proxy {
        let p = reqwest::Proxy::all(proxy).map_err(|_| SetupError::InvalidProxy(proxy.clone()))?;
        builder = builder.proxy(p);
    }
    builder.build().map_err(|e| SetupError::Client(e.to_string()))
}

/// A client for downloads (`octo models pull`): it follows no redirect itself, so the caller can
/// read what each hop announces (a hub's file hash sits on its redirect, not on the storage
/// server's answer).
pub fn build_download_client() -> Result<reqwest::Client, SetupError> {
    builder()?
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| SetupError::Client(e.to_string()))
}

/// A client builder with octo's TLS, for clients with settings of their own (the web tools').
pub fn builder() -> Result<reqwest::ClientBuilder, SetupError> {
    let tls = crate::tls::client_config().map_err(SetupError::Client)?;
    Ok(reqwest::Client::builder().tls_backend_preconfigured(tls))
}

/// Checks that a base URL is http(s) and strips a trailing slash, so `{base}/v1/messages` joins
/// cleanly.
pub fn normalize_base_url(url: &str) -> Result<String, SetupError> {
    let u = url.trim();
    let parsed = reqwest::Url::parse(u).map_err(|_| SetupError::InvalidBaseUrl(url.to_owned()))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(SetupError::InvalidBaseUrl(url.to_owned()));
    }
    Ok(u.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_validated_by_name() {
        let ok = header_map(&[("x-team".into(), "core".into())]).unwrap();
        assert_eq!(ok["x-team"], "core");
        let bad = header_map(&[("bad header".into(), "x".into())]).unwrap_err();
        assert!(bad.to_string().contains("`bad header`"), "{bad}");
        let bad = header_map(&[("x-ok".into(), "line\nbreak".into())]).unwrap_err();
        assert!(matches!(bad, SetupError::InvalidHeader { .. }));
    }

    #[test]
    fn base_urls_are_checked() {
        assert_eq!(normalize_base_url("https://api.x.com/v1/").unwrap(), "https://api.x.com/v1");
        assert!(normalize_base_url("api.x.com").is_err());
        assert!(normalize_base_url("ftp://x.com").is_err());
    }

    #[test]
    fn client_builds_with_and_without_proxy() {
        assert!(build_client(&HttpConfig::default()).is_ok());
        let cfg = HttpConfig { proxy: Some("http://127.0.0.1:3128".into()), ..HttpConfig::default() };
        assert!(build_client(&cfg).is_ok());
        let cfg = HttpConfig { proxy: Some("::not a url::".into()), ..HttpConfig::default() };
        assert!(matches!(build_client(&cfg), Err(SetupError::InvalidProxy(_))));
    }
}
