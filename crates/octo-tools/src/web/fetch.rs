//! `web_fetch`: a URL's content as readable text.

use super::html::to_markdown;
use crate::config::WebConfig;
use crate::error::ToolError;
use crate::fs::sniff::human_size;
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
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .timeout(cfg.timeout)
        .connect_timeout(cfg.timeout.min(std::time::Duration::from_secs(10)))
        .redirect(reqwest::redirect::Policy::limited(cfg.max_redirects))
        .build()
        .map_err(|e| ToolError::Network(format!("could not build the HTTP client: {e}")))
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
                "Fetch a URL (http or https) and return its content as text: HTML pages are converted to \
                 Markdown (scripts, styles and markup removed), JSON and plain text come back as they are, other \
                 types (images, PDFs, archives) are described, not dumped. Redirects are followed (up to {}); \
                 downloads stop at {}, and at most {} characters are returned. Use `web_search` first when you do \
                 not know the URL.",
                self.cfg.max_redirects,
                human_size(self.cfg.fetch_max_bytes as u64),
                self.cfg.fetch_max_chars
            ),
            json!({
                "type": "object",
                "properties": {"url": {"type": "string", "description": "Absolute http(s) URL."}},
                "required": ["url"],
                "additionalProperties": false
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().subject(Subject::url("url"))
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("web_fetch", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        tokio::select! {
            out = fetch(&self.cfg, &input.url) => out.unwrap_or_else(ToolError::into_output),
            () = ctx.cancel().cancelled() => ToolOutput::error("cancelled by the user"),
        }
    }
}

async fn fetch(cfg: &WebConfig, raw_url: &str) -> Result<ToolOutput, ToolError> {
    let url = reqwest::Url::parse(raw_url.trim()).map_err(|e| {
        ToolError::Invalid(format!("`{raw_url}` is not a valid URL ({e}); give an absolute http(s) URL"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::Invalid(format!(
            "only http and https URLs can be fetched, not `{}`",
            url.scheme()
        )));
    }
    let client = client(cfg)?;
    let mut resp = client.get(url.clone()).send().await.map_err(|e| describe_error(&e, &url))?;
    let status = resp.status();
    let final_url = resp.url().clone();
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = resp.chunk().await.map_err(|e| describe_error(&e, &url))? {
        let room = cfg.fetch_max_bytes.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() > room {
            truncated = true;
            break;
        }
    }
    let mut header = format!(
        "{final_url} ({}, {}",
        status.as_u16(),
        if content_type.is_empty() { "no content type" } else { &content_type }
    );
    header.push_str(&format!(
        ", {}{})\n",
        human_size(body.len() as u64),
        if truncated { ", download cut at the size limit" } else { "" }
    ));
    let is_html = content_type.contains("html") || (content_type.is_empty() && looks_like_html(&body));
    let is_text = content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("javascript")
        || content_type.contains("yaml")
        || (content_type.is_empty() && std::str::from_utf8(&body).is_ok());
    let text = if is_html {
        let (title, md) = to_markdown(&String::from_utf8_lossy(&body), Some(&final_url));
        match title {
            Some(t) => format!("# {t}\n\n{md}"),
            None => md,
        }
    } else if is_text {
        String::from_utf8_lossy(&body).into_owned()
    } else {
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
