//! A real browser for tests and benchmarks: headless Chromium started with a fresh profile and
//! driven over the DevTools protocol (a WebSocket per tab). [`chromium`] finds the browser (in
//! CI its absence fails the test; elsewhere the test is skipped with a note); [`Page`] evaluates
//! JavaScript, waits for conditions, emulates a phone's width and writes screenshots under
//! `target/test-artifacts/`.
// A test harness: a broken browser session fails the test that uses it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)]

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// Where screenshots go: `target/test-artifacts/` (or `$OCTO_ARTIFACTS`).
pub fn artifacts() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("OCTO_ARTIFACTS") {
        return dir.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        std::path::PathBuf::from,
    );
    target.join("test-artifacts")
}

/// One request to the browser's DevTools HTTP endpoint, its JSON answer.
async fn devtools_json(port: u16, method: &str, path: &str) -> Value {
    let mut sock = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    sock.write_all(req.as_bytes()).await.unwrap();
    // The browser keeps the connection open: read the head, then as much body as it announces.
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(20), sock.read(&mut chunk)).await.unwrap().unwrap();
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head.lines().find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            });
            if n == 0 || len.is_some_and(|l| body.len() >= l) {
                break;
            }
        } else if n == 0 {
            break;
        }
    }
    let text = String::from_utf8_lossy(&buf);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or_default()
}

/// The Chromium (or Chrome) binary on `PATH`; `None` (with a note) outside CI when there is none.
pub fn chromium() -> Option<String> {
    let found =
        ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"].into_iter().find(|b| {
            Command::new(b)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
    match found {
        Some(b) => Some(b.to_owned()),
        None if std::env::var_os("CI").is_some() => {
            panic!("chromium is required in CI (.ci/run installs it)")
        }
        None => {
            eprintln!("\n*** SKIPPED: the browser test needs chromium (apt install chromium) ***\n");
            None
        }
    }
}

/// A running headless browser, killed when dropped.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    /// Its DevTools port.
    pub port: u16,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `bin` headless with a fresh profile, a desktop-sized window and DevTools on.
pub fn launch(bin: &str) -> Browser {
    let profile = tempfile::tempdir().unwrap();
    let child = Command::new(bin)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .args(["--remote-debugging-port=0", "--window-size=1280,900"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let file = profile.path().join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    let port = loop {
        if let Some(p) =
            std::fs::read_to_string(&file).ok().and_then(|t| t.lines().next()?.trim().parse().ok())
        {
            break p;
        }
        assert!(Instant::now() < deadline, "chromium did not start");
        std::thread::sleep(Duration::from_millis(100));
    };
    Browser { child, _profile: profile, port }
}

/// A DevTools session with one page (tab).
pub struct Page {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    next: u64,
    /// Uncaught exceptions the page threw.
    pub errors: Vec<String>,
}

impl Page {
    /// The browser's first tab.
    pub async fn open(port: u16) -> Self {
        let list = devtools_json(port, "GET", "/json/list").await;
        let url = list.as_array().unwrap().iter().find(|t| t["type"] == "page").unwrap()
            ["webSocketDebuggerUrl"]
            .as_str()
            .unwrap()
            .to_owned();
        Self::connect(url).await
    }

    /// A new tab, opened at `url`.
    pub async fn tab(port: u16, url: &str) -> Self {
        let t = devtools_json(port, "PUT", &format!("/json/new?{url}")).await;
        let mut page = Self::connect(t["webSocketDebuggerUrl"].as_str().unwrap().to_owned()).await;
        page.start().await;
        page
    }

    async fn connect(url: String) -> Self {
        let (ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        Self { ws, next: 0, errors: Vec::new() }
    }

    /// Turns on what the tests watch (uncaught exceptions).
    pub async fn start(&mut self) {
        self.call("Page.enable", json!({})).await;
        self.call("Runtime.enable", json!({})).await;
    }

    /// Navigates the tab to `url`.
    pub async fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
    }

    /// Emulates a screen `width` pixels wide (a phone at 390), or the desktop again (`None`).
    pub async fn width(&mut self, width: Option<u32>) {
        match width {
            Some(w) => {
                self.call(
                    "Emulation.setDeviceMetricsOverride",
                    json!({"width": w, "height": 844, "deviceScaleFactor": 1, "mobile": true}),
                )
                .await;
            }
            None => {
                self.call("Emulation.clearDeviceMetricsOverride", json!({})).await;
            }
        }
    }

    /// One DevTools method call; its result.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.ws
            .send(Message::Text(json!({"id": id, "method": method, "params": params}).to_string().into()))
            .await
            .unwrap();
        loop {
            let m = tokio::time::timeout(Duration::from_secs(60), self.ws.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let v: Value = serde_json::from_str(m.to_text().unwrap_or("{}")).unwrap_or_default();
            if v["id"] == id {
                return v["result"].clone();
            }
            if v["method"] == "Runtime.exceptionThrown" {
                self.errors.push(v["params"]["exceptionDetails"].to_string());
            }
        }
    }

    /// Evaluates `js` in the page (promises awaited); its value.
    pub async fn eval(&mut self, js: &str) -> Value {
        let r = self
            .call("Runtime.evaluate", json!({"expression": js, "returnByValue": true, "awaitPromise": true}))
            .await;
        r["result"]["value"].clone()
    }

    /// Waits until `js` is true; saves a screenshot and fails after 20 s.
    pub async fn wait(&mut self, what: &str, js: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.eval(js).await != json!(true) {
            if Instant::now() > deadline {
                self.screenshot(what).await;
                let body = self.eval("document.body.innerText").await;
                panic!("the page never showed {what}; it shows:\n{body}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Saves a PNG of the tab as `octo-serve-<name>.png` under [`artifacts`].
    pub async fn screenshot(&mut self, name: &str) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"})).await;
        if let Some(data) = shot["data"].as_str() {
            let dir = artifacts();
            let _ = std::fs::create_dir_all(&dir);
            let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap_or_default();
            let path = dir.join(format!("octo-serve-{}.png", name.replace(' ', "-")));
            let _ = std::fs::write(&path, bytes);
            eprintln!("screenshot: {}", path.display());
        }
    }
}
