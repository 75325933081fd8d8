//! What every platform's test needs: a mock model behind a launcher, a recording fake of a REST
//! API (wiremock), and a fake event gateway (a small WebSocket server on loopback).

use futures_util::{SinkExt, StreamExt};
use octo_app::credentials::{KeyStore, MemoryStore};
use octo_app::{Home, Launcher, Mode};
use octo_channels::BridgeConfig;
use octo_testkit::scenario::{Built, Scenario};
use octo_testkit::{MockLlm, Scripted};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A home, a workspace and a launcher whose model is a scripted mock.
pub struct Env {
    pub _tmp: octo_testkit::TempHome,
    pub ws: PathBuf,
    pub launcher: Arc<Launcher>,
    pub llm: MockLlm,
}

pub async fn env(replies: Vec<Scripted>) -> Env {
    let Built { home, llm, .. } = Scenario::new().replies(replies).build().await;
    let ws = home.workspace();
    let launcher = Arc::new(Launcher::new(
        Home::new(home.home()),
        KeyStore::None,
        Arc::new(MemoryStore::default()),
        Arc::new(Built::env),
    ));
    Env { _tmp: home, ws, launcher, llm }
}

impl Env {
    /// A bridge configuration allowing `allow`, asking for auto (which must be lowered).
    pub fn config(&self, name: &str, allow: &[&str]) -> BridgeConfig {
        BridgeConfig {
            name: name.into(),
            allow: allow.iter().map(|a| (*a).to_owned()).collect(),
            workspace: self.ws.clone(),
            mode: Mode::Auto,
            edit_every: Duration::from_millis(10),
        }
    }

    /// How many model requests were made.
    pub async fn turns(&self) -> usize {
        self.llm.requests().await.len()
    }
}

/// Polls `f` until it holds, for up to 60 seconds.
pub async fn wait(what: &str, f: impl Fn() -> bool) {
    // Generous: a bridge's turn goes through a real session, which a loaded 2-core machine
    // (a build beside the tests) can slow many times over.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "never saw {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One REST call the bot made.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub path: String,
    pub body: Value,
    pub raw: Vec<u8>,
}

type Answer = dyn Fn(&Call, usize) -> ResponseTemplate + Send + Sync;

/// A recording fake of a REST API: `answer` gets each call and its number.
#[derive(Clone)]
pub struct Rest {
    calls: Arc<Mutex<Vec<Call>>>,
    answer: Arc<Answer>,
}

impl Respond for Rest {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let call = Call {
            method: req.method.to_string(),
            path: req.url.path().to_owned(),
            body,
            raw: req.body.clone(),
        };
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(call.clone());
            calls.len()
        };
        (self.answer)(&call, n)
    }
}

impl Rest {
    pub async fn start(
        answer: impl Fn(&Call, usize) -> ResponseTemplate + Send + Sync + 'static,
    ) -> (MockServer, Rest) {
        let server = MockServer::start().await;
        let rest = Rest { calls: Arc::default(), answer: Arc::new(answer) };
        Mock::given(wiremock::matchers::any()).respond_with(rest.clone()).mount(&server).await;
        (server, rest)
    }

    /// The calls whose path ends with `suffix`.
    pub fn calls(&self, suffix: &str) -> Vec<Call> {
        self.calls.lock().unwrap().iter().filter(|c| c.path.ends_with(suffix)).cloned().collect()
    }

    /// Whether some call whose path contains `part` has a body whose text (as JSON) contains
    /// `needle`.
    pub fn saw(&self, part: &str, needle: &str) -> bool {
        let calls = self.calls.lock().unwrap();
        calls.iter().any(|c| c.path.contains(part) && c.body.to_string().contains(needle))
    }
}

type Greeting = dyn Fn(usize) -> Vec<Message> + Send + Sync;

/// A fake event gateway: the frames `greet` gives are sent on each new connection; the test
/// sends more to the current one and may drop it abruptly; what the bot sends is recorded.
#[derive(Clone)]
pub struct Gateway {
    pub url: String,
    received: Arc<Mutex<Vec<Message>>>,
    current: Arc<Mutex<Option<mpsc::UnboundedSender<Message>>>>,
    connections: Arc<AtomicUsize>,
}

impl Gateway {
    pub async fn start(greet: impl Fn(usize) -> Vec<Message> + Send + Sync + 'static) -> Gateway {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}", listener.local_addr().unwrap());
        let g =
            Gateway { url, received: Arc::default(), current: Arc::default(), connections: Arc::default() };
        let greet: Arc<Greeting> = Arc::new(greet);
        let me = g.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else { continue };
                let n = me.connections.fetch_add(1, Ordering::SeqCst) + 1;
                let (tx, mut rx) = mpsc::unbounded_channel();
                *me.current.lock().unwrap() = Some(tx);
                for m in greet(n) {
                    let _ = ws.send(m).await;
                }
                let received = Arc::clone(&me.received);
                tokio::spawn(async move {
                    loop {
                        tokio::select! {
                            m = ws.next() => match m {
                                Some(Ok(m)) => received.lock().unwrap().push(m),
                                _ => break,
                            },
                            out = rx.recv() => match out {
                                Some(m) => { let _ = ws.send(m).await; }
                                // Dropped by the test: the socket goes away without a close frame.
                                None => break,
                            },
                        }
                    }
                });
            }
        });
        g
    }

    /// Sends a frame on the current connection.
    pub fn send(&self, m: Message) {
        if let Some(tx) = self.current.lock().unwrap().as_ref() {
            let _ = tx.send(m);
        }
    }

    pub fn send_json(&self, v: Value) {
        self.send(Message::text(v.to_string()));
    }

    /// Drops the current connection as a network failure would.
    pub fn drop_connection(&self) {
        self.current.lock().unwrap().take();
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// The JSON text frames the bot sent.
    pub fn texts(&self) -> Vec<Value> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter_map(|m| match m {
                Message::Text(t) => serde_json::from_str(t).ok(),
                _ => None,
            })
            .collect()
    }

    /// The binary frames the bot sent.
    pub fn binaries(&self) -> Vec<Vec<u8>> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter_map(|m| match m {
                Message::Binary(b) => Some(b.to_vec()),
                _ => None,
            })
            .collect()
    }
}

/// A 50 KB answer of prose and code blocks.
pub fn long_answer() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 50_000 {
        s.push_str(&format!(
            "Paragraph {i}: the quick brown fox jumps over the lazy dog again and again.\n\n"
        ));
        s.push_str(&format!(
            "```rust\nfn f{i}() {{\n{}}}\n```\n\n",
            "    let x = 1; // a line of code\n".repeat(12)
        ));
        i += 1;
    }
    s
}

/// Checks that `parts` are within `limit` characters each and every code fence in each is
/// closed in it.
pub fn well_split(parts: &[String], limit: usize) {
    for p in parts {
        assert!(p.chars().count() <= limit, "a part of {} characters (limit {limit})", p.chars().count());
        let fences = p.lines().filter(|l| l.trim_start().starts_with("```")).count();
        assert_eq!(fences % 2, 0, "a code block left open:\n{p}");
    }
}
