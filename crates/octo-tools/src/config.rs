//! Settings shared by the built-in tools.

use std::path::PathBuf;
use std::time::Duration;

/// Settings of the built-in tools. The defaults work without any configuration.
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// Where overwritten and edited files' previous contents go, so a change can be undone
    /// (octo uses `~/.octo/trash`). `None` keeps no copy.
    pub trash_dir: Option<PathBuf>,
    /// Where full command output is written when it is too long to return.
    pub spill_dir: PathBuf,
    /// Directories outside the workspace that file tools may write without asking.
    pub writable_roots: Vec<PathBuf>,
    /// Timeout of a `terminal` call when the model gives none.
    pub shell_timeout: Duration,
    /// The longest timeout a `terminal` call may ask for.
    pub shell_timeout_max: Duration,
    /// Bytes of command output returned before head and tail are kept and the rest spilled.
    pub shell_output_cap: usize,
    /// Lines `read_file` returns when the model gives no limit.
    pub read_default_lines: usize,
    /// Web tools' settings.
    pub web: WebConfig,
    /// Which environment variables commands see.
    pub shell_env: crate::shell::env::ShellEnv,
    /// The user's secret locations (commands touching them are asked about).
    pub secrets: crate::secrets::Secrets,
    /// The OS sandbox commands run in (`None`: none; see `octo_exec::sandbox`).
    pub sandbox: Option<std::sync::Arc<crate::shell::sandbox::Sandbox>>,
    /// An editor's open buffers: read before the disk by `read_file` and the editing tools
    /// (unsaved changes included), and where the editing tools write when the editor takes it.
    pub buffers: Option<std::sync::Arc<dyn Buffers>>,
}

/// Where a file's text may come from before the disk, and go to instead of it: the buffers of
/// an editor that hosts octo (its unsaved changes included, its undo for octo's edits).
#[octo_agent::async_trait]
pub trait Buffers: Send + Sync + std::fmt::Debug {
    /// The text of `path` as the editor holds it; `None` sends the read to the disk.
    async fn text(&self, path: &std::path::Path) -> Option<String>;

    /// Puts `text` as the whole content of the existing file `path` through the editor; `false`
    /// (the default: the editor takes no writes) sends the write to the disk.
    async fn write(&self, _path: &std::path::Path, _text: &str) -> bool {
        false
    }
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            trash_dir: None,
            spill_dir: std::env::temp_dir().join("octo-output"),
            writable_roots: Vec::new(),
            shell_timeout: Duration::from_secs(120),
            shell_timeout_max: Duration::from_secs(600),
            shell_output_cap: 30_000,
            read_default_lines: 2_000,
            web: WebConfig::default(),
            shell_env: crate::shell::env::ShellEnv::default(),
            secrets: crate::secrets::Secrets::from_env(),
            sandbox: None,
            buffers: None,
        }
    }
}

/// Settings of `web_fetch` and `web_search`.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// Brave Search API key (`BRAVE_API_KEY`).
    pub brave_api_key: Option<String>,
    /// Tavily API key (`TAVILY_API_KEY`).
    pub tavily_api_key: Option<String>,
    /// Serper API key (`SERPER_API_KEY`).
    pub serper_api_key: Option<String>,
    /// Base URLs of the search backends (overridable for tests and mirrors).
    pub endpoints: SearchEndpoints,
    /// Most bytes `web_fetch` downloads.
    pub fetch_max_bytes: usize,
    /// Most characters `web_fetch` returns.
    pub fetch_max_chars: usize,
    /// Timeout of one web request.
    pub timeout: Duration,
    /// Redirects followed before giving up.
    pub max_redirects: usize,
    /// Hosts (globs such as `*.corp.example`) the user trusts to resolve to a private address:
    /// `web_fetch` does not ask about them (octo passes the hosts of `web_fetch` allow rules).
    pub trusted_hosts: Vec<String>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            brave_api_key: None,
            tavily_api_key: None,
            serper_api_key: None,
            endpoints: SearchEndpoints::default(),
            fetch_max_bytes: 5 * 1024 * 1024,
            fetch_max_chars: 100_000,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
            trusted_hosts: Vec::new(),
        }
    }
}

impl WebConfig {
    /// The defaults, with API keys read from `BRAVE_API_KEY`, `TAVILY_API_KEY` and
    /// `SERPER_API_KEY`.
    pub fn from_env() -> Self {
        let key = |name: &str| std::env::var(name).ok().filter(|k| !k.trim().is_empty());
        Self {
            brave_api_key: key("BRAVE_API_KEY"),
            tavily_api_key: key("TAVILY_API_KEY"),
            serper_api_key: key("SERPER_API_KEY"),
            ..Self::default()
        }
    }
}

/// Where each search backend lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchEndpoints {
    /// DuckDuckGo's HTML results page.
    pub duckduckgo: String,
    /// Bing's results page.
    pub bing: String,
    /// Brave Search API.
    pub brave: String,
    /// Tavily API.
    pub tavily: String,
    /// Serper API.
    pub serper: String,
}

impl Default for SearchEndpoints {
    fn default() -> Self {
        Self {
            duckduckgo: "https://html.duckduckgo.com/html/".into(),
            bing: "https://www.bing.com/search".into(),
            brave: "https://api.search.brave.com/res/v1/web/search".into(),
            tavily: "https://api.tavily.com/search".into(),
            serper: "https://google.serper.dev/search".into(),
        }
    }
}
