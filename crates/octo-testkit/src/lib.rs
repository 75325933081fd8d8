//! # octo-testkit
//!
//! Test support for octo and for anyone building on its crates: a [`MockLlm`] server (wiremock)
//! that answers model requests with scripted replies, builders for the two wire protocols'
//! streaming bodies ([`anthropic::Reply`], [`openai::Reply`]), access to the requests the code
//! under test really sent, a scripted in-process sender ([`sender::ScriptedSender`]) for tests
//! without HTTP, and a [`TempHome`] for an isolated `OCTO_HOME` and workspace.
//!
//! **Layer:** test support, used only as a dev-dependency. It depends on `octo-agent` (the leaf)
//! and nothing else of octo, so every crate can use it (a dev-dependency may point back up).
//!
//! It deliberately does not talk to any real endpoint: everything is offline and on loopback.
//!
//! ```
//! use octo_testkit::{anthropic, MockLlm, Scripted};
//!
//! # fn main() -> Result<(), std::io::Error> {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let llm = MockLlm::start().await;
//! llm.script_anthropic([
//!     Scripted::sse(anthropic::Reply::new().tool_use("t1", "glob", serde_json::json!({"pattern": "*.rs"})).sse()),
//!     Scripted::sse(anthropic::Reply::new().text("Found 3 files.").sse()),
//! ])
//! .await;
//! // point the code under test at llm.uri(), run it, then:
//! assert!(llm.requests().await.is_empty());
//! # });
//! # Ok(())
//! # }
//! ```

pub mod alloc;
pub mod anthropic;
pub mod browser;
pub mod legacy_sse;
pub mod mcp;
pub mod oauth;
pub mod openai;
pub mod raw;
pub mod responses;
pub mod scenario;
pub mod sender;
pub mod sse;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

pub use wiremock;

/// One scripted HTTP reply.
#[derive(Debug, Clone)]
pub struct Scripted {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    content_type: String,
    delay: Option<Duration>,
}

impl Scripted {
    /// A 200 `text/event-stream` reply with this body.
    pub fn sse(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: body.into().into_bytes(),
            content_type: "text/event-stream".into(),
            delay: None,
        }
    }

    /// A JSON reply with this status.
    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.to_string().into_bytes(),
            content_type: "application/json".into(),
            delay: None,
        }
    }

    /// A reply with this status, a plain-text body and content type.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.into(),
            content_type: content_type.into(),
            delay: None,
        }
    }

    /// Adds a response header (`retry-after`, `x-request-id`...).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before answering (to test timeouts and cancellation).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    fn template(&self) -> ResponseTemplate {
        let mut t = ResponseTemplate::new(self.status).set_body_raw(self.body.clone(), &self.content_type);
        for (k, v) in &self.headers {
            t = t.insert_header(k.as_str(), v.as_str());
        }
        if let Some(d) = self.delay {
            t = t.set_delay(d);
        }
        t
    }
}

/// Replies in order, one per request; past the end, a 500 that says the test scripted too few.
struct Sequence {
    replies: Vec<Scripted>,
    next: AtomicUsize,
}

impl Respond for Sequence {
    fn respond(&self, _request: &wiremock::Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        match self.replies.get(i) {
            Some(r) => r.template(),
            None => ResponseTemplate::new(500).set_body_string(format!(
                "octo-testkit: request #{} was not scripted (the test scripted {} replies)",
                i + 1,
                self.replies.len()
            )),
        }
    }
}

/// A request the code under test sent.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// HTTP method.
    pub method: String,
    /// URL path.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Raw body.
    pub body: Vec<u8>,
}

impl Recorded {
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }
}

/// A local mock model server.
pub struct MockLlm {
    server: MockServer,
}

impl std::fmt::Debug for MockLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockLlm").field("uri", &self.server.uri()).finish()
    }
}

impl MockLlm {
    /// Starts a server on a free loopback port.
    pub async fn start() -> Self {
        Self { server: MockServer::start().await }
    }

    /// The base URL (`http://127.0.0.1:PORT`).
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// An octo config whose default model is this mock's `claude-sonnet-4-5` on the Anthropic
    /// protocol (endpoint `mock`, key in `MOCK_KEY`).
    pub fn config_toml(&self) -> String {
        format!(
            "default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n",
            self.uri()
        )
    }

    /// The underlying wiremock server, for custom mocks.
    pub fn server(&self) -> &MockServer {
        &self.server
    }

    /// Answers `POST /v1/messages` with `replies`, one per request, in order.
    pub async fn script_anthropic(&self, replies: impl IntoIterator<Item = Scripted>) {
        let seq = Sequence { replies: replies.into_iter().collect(), next: AtomicUsize::new(0) };
        Mock::given(method("POST")).and(path("/v1/messages")).respond_with(seq).mount(&self.server).await;
    }

    /// Answers `POST /v1/messages` requests whose body contains `needle` (a sub-agent's system
    /// prompt, say) with `replies`, in order, ahead of the other scripts; the rest go to those.
    pub async fn script_anthropic_matching(&self, needle: &str, replies: impl IntoIterator<Item = Scripted>) {
        let seq = Sequence { replies: replies.into_iter().collect(), next: AtomicUsize::new(0) };
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(wiremock::matchers::body_string_contains(needle))
            .respond_with(seq)
            .with_priority(1)
            .mount(&self.server)
            .await;
    }

    /// Answers `GET /v1/models` with `ids`, as a server that lists its models does.
    pub async fn list_models(&self, ids: &[&str]) {
        let data: Vec<serde_json::Value> = ids.iter().map(|id| serde_json::json!({ "id": id })).collect();
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({ "data": data })))
            .mount(&self.server)
            .await;
    }

    /// Answers `POST …/chat/completions` (any prefix, such as `/v1`) with `replies`, in order.
    pub async fn script_openai(&self, replies: impl IntoIterator<Item = Scripted>) {
        let seq = Sequence { replies: replies.into_iter().collect(), next: AtomicUsize::new(0) };
        Mock::given(method("POST"))
            .and(path_regex(r"/chat/completions$"))
            .respond_with(seq)
            .mount(&self.server)
            .await;
    }

    /// Answers `POST …/responses` (any prefix, such as `/v1`) with `replies`, in order.
    pub async fn script_responses(&self, replies: impl IntoIterator<Item = Scripted>) {
        let seq = Sequence { replies: replies.into_iter().collect(), next: AtomicUsize::new(0) };
        Mock::given(method("POST"))
            .and(path_regex(r"/responses$"))
            .respond_with(seq)
            .mount(&self.server)
            .await;
    }

    /// Every model request received so far (a POST to `…/messages` or `…/chat/completions`), in
    /// order.
    pub async fn requests(&self) -> Vec<Recorded> {
        let all = self.all_requests().await;
        all.into_iter().filter(|r| r.method == "POST" && is_model_path(&r.path)).collect()
    }

    /// Every request the server received, model requests or not (a local server's discovery
    /// requests, a probe), oldest first.
    pub async fn all_requests(&self) -> Vec<Recorded> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|r| Recorded {
                method: r.method.to_string(),
                path: r.url.path().to_owned(),
                headers: r
                    .headers
                    .iter()
                    .map(|(k, v)| {
                        (k.as_str().to_ascii_lowercase(), String::from_utf8_lossy(v.as_bytes()).into_owned())
                    })
                    .collect(),
                body: r.body,
            })
            .collect()
    }

    /// The JSON bodies of every request received so far.
    pub async fn request_bodies(&self) -> Vec<serde_json::Value> {
        self.requests().await.iter().map(Recorded::json).collect()
    }
}

/// Whether `path` is a model request of either protocol (`/v1/messages`, `/chat/completions`).
fn is_model_path(path: &str) -> bool {
    path.ends_with("/messages") || path.ends_with("/chat/completions") || path.ends_with("/responses")
}

/// A temporary `OCTO_HOME` and workspace, removed when dropped.
#[derive(Debug)]
pub struct TempHome {
    root: tempfile::TempDir,
}

impl TempHome {
    /// Creates `home/` and `workspace/` in a fresh temporary directory.
    pub fn new() -> std::io::Result<Self> {
        Self::made(tempfile::tempdir()?)
    }

    /// [`TempHome::new`], with the temporary directory made under `dir`.
    pub fn new_in(dir: impl AsRef<Path>) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir.as_ref())?;
        Self::made(tempfile::Builder::new().prefix("octo-test-").tempdir_in(dir)?)
    }

    fn made(root: tempfile::TempDir) -> std::io::Result<Self> {
        std::fs::create_dir_all(root.path().join("home"))?;
        std::fs::create_dir_all(root.path().join("workspace"))?;
        Ok(Self { root })
    }

    /// The temporary directory holding the home and the workspace.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The directory to use as `OCTO_HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The workspace directory.
    pub fn workspace(&self) -> PathBuf {
        self.root.path().join("workspace")
    }

    /// Sets `cmd` up as a fresh user of this home: a clean environment with only `PATH`, the
    /// home as `HOME` and `OCTO_HOME`, no keyring, one attempt per model request, the mock's key
    /// (`MOCK_KEY`) and no colour, started in the workspace.
    pub fn isolate(&self, cmd: &mut std::process::Command) {
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("OCTO_HOME", self.home())
            .env("OCTO_NO_KEYRING", "1")
            .env("OCTO_MAX_ATTEMPTS", "1")
            .env("MOCK_KEY", "sk-mock")
            .env("NO_COLOR", "1")
            .current_dir(self.workspace());
    }

    /// Writes a file relative to the workspace, creating parent directories.
    pub fn write(&self, relative: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> std::io::Result<PathBuf> {
        let p = self.workspace().join(relative);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&p, contents)?;
        Ok(p)
    }
}
