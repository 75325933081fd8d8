//! What the benchmarks share: a server on loopback against the mock model.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use octo_app::credentials::{KeyStore, MemoryStore};
use octo_app::{Home, Launcher};
use octo_server::{AppState, Hub};
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

pub fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

pub struct Bench {
    _tmp: tempfile::TempDir,
    pub base: String,
    pub token: String,
    pub state: Arc<AppState>,
    pub client: reqwest::Client,
    pub llm: Option<MockLlm>,
    pub home: std::path::PathBuf,
    pub ws: std::path::PathBuf,
}

pub async fn start(replies: Vec<Scripted>) -> Bench {
    let llm = MockLlm::start().await;
    llm.script_anthropic(replies).await;
    let base = llm.uri();
    start_with(Some(llm), &base, "", "").await
}

/// A server against the model at `base` (`llm` kept alive when it is the mock), with `top` added
/// to the config's top level and `endpoint` to the mock endpoint's table.
pub async fn start_with(llm: Option<MockLlm>, base: &str, top: &str, endpoint: &str) -> Bench {
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!("default = \"mock:claude-sonnet-4-5\"\n{top}\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{base}\"\napi_key_env = \"MOCK_KEY\"\n{endpoint}\n"),
    )
    .unwrap();
    let env = |k: &str| (k == "MOCK_KEY").then(|| "sk-mock".to_owned());
    let launcher =
        Launcher::new(Home::new(&home), KeyStore::None, Arc::new(MemoryStore::default()), Arc::new(env));
    let token = octo_server::load_or_create_token(&home).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(AppState {
        hub: Hub::new(launcher),
        token: token.clone(),
        hosts: octo_server::loopback_hosts(addr),
        roots: vec![ws.clone()],
        logins: Default::default(),
    });
    tokio::spawn(octo_server::serve_on(listener, Arc::clone(&state)));
    let _ = rustls::crypto::ring::default_provider().install_default();
    Bench {
        _tmp: tmp,
        base: format!("http://{addr}"),
        token,
        state,
        client: reqwest::Client::new(),
        llm,
        home,
        ws,
    }
}

impl Bench {
    pub async fn session(&self) -> String {
        let r = self
            .client
            .post(format!("{}/api/sessions", self.base))
            .bearer_auth(&self.token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        r.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
    }

    pub async fn prompt(&self, id: &str) {
        let r = self
            .client
            .post(format!("{}/api/sessions/{id}/prompt", self.base))
            .bearer_auth(&self.token)
            .json(&json!({"text": "go"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
    }

    /// Reads the session's SSE stream until `turn_end`; each event's number and arrival time.
    pub async fn follow(&self, id: &str, since: u64) -> Vec<(u64, Instant)> {
        let mut resp = self
            .client
            .get(format!("{}/api/sessions/{id}/events?since={since}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        let (mut buf, mut out, mut seq) = (String::new(), Vec::new(), 0u64);
        while let Ok(Some(chunk)) = resp.chunk().await {
            let now = Instant::now();
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let block = buf[..end].to_owned();
                buf.drain(..end + 2);
                let mut end_of_turn = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        seq = v.trim().parse().unwrap();
                    } else if line.contains("\"type\":\"turn_end\"") {
                        end_of_turn = true;
                    }
                }
                out.push((seq, now));
                if end_of_turn {
                    return out;
                }
            }
        }
        out
    }
}
