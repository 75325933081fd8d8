//! A server on loopback against the mock model, for the API and browser tests.

use octo_app::credentials::{KeyStore, MemoryStore};
use octo_app::{Home, Launcher};
use octo_server::{AppState, Hub};
use octo_testkit::{MockLlm, Scripted};
use serde_json::{json, Value};
use std::sync::Arc;

pub struct Server {
    pub _tmp: tempfile::TempDir,
    pub base: String,
    pub token: String,
    pub ws: std::path::PathBuf,
    pub llm: MockLlm,
    /// octo's home (`sessions/` under it).
    pub home: std::path::PathBuf,
    pub client: reqwest::Client,
    pub state: Arc<AppState>,
}

pub async fn start(replies: Vec<Scripted>) -> Server {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let llm = MockLlm::start().await;
    llm.script_anthropic(replies).await;
    std::fs::write(
        home.join("config.toml"),
        format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n", llm.uri()),
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
    let client = octo_provider_client();
    Server { _tmp: tmp, base: format!("http://{addr}"), token, ws, llm, home, client, state }
}

fn octo_provider_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

impl Server {
    pub fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token)
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self.req(reqwest::Method::POST, path).json(&body).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.req(reqwest::Method::GET, path).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn session(&self) -> String {
        let (status, body) = self.post("/api/sessions", json!({})).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }
}
