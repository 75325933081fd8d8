//! OAuth 2.1 for HTTP servers, as the MCP authorization specification describes, on `rmcp`'s
//! auth support: discovery (the `WWW-Authenticate` challenge, protected-resource and
//! authorization-server metadata, the older fallbacks), dynamic or pre-registered clients,
//! PKCE, refresh. What is octo's here: where tokens live (the key store, through
//! [`SecretStore`] — never a config file or a log), the HTTP client the OAuth requests go
//! through (octo's TLS, no redirects where the SDK asks for none, no link-local or cloud
//! metadata addresses, loopback only for a loopback server), and the settings as Claude Code
//! users write them (`oauth` in `.mcp.json`). The login itself is in [`mod@crate::login`].

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest, StoredCredentials,
};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// Where secrets are kept: octo's key store (the OS keyring, or the key file). The front end
/// supplies it; `octo-mcp` only reads and writes entries named by [`oauth_entry`] and
/// [`token_entry`].
pub trait SecretStore: Send + Sync {
    /// The entry's value, when there is one.
    fn get(&self, entry: &str) -> std::io::Result<Option<String>>;
    /// Sets the entry.
    fn set(&self, entry: &str, value: &str) -> std::io::Result<()>;
    /// Removes the entry; whether it was there.
    fn remove(&self, entry: &str) -> std::io::Result<bool>;
}

/// The key-store entry holding a server's OAuth client and tokens (by name and URL: the same
/// name pointed elsewhere does not reuse them).
pub fn oauth_entry(server: &str, url: &str) -> String {
    format!("mcp-oauth:{server}:{url}")
}

/// The key-store entry holding a bearer token the user gave for a server (`octo mcp login NAME
/// --token`), by name and URL: a project's server that takes the name of the user's, pointed
/// elsewhere, does not get its token.
pub fn token_entry(server: &str, url: &str) -> String {
    format!("mcp-token:{server}:{url}")
}

/// The key-store entry holding the challenge of a call refused for its token's scope (HTTP 403):
/// the next `octo mcp login NAME` asks for the scope it names.
pub fn challenge_entry(server: &str, url: &str) -> String {
    format!("mcp-scope-challenge:{server}:{url}")
}

/// `oauth` of a server entry, as Claude Code's `.mcp.json` has it (camelCase) or octo's TOML
/// (snake_case). Keys octo does not know are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct OAuthSpec {
    /// A client registered with the authorization server beforehand (no dynamic registration).
    #[serde(default, alias = "clientId")]
    pub client_id: Option<String>,
    /// The variable holding that client's secret (octo reads it; it is never written).
    #[serde(default, alias = "clientSecretEnv")]
    pub client_secret_env: Option<String>,
    /// A fixed port for the redirect `http://localhost:PORT/callback` (what a pre-registered
    /// client was registered with); default: any free port.
    #[serde(default, alias = "callbackPort")]
    pub callback_port: Option<u16>,
    /// Scopes to ask for, space-separated (default: from the challenge or the metadata).
    #[serde(default)]
    pub scopes: Option<Scopes>,
    /// The authorization server's metadata document, skipping discovery.
    #[serde(default, alias = "authServerMetadataUrl")]
    pub auth_server_metadata_url: Option<String>,
    /// `client_credentials`: octo gets its token itself with `client_id` and its secret
    /// (machine to machine, no browser); default: the user logs in (`octo mcp login`).
    #[serde(default)]
    pub grant: Option<String>,
}

/// Scopes as one space-separated string (Claude Code) or a list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Scopes {
    /// `"read write"`.
    Line(String),
    /// `["read", "write"]`.
    List(Vec<String>),
}

impl Scopes {
    /// One scope per item.
    pub fn items(&self) -> Vec<String> {
        match self {
            Self::Line(s) => s.split_whitespace().map(str::to_owned).collect(),
            Self::List(l) => l.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect(),
        }
    }
}

/// [`OAuthSpec`] with variables expanded: what a login and a connection use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A pre-registered client.
    pub client_id: Option<String>,
    /// Its secret (never printed).
    pub client_secret: Option<String>,
    /// The redirect's fixed port.
    pub callback_port: Option<u16>,
    /// Scopes to ask for.
    pub scopes: Vec<String>,
    /// Metadata document that skips discovery.
    pub metadata_url: Option<String>,
    /// The client-credentials grant: no user, no browser.
    pub client_credentials: bool,
}

/// A server's stored OAuth state in the key store, as `rmcp` reads and writes it.
struct KeyStoreCredentials {
    store: Arc<dyn SecretStore>,
    entry: String,
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("octo's key store: {e}"))
}

#[async_trait::async_trait]
impl rmcp::transport::auth::CredentialStore for KeyStoreCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match self.store.get(&self.entry).map_err(store_error)? {
            None => Ok(None),
            // Unreadable stored state (an older format, a hand edit) is as good as none.
            Some(text) => Ok(serde_json::from_str(&text).ok()),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_string(&credentials).map_err(store_error)?;
        self.store.set(&self.entry, &text).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.remove(&self.entry).map(|_| ()).map_err(store_error)
    }
}

/// The most an OAuth response body may hold.
const MAX_BODY: usize = 1024 * 1024;

/// The HTTP client of every OAuth request: octo's TLS, the SDK's redirect choice honoured,
/// addresses a metadata document must not send octo to refused.
struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    loopback_ok: bool,
}

#[derive(Debug, thiserror::Error)]
enum OAuthHttpError {
    #[error("octo does not send OAuth requests to {0} (a link-local, cloud-metadata or, for a remote server, loopback address)")]
    Refused(String),
    #[error("the OAuth response was over {MAX_BODY} bytes")]
    TooLarge,
}

impl OAuthHttp {
    fn new(server_url: &url::Url) -> Result<Self, AuthError> {
        let build = |redirect: reqwest::redirect::Policy| {
            octo_provider::http::builder()
                .map_err(|e| AuthError::InternalError(e.to_string()))?
                .user_agent(concat!("octo/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(30))
                .redirect(redirect)
                .build()
                .map_err(|e| AuthError::InternalError(e.to_string()))
        };
        Ok(Self {
            follow: build(reqwest::redirect::Policy::limited(5))?,
            stop: build(reqwest::redirect::Policy::none())?,
            loopback_ok: is_loopback(server_url),
        })
    }

    fn allowed(&self, url: &url::Url) -> bool {
        let Some(host) = url.host() else { return false };
        match host {
            url::Host::Domain(d) => {
                let d = d.to_ascii_lowercase();
                let metadata = ["metadata", "metadata.google.internal", "metadata.azure.internal"];
                !metadata.contains(&d.as_str()) && (self.loopback_ok || d != "localhost")
            }
            url::Host::Ipv4(ip) => {
                !(ip.is_link_local() || ip.is_unspecified() || ip.is_broadcast())
                    && (self.loopback_ok || !ip.is_loopback())
            }
            url::Host::Ipv6(ip) => {
                let link_local = (ip.segments()[0] & 0xffc0) == 0xfe80;
                !(link_local || ip.is_unspecified()) && (self.loopback_ok || !ip.is_loopback())
            }
        }
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let timeout = request.timeout;
            let mut req = reqwest::Request::try_from(request.request)?;
            if !self.allowed(req.url()) {
                return Err(Box::new(OAuthHttpError::Refused(req.url().to_string())) as _);
            }
            if let Some(t) = timeout {
                *req.timeout_mut() = Some(t);
            }
            let mut resp = client.execute(req).await?;
            let mut out = http::Response::builder().status(resp.status());
            for (k, v) in resp.headers() {
                out = out.header(k, v);
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(Box::new(OAuthHttpError::TooLarge) as _);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(out.body(body)?)
        })
    }
}

/// A manager for the server at `url`, its state kept in `store` under `entry`; the metadata
/// document of `settings` is read when one is named.
pub(crate) async fn manager(
    url: &str,
    settings: &OAuthSettings,
    store: Arc<dyn SecretStore>,
    entry: String,
) -> Result<AuthorizationManager, AuthError> {
    let parsed = url::Url::parse(url)?;
    let http = Arc::new(OAuthHttp::new(&parsed)?);
    let mut m = AuthorizationManager::new_with_oauth_http_client(url, Arc::clone(&http) as _).await?;
    m.set_credential_store(KeyStoreCredentials { store, entry });
    if let Some(meta) = &settings.metadata_url {
        m.set_metadata(metadata_document(&http, meta).await?);
    }
    Ok(m)
}

/// Reads the authorization server's metadata from the URL the user gave.
async fn metadata_document(
    http: &OAuthHttp,
    url: &str,
) -> Result<rmcp::transport::auth::AuthorizationMetadata, AuthError> {
    let resp = http.follow.get(url).send().await?;
    if !resp.status().is_success() {
        return Err(AuthError::MetadataError(format!("{url} answered HTTP {}", resp.status().as_u16())));
    }
    let text = resp.text().await?;
    serde_json::from_str(&text).map_err(|e| AuthError::MetadataError(format!("{url}: {e}")))
}

/// A manager holding a token got with the client-credentials grant (the client's id and secret,
/// no user); the token goes to `store` when there is one.
pub(crate) async fn client_credentials(
    url: &str,
    settings: &OAuthSettings,
    store: Option<&Arc<dyn SecretStore>>,
    server: &str,
) -> Result<AuthorizationManager, AuthError> {
    let (Some(client_id), Some(client_secret)) = (&settings.client_id, &settings.client_secret) else {
        return Err(AuthError::ClientCredentialsError(
            "`grant = \"client_credentials\"` needs `client_id` and `client_secret_env`".into(),
        ));
    };
    let mut m = match store {
        Some(s) => manager(url, settings, Arc::clone(s), oauth_entry(server, url)).await?,
        None => {
            let parsed = url::Url::parse(url)?;
            AuthorizationManager::new_with_oauth_http_client(url, Arc::new(OAuthHttp::new(&parsed)?)).await?
        }
    };
    if settings.metadata_url.is_none() {
        let found = m.resolve_metadata().await?;
        m.set_metadata(found.metadata);
    }
    let config = rmcp::transport::auth::ClientCredentialsConfig::ClientSecret {
        client_id: client_id.clone(),
        client_secret: client_secret.clone(),
        scopes: settings.scopes.clone(),
        resource: Some(url.to_owned()),
    };
    m.configure_client_credentials(&config)?;
    m.exchange_client_credentials(&config).await?;
    Ok(m)
}

/// The manager of a server the user logged in to, ready to add its token to requests (and
/// refresh it); `None` when nothing is stored for it.
pub(crate) async fn stored(
    url: &str,
    settings: &OAuthSettings,
    store: &Arc<dyn SecretStore>,
    server: &str,
) -> Result<Option<AuthorizationManager>, AuthError> {
    let entry = oauth_entry(server, url);
    if store.get(&entry).map_err(store_error)?.is_none() {
        return Ok(None);
    }
    let mut m = manager(url, settings, Arc::clone(store), entry).await?;
    if m.initialize_from_store().await? {
        Ok(Some(m))
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn oauth_settings_read_as_claude_code_writes_them() {
        let spec: OAuthSpec = serde_json::from_str(
            r#"{"clientId": "abc", "callbackPort": 8080, "scopes": "read write", "somethingNew": 1}"#,
        )
        .unwrap();
        assert_eq!(spec.client_id.as_deref(), Some("abc"));
        assert_eq!(spec.callback_port, Some(8080));
        assert_eq!(spec.scopes.unwrap().items(), ["read", "write"]);
    }

    #[test]
    fn metadata_may_not_send_octo_to_link_local_or_loopback_addresses() {
        let remote = OAuthHttp::new(&url::Url::parse("https://mcp.example.com/mcp").unwrap()).unwrap();
        let allowed = |u: &str| remote.allowed(&url::Url::parse(u).unwrap());
        assert!(allowed("https://auth.example.com/token"));
        assert!(!allowed("http://169.254.169.254/latest/meta-data"));
        assert!(!allowed("http://metadata.google.internal/"));
        assert!(
            !allowed("http://127.0.0.1:8080/token"),
            "a remote server's metadata may not point at this machine"
        );
        assert!(!allowed("http://[fe80::1]/"));
        let local = OAuthHttp::new(&url::Url::parse("http://127.0.0.1:3000/mcp").unwrap()).unwrap();
        assert!(local.allowed(&url::Url::parse("http://127.0.0.1:3001/token").unwrap()));
    }
}
