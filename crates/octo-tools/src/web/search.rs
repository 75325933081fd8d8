//! `web_search`: works with no configuration by reading DuckDuckGo's (then Bing's) HTML results;
//! uses Brave, Tavily or Serper when their API key is set.

use super::fetch::client;
use super::html::{attr, has_class, text_of};
use crate::config::WebConfig;
use crate::error::ToolError;
use octo_agent::{async_trait, parse_input, ToolContext, ToolDefinition, ToolExecutor, ToolMeta, ToolOutput};
use serde::Deserialize;
use serde_json::{json, Value};
use tl::Node;

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// Page title.
    pub title: String,
    /// Page URL.
    pub url: String,
    /// Snippet.
    pub snippet: String,
}

/// Searches the web.
#[derive(Debug, Clone)]
pub struct WebSearch {
    cfg: WebConfig,
}

impl WebSearch {
    /// A searcher using the keys and endpoints in `cfg`.
    pub fn new(cfg: WebConfig) -> Self {
        Self { cfg }
    }
}

#[derive(Deserialize)]
struct Input {
    query: String,
    #[serde(default)]
    max_results: Option<usize>,
}

#[async_trait]
impl ToolExecutor for WebSearch {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            "web_search",
            "Search the web: titles, URLs, snippets. For current facts, docs, error messages; read pages with \
             web_fetch.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Default 8."}
                },
                "required": ["query"]
            }),
        )
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::reads().aliases(&["WebSearch"])
    }

    async fn execute(&self, input: Value, ctx: &ToolContext) -> ToolOutput {
        let input: Input = match parse_input("web_search", input) {
            Ok(i) => i,
            Err(e) => return e,
        };
        if input.query.trim().is_empty() {
            return ToolOutput::error("`query` is empty");
        }
        let n = input.max_results.unwrap_or(8).clamp(1, 20);
        tokio::select! {
            r = search(&self.cfg, input.query.trim(), n) => match r {
                Ok((backend, results)) => ToolOutput::text(render(&backend, &input.query, &results)),
                Err(e) => e.into_output(),
            },
            () = ctx.cancel().cancelled() => ToolOutput::error("cancelled by the user"),
        }
    }
}

fn render(backend: &str, query: &str, results: &[SearchResult]) -> String {
    if results.is_empty() {
        return format!("{backend} found nothing for `{query}`. Try other words.");
    }
    let mut out = format!("Results from {backend} for `{query}`:\n");
    for (i, r) in results.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, r.title, r.url));
        if !r.snippet.is_empty() {
            out.push_str(&format!("   {}\n", r.snippet));
        }
    }
    out
}

/// Runs the search with the first configured API, else the HTML engines. Returns the backend's
/// name and the results.
pub async fn search(
    cfg: &WebConfig,
    query: &str,
    n: usize,
) -> Result<(String, Vec<SearchResult>), ToolError> {
    let http = client(cfg)?;
    let e = &cfg.endpoints;
    if let Some(key) = &cfg.brave_api_key {
        return brave(&http, &e.brave, key, query, n).await.map(|r| ("Brave Search".into(), r));
    }
    if let Some(key) = &cfg.tavily_api_key {
        return tavily(&http, &e.tavily, key, query, n).await.map(|r| ("Tavily".into(), r));
    }
    if let Some(key) = &cfg.serper_api_key {
        return serper(&http, &e.serper, key, query, n).await.map(|r| ("Serper (Google)".into(), r));
    }
    let ddg = duckduckgo(&http, &e.duckduckgo, query, n).await;
    match ddg {
        Ok(r) if !r.is_empty() => Ok(("DuckDuckGo".into(), r)),
        first => match bing(&http, &e.bing, query, n).await {
            Ok(r) => Ok(("Bing".into(), r)),
            Err(bing_err) => Err(ToolError::Network(format!(
                "web search failed: DuckDuckGo: {}; Bing: {bing_err}. Set BRAVE_API_KEY, TAVILY_API_KEY or \
                 SERPER_API_KEY for a search API.",
                first.err().map_or_else(|| "no results".to_owned(), |e| e.to_string())
            ))),
        },
    }
}

async fn get_text(req: reqwest::RequestBuilder, what: &str) -> Result<String, ToolError> {
    let resp =
        req.send().await.map_err(|e| ToolError::Network(format!("{what} could not be reached: {e}")))?;
    let status = resp.status();
    let body =
        resp.text().await.map_err(|e| ToolError::Network(format!("{what} answer could not be read: {e}")))?;
    if !status.is_success() {
        let short: String = body.chars().take(200).collect();
        return Err(ToolError::Network(format!("{what} answered HTTP {}: {short}", status.as_u16())));
    }
    Ok(body)
}

async fn get_json(req: reqwest::RequestBuilder, what: &str) -> Result<Value, ToolError> {
    let body = get_text(req, what).await?;
    serde_json::from_str(&body)
        .map_err(|e| ToolError::Network(format!("{what} sent an unreadable answer: {e}")))
}

fn results_from(
    items: Option<&Vec<Value>>,
    title: &str,
    url: &str,
    snippet: &str,
    n: usize,
) -> Vec<SearchResult> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    items
        .map(|a| {
            a.iter()
                .take(n)
                .map(|v| SearchResult { title: s(v, title), url: s(v, url), snippet: s(v, snippet) })
                .filter(|r| !r.url.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

async fn brave(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    q: &str,
    n: usize,
) -> Result<Vec<SearchResult>, ToolError> {
    let req = http
        .get(base)
        .query(&[("q", q), ("count", &n.to_string())])
        .header("X-Subscription-Token", key)
        .header("Accept", "application/json");
    let v = get_json(req, "Brave Search").await?;
    Ok(results_from(v["web"]["results"].as_array(), "title", "url", "description", n))
}

async fn tavily(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    q: &str,
    n: usize,
) -> Result<Vec<SearchResult>, ToolError> {
    let body = json!({"query": q, "max_results": n}).to_string();
    let req = http.post(base).bearer_auth(key).header("Content-Type", "application/json").body(body);
    let v = get_json(req, "Tavily").await?;
    Ok(results_from(v["results"].as_array(), "title", "url", "content", n))
}

async fn serper(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    q: &str,
    n: usize,
) -> Result<Vec<SearchResult>, ToolError> {
    let body = json!({"q": q, "num": n}).to_string();
    let req = http.post(base).header("X-API-KEY", key).header("Content-Type", "application/json").body(body);
    let v = get_json(req, "Serper").await?;
    Ok(results_from(v["organic"].as_array(), "title", "link", "snippet", n))
}

async fn duckduckgo(
    http: &reqwest::Client,
    base: &str,
    q: &str,
    n: usize,
) -> Result<Vec<SearchResult>, ToolError> {
    let html = get_text(http.get(base).query(&[("q", q)]), "DuckDuckGo").await?;
    Ok(parse_duckduckgo(&html, n))
}

async fn bing(http: &reqwest::Client, base: &str, q: &str, n: usize) -> Result<Vec<SearchResult>, ToolError> {
    // reqwest is built without compression, so no Accept-Encoding is sent: with gzip, Bing's HTML
    // endpoint answers with a script-only page.
    let html = get_text(http.get(base).query(&[("q", q)]).header("Accept", "text/html"), "Bing").await?;
    Ok(parse_bing(&html, n))
}

/// DuckDuckGo's result links point through a redirect whose `uddg` parameter is the target.
fn ddg_target(href: &str) -> String {
    let absolute = if href.starts_with("//") { format!("https:{href}") } else { href.to_owned() };
    reqwest::Url::parse(&absolute)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "uddg").map(|(_, v)| v.into_owned()))
        .unwrap_or(absolute)
}

/// Results from DuckDuckGo's HTML page (`a.result__a` titles, `.result__snippet` snippets).
pub fn parse_duckduckgo(html: &str, n: usize) -> Vec<SearchResult> {
    let Ok(dom) = tl::parse(html, tl::ParserOptions::default()) else { return Vec::new() };
    let parser = dom.parser();
    let mut out: Vec<SearchResult> = Vec::new();
    for node in dom.nodes() {
        let Node::Tag(tag) = node else { continue };
        if has_class(tag, "result__a") {
            if out.len() >= n {
                break;
            }
            let url = attr(tag, "href").map(|h| ddg_target(&h)).unwrap_or_default();
            out.push(SearchResult { title: text_of(node, parser), url, snippet: String::new() });
        } else if has_class(tag, "result__snippet") {
            if let Some(last) = out.last_mut().filter(|r| r.snippet.is_empty()) {
                last.snippet = text_of(node, parser);
            }
        }
    }
    out.retain(|r| !r.url.is_empty() && !r.url.contains("duckduckgo.com/y.js"));
    out
}

/// Results from Bing's page (`li.b_algo` with an `h2 > a` and a caption paragraph).
pub fn parse_bing(html: &str, n: usize) -> Vec<SearchResult> {
    let Ok(dom) = tl::parse(html, tl::ParserOptions::default()) else { return Vec::new() };
    let parser = dom.parser();
    let mut out: Vec<SearchResult> = Vec::new();
    let mut in_heading = false;
    for node in dom.nodes() {
        let Node::Tag(tag) = node else { continue };
        let name = tag.name().as_utf8_str().to_ascii_lowercase();
        if name == "li" && has_class(tag, "b_algo") {
            if out.len() >= n {
                break;
            }
            out.push(SearchResult { title: String::new(), url: String::new(), snippet: String::new() });
            in_heading = false;
        } else if name == "h2" {
            in_heading = true;
        } else if let Some(last) = out.last_mut() {
            if name == "a" && in_heading && last.url.is_empty() {
                last.url = attr(tag, "href").unwrap_or_default();
                last.title = text_of(node, parser);
                in_heading = false;
            } else if name == "p" && last.snippet.is_empty() && !last.url.is_empty() {
                last.snippet = text_of(node, parser);
            }
        }
    }
    out.retain(|r| r.url.starts_with("http"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duckduckgo_results_are_read_and_unwrapped() {
        let html = r#"<div class="result results_links"><h2 class="result__title">
            <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.rs%2Ftokio&amp;rut=abc">Tokio &amp; async</a></h2>
            <a class="result__snippet" href="x">A runtime for <b>writing</b> reliable apps.</a></div>
            <div class="result"><a class="result__a" href="https://example.org/direct">Direct</a></div>"#;
        let r = parse_duckduckgo(html, 10);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].url, "https://docs.rs/tokio");
        assert_eq!(r[0].title, "Tokio & async");
        assert_eq!(r[0].snippet, "A runtime for writing reliable apps.");
        assert_eq!(r[1].url, "https://example.org/direct");
        assert_eq!(parse_duckduckgo(html, 1).len(), 1);
    }

    #[test]
    fn bing_results_are_read() {
        let html = r#"<ol id="b_results"><li class="b_algo"><h2><a href="https://www.rust-lang.org/">Rust Programming Language</a></h2>
            <div class="b_caption"><p>A language empowering everyone.</p></div></li>
            <li class="b_algo"><h2><a href="https://doc.rust-lang.org/book/">The Book</a></h2><p>Learn Rust.</p></li></ol>"#;
        let r = parse_bing(html, 10);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            SearchResult {
                title: "Rust Programming Language".into(),
                url: "https://www.rust-lang.org/".into(),
                snippet: "A language empowering everyone.".into()
            }
        );
        assert_eq!(r[1].snippet, "Learn Rust.");
    }
}
