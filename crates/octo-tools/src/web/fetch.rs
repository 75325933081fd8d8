//! `web_fetch`: a URL's content as readable text.

use super::host;
use super::html::to_markdown;
use crate::config::WebConfig;
use crate::error::ToolError;
use crate::sniff::human_size;
use octo_agent::{
    async_trait, parse_input, Subject, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};

/// The user agent the web tools send.
pub const USER_AGENT: &str =
    concat!("Mozilla/5.0 (compatible; octo/", env!("CARGO_PKG_VERSION"), "; +coding agent)");

/// Builds the web tools' HTTP client.
pub fn client(cfg: &WebConfig) -> Result<reqwest::Client, ToolError> {
    builder(cfg)?
        .redirect(reqwest::redirect::Policy::limited(cfg.max_redirects))
        .build()
        .map_err(|e| ToolError::Network(format!("could not build the HTTP client: {e}")))
}

/// Every octo client's TLS (the trusted roots read once per process, at the first handshake:
/// not again for each fetch), the web tools' user agent and timeouts.
fn builder(cfg: &WebConfig) -> Result<reqwest::ClientBuilder, ToolError> {
    let b = octo_provider::http::builder()
        .map_err(|e| ToolError::Network(format!("could not build the HTTP client: {e}")))?;
    Ok(b.user_agent(USER_AGENT)
        .timeout(cfg.timeout)
        .connect_timeout(cfg.timeout.min(std::time::Duration::from_secs(10))))
}

/// A client that follows no redirect and connects `host` only to `addrs` (the addresses that
/// were checked, so a second lookup cannot answer differently).
fn pinned_client(
    cfg: &WebConfig,
    host: Option<(&str, &[std::net::SocketAddr])>,
) -> Result<reqwest::Client, ToolError> {
    let mut b = builder(cfg)?.redirect(reqwest::redirect::Policy::none());
    if let Some((name, addrs)) = host {
        b = b.resolve_to_addrs(name, addrs);
    }
    b.build().map_err(|e| ToolError::Network(format!("could not build the HTTP client: {e}")))
}

/// Fetches web pages.
#[derive(Debug, Clone)]
pub struct WebFetch {
    cfg: WebConfig,
}

impl WebFetch {
    /// A fetcher with these limits.
    pub fn new(cfg: WebConfig) -> Self {
        Self { cfg }
    }
}

#[derive(Deserialize)]
struct Input {
    url: String,
}

#[async_trait]
impl ToolExecutor for WebFetch {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "web_fetch",
            format!(
                "Fetch an http(s) URL as text (HTML as Markdown; other types described). Follows {} redirects on \
                 the same host; another host is reported. At most {}, {} characters.",
                self.cfg.max_redirects,
                human_size(self.cfg.fetch_max_bytes as u64),
                self.cfg.fetch_max_chars
            ),
            json!({
                "type": "object",
                "properties": {"url": {"type": "string"}},
                "required": ["url"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().subject(Subject::url("url")).aliases(&["WebFetch"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("web_fetch", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        tokio::select! {
            out = fetch(&self.cfg, &input.url, ctx) => out.unwrap_or_else(ToolError::into_output),
            () = ctx.cancel().cancelled() => ToolOutput::error("cancelled by the user"),
        }
    }
}

async fn fetch(cfg: &WebConfig, raw_url: &str, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let url = parse_url(raw_url)?;
    let (url, mut resp) = match follow(cfg, url, raw_url, ctx).await? {
        Reached::Page(url, resp) => (url, resp),
        Reached::Elsewhere(out) => return Ok(out),
    };
    let status = resp.status();
    let final_url = resp.url().clone();
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (body, truncated) = read_body(&mut resp, cfg, &url).await?;
    let header = header(&final_url, status, &content_type, body.len(), truncated);
    let Some(text) = as_text(&body, &content_type, &final_url) else {
        return Ok(ToolOutput::text(format!(
            "{header}This is {} content, which cannot be shown as text. Download it with a command (curl -o) if \
             you need to process it.",
            if content_type.is_empty() { "binary" } else { &content_type }
        )));
    };
    let mut out = header;
    let total_chars = text.chars().count();
    if total_chars > cfg.fetch_max_chars {
        out.extend(text.chars().take(cfg.fetch_max_chars));
        out.push_str(&format!("\n[... {} more characters not shown]", total_chars - cfg.fetch_max_chars));
    } else {
        out.push_str(&text);
    }
    if status.is_client_error() || status.is_server_error() {
        return Ok(ToolOutput::error(out));
    }
    Ok(ToolOutput::text(out))
}

/// `raw_url` as an absolute http(s) URL.
fn parse_url(raw_url: &str) -> Result<reqwest::Url, ToolError> {
    let url = reqwest::Url::parse(raw_url.trim()).map_err(|e| {
        ToolError::Invalid(format!("`{raw_url}` is not a valid URL ({e}); give an absolute http(s) URL"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::Invalid(format!(
            "only http and https URLs can be fetched, not `{}`",
            url.scheme()
        )));
    }
    Ok(url)
}

/// Where following a URL's redirects ends.
enum Reached {
    /// A response that is not a redirect (or one without a usable target), and the URL asked.
    Page(reqwest::Url, reqwest::Response),
    /// A redirect to another host, told back instead of followed.
    Elsewhere(ToolOutput),
}

/// Requests `url`, following redirects on the same host.
async fn follow(
    cfg: &WebConfig,
    mut url: reqwest::Url,
    raw_url: &str,
    ctx: &ToolContext,
) -> Result<Reached, ToolError> {
    let mut hops = 0;
    // Redirects are followed one by one: each hop's address is checked, and a hop to another
    // host is handed back to the model, whose next fetch goes through the permission gate.
    loop {
        let addrs = vet_addresses(cfg, &url, ctx).await?;
        let name = url.host_str().map(str::to_owned);
        let pin = name.as_deref().zip(addrs.as_deref());
        let client = pinned_client(cfg, pin)?;
        let resp = client.get(url.clone()).send().await.map_err(|e| describe_error(&e, &url))?;
        if !resp.status().is_redirection() {
            return Ok(Reached::Page(url, resp));
        }
        let Some(next) = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|l| url.join(l).ok())
        else {
            return Ok(Reached::Page(url, resp));
        };
        if !matches!(next.scheme(), "http" | "https") {
            return Err(ToolError::Invalid(format!("{url} redirects to `{next}`, which is not http(s)")));
        }
        if !same_site(&url, &next) {
            return Ok(Reached::Elsewhere(ToolOutput::text(format!(
                "{url} ({}) redirects to {next}, on another host. It was not followed: to read it, call web_fetch \
                 with that URL.",
                resp.status().as_u16()
            ))));
        }
        hops += 1;
        if hops > cfg.max_redirects {
            return Err(ToolError::Network(format!(
                "fetching {raw_url} failed: more than {} redirects",
                cfg.max_redirects
            )));
        }
        url = next;
    }
}

/// The response's body, up to the size limit, and whether it was cut there.
async fn read_body(
    resp: &mut reqwest::Response,
    cfg: &WebConfig,
    url: &reqwest::Url,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| describe_error(&e, url))? {
        let room = cfg.fetch_max_bytes.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() > room {
            return Ok((body, true));
        }
    }
    Ok((body, false))
}

/// The first line of the answer: the URL, status, content type and size.
fn header(
    final_url: &reqwest::Url,
    status: reqwest::StatusCode,
    content_type: &str,
    len: usize,
    truncated: bool,
) -> String {
    let mut header = format!(
        "{final_url} ({}, {}",
        status.as_u16(),
        if content_type.is_empty() { "no content type" } else { content_type }
    );
    header.push_str(&format!(
        ", {}{})\n",
        human_size(len as u64),
        if truncated { ", download cut at the size limit" } else { "" }
    ));
    header
}

/// The body as text: HTML as Markdown (under its title), text types as they are; `None` for
/// content that is not text.
fn as_text(body: &[u8], content_type: &str, final_url: &reqwest::Url) -> Option<String> {
    let is_html = content_type.contains("html") || (content_type.is_empty() && looks_like_html(body));
    let is_text = content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("javascript")
        || content_type.contains("yaml")
        || (content_type.is_empty() && std::str::from_utf8(body).is_ok());
    if is_html {
        let (title, md) = to_markdown(&String::from_utf8_lossy(body), Some(final_url));
        Some(match title {
            Some(t) => format!("# {t}\n\n{md}"),
            None => md,
        })
    } else if is_text {
        Some(String::from_utf8_lossy(body).into_owned())
    } else {
        None
    }
}

/// Resolves the host of a public-looking URL and checks every address: a name that points at
/// the user's own machine or network is asked about (unless the user trusts that host). Returns
/// the checked addresses to connect to; `None` for an address given literally or a name the
/// permission gate already judged private.
async fn vet_addresses(
    cfg: &WebConfig,
    url: &reqwest::Url,
    ctx: &ToolContext,
) -> Result<Option<Vec<std::net::SocketAddr>>, ToolError> {
    let Some(url::Host::Domain(name)) = url.host() else { return Ok(None) };
    if matches!(host::classify(url), host::HostKind::Private(_)) {
        return Ok(None);
    }
    let port = url.port_or_known_default().unwrap_or(80);
    // A proxy resolves names itself; the lookup here would check the wrong thing.
    if proxied(url) {
        return Ok(None);
    }
    let Ok(found) = tokio::net::lookup_host((name, port)).await else {
        return Err(ToolError::Network(format!("could not resolve {name}")));
    };
    let addrs: Vec<std::net::SocketAddr> = found.collect();
    let private = addrs.iter().find_map(|a| host::private_ip(a.ip()).map(|what| (a.ip(), what)));
    if let Some((ip, what)) = private {
        let lower = name.trim_end_matches('.').to_ascii_lowercase();
        if !cfg.trusted_hosts.iter().any(|t| host_matches(t, &lower)) {
            let mut req = octo_agent::ApprovalRequest::new(
                ctx.tool_use_id(),
                "web_fetch",
                json!({ "url": url.as_str() }),
                format!("web_fetch {url}"),
            );
            req.reason = Some(format!(
                "{name} resolves to {ip}, {what}: the request would reach your own machine or network"
            ));
            let (decision, by) = ctx.ask_approval(req).await;
            if !decision.is_allowed() {
                let text = format!(
                    "refused to fetch {url}: {name} resolves to {ip}, {what}, and the user did not agree to reach it"
                );
                return Err(match by {
                    octo_agent::AnsweredBy::User => ToolError::NotApproved(text),
                    octo_agent::AnsweredBy::Nobody => ToolError::Unattended(text),
                    _ => ToolError::Interrupted(text),
                });
            }
        }
    }
    Ok(Some(addrs))
}

/// Whether a redirect stays on the same host and port (an upgrade from http to https on the
/// default ports counts as the same).
fn same_site(from: &reqwest::Url, to: &reqwest::Url) -> bool {
    host::host_of(from) == host::host_of(to)
        && (from.port_or_known_default() == to.port_or_known_default()
            || (from.port().is_none() && to.port().is_none()))
}

/// Whether a proxy from the environment would carry the request.
fn proxied(url: &reqwest::Url) -> bool {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let proxy = if url.scheme() == "https" {
        var("HTTPS_PROXY").or_else(|| var("https_proxy"))
    } else {
        var("HTTP_PROXY").or_else(|| var("http_proxy"))
    };
    proxy.or_else(|| var("ALL_PROXY").or_else(|| var("all_proxy"))).is_some()
}

/// Whether `host` matches the host glob `pattern` (`*.example.com`, exact otherwise).
fn host_matches(pattern: &str, host: &str) -> bool {
    let p = pattern.to_ascii_lowercase();
    match p.strip_prefix("*.") {
        Some(suffix) => host.ends_with(&format!(".{suffix}")),
        None => p == host || p == "*",
    }
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    head.contains("<html") || head.contains("<!doctype html")
}

fn describe_error(e: &reqwest::Error, url: &reqwest::Url) -> ToolError {
    ToolError::Network(describe(e, url))
}

fn describe(e: &reqwest::Error, url: &reqwest::Url) -> String {
    if e.is_timeout() {
        format!("fetching {url} timed out")
    } else if e.is_redirect() {
        format!("fetching {url} failed: too many redirects")
    } else if e.is_connect() {
        format!("could not connect to {}", url.host_str().unwrap_or("the host"))
    } else {
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            msg = s.to_string();
            src = s.source();
        }
        format!("fetching {url} failed: {msg}")
    }
}
