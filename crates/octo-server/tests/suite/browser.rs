//! The web UI in a real browser: headless Chromium, driven over the DevTools protocol, against
//! `octo serve` and the mock model. It logs in with the printed link, types a prompt, sees the
//! streamed answer, approves the edit from its card and checks the diff is shown. On failure a
//! screenshot is saved under `target/test-artifacts/`.

use super::common::start;
use futures_util::{SinkExt, StreamExt};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

fn chromium() -> Option<String> {
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

struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    port: u16,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn launch(bin: &str) -> Browser {
    let profile = tempfile::tempdir().unwrap();
    let child = Command::new(bin)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .args(["--remote-debugging-port=0", "--window-size=420,900"])
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

/// A DevTools session with one page.
struct Page {
    ws: tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    next: u64,
}

impl Page {
    async fn open(port: u16) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let list: Value =
            reqwest::get(format!("http://127.0.0.1:{port}/json/list")).await.unwrap().json().await.unwrap();
        let url = list.as_array().unwrap().iter().find(|t| t["type"] == "page").unwrap()
            ["webSocketDebuggerUrl"]
            .as_str()
            .unwrap()
            .to_owned();
        let (ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        Self { ws, next: 0 }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.ws
            .send(Message::Text(json!({"id": id, "method": method, "params": params}).to_string().into()))
            .await
            .unwrap();
        loop {
            let m = tokio::time::timeout(Duration::from_secs(20), self.ws.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let v: Value = serde_json::from_str(m.to_text().unwrap_or("{}")).unwrap_or_default();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
    }

    async fn eval(&mut self, js: &str) -> Value {
        let r = self
            .call("Runtime.evaluate", json!({"expression": js, "returnByValue": true, "awaitPromise": true}))
            .await;
        r["result"]["value"].clone()
    }

    /// Waits until `js` is true; saves a screenshot and fails after 20 s.
    async fn wait(&mut self, what: &str, js: &str) {
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

    async fn screenshot(&mut self, name: &str) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"})).await;
        if let Some(data) = shot["data"].as_str() {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("../test-artifacts");
            let _ = std::fs::create_dir_all(&dir);
            let bytes = base64_decode(data);
            let path = dir.join(format!("octo-serve-{}.png", name.replace(' ', "-")));
            let _ = std::fs::write(&path, bytes);
            eprintln!("screenshot: {}", path.display());
        }
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let table = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let vals: Vec<u32> = s.bytes().filter_map(table).collect();
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, v)| acc | (v << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_ui_streams_an_answer_and_approves_an_edit_with_its_diff() {
    let Some(bin) = chromium() else { return };
    let edit = Scripted::sse(
        Reply::new()
            .text("Let me fix the notes.")
            .tool_use(
                "toolu_1",
                "edit_file",
                json!({"path": "notes.txt", "old_string": "beta", "new_string": "gamma"}),
            )
            .sse(),
    );
    let done = Scripted::sse(
        Reply::new().text("Done: **beta** is now `gamma`.\n\n```rust\nlet word = \"gamma\";\n```\n").sse(),
    );
    let s = start(vec![edit, done]).await;
    std::fs::write(s.ws.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let browser = launch(&bin);
    let mut page = Page::open(browser.port).await;
    page.call("Page.enable", json!({})).await;
    page.call("Page.navigate", json!({"url": format!("{}/login?token={}", s.base, s.token)})).await;
    page.wait(
        "the composer",
        "!!document.querySelector('#prompt') && document.querySelectorAll('#sessions option').length > 0",
    )
    .await;
    page.eval("document.querySelector('#prompt').value = 'Replace beta with gamma in notes.txt'; document.querySelector('#composer').requestSubmit(); true").await;
    page.wait(
        "the streamed answer",
        "document.querySelector('#log').innerText.includes('Let me fix the notes.')",
    )
    .await;
    page.wait("the approval card", "!!document.querySelector('.approval button[data-d=allow]')").await;
    page.eval("document.querySelector('.approval button[data-d=allow]').click(); true").await;
    page.wait("the diff", "[...document.querySelectorAll('.diff .add')].some(e => e.textContent.includes('gamma')) && [...document.querySelectorAll('.diff .del')].some(e => e.textContent.includes('beta'))").await;
    page.wait(
        "the final answer",
        "[...document.querySelectorAll('.msg.assistant strong')].some(e => e.textContent === 'beta')",
    )
    .await;
    page.wait(
        "highlighted code",
        "[...document.querySelectorAll('.msg.assistant pre code .k')].some(e => e.textContent === 'let')",
    )
    .await;
    assert_eq!(std::fs::read_to_string(s.ws.join("notes.txt")).unwrap(), "alpha\ngamma\n");
    // The card is marked answered, and the session's status reached the UI.
    page.wait("the resolved card", "!!document.querySelector('.approval.resolved')").await;
    page.wait("the meter", "document.querySelector('#meter').textContent.includes('tokens')").await;
}
