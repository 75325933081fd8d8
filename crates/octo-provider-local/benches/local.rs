//! `make bench`: the built-in model against llama.cpp's own `llama-server`, on the same GGUF, the
//! same prompt (about 1,000 tokens) and the same threads: prompt processing and generation
//! tokens per second, the first turn's time to first token, and a second turn's (octo reuses its
//! KV cache; the goal is at most a third of the first). The model comes from `OCTO_TEST_GGUF` (or
//! `target/test-models`, where `.ci/run` puts it); `scripts/llama-server` builds the server from
//! llama.cpp's sources once (cmake, minutes), and the comparison is skipped with a message when it
//! cannot.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures_util::StreamExt;
use octo_agent::{Message, Request, StreamEvent};
use octo_provider_local::{LocalConfig, LocalSender};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MAX_TOKENS: u32 = 128;
const CONTEXT: u32 = 4096;

fn model() -> Option<PathBuf> {
    let env = std::env::var_os("OCTO_TEST_GGUF").map(PathBuf::from);
    let ci = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/test-models/SmolLM2-135M-Instruct.Q4_1.gguf");
    env.into_iter().chain([ci]).find(|p| p.is_file())
}

/// A system prompt of about 1,000 tokens, as a coding agent's is.
fn system() -> String {
    "You are a helpful assistant who answers questions about programming clearly and briefly. ".repeat(62)
}

/// One measured turn.
#[derive(Clone, Copy)]
struct Turn {
    prompt_tokens: u64,
    ttft: Duration,
    tokens: u64,
    total: Duration,
}

impl Turn {
    fn generation(&self) -> f64 {
        // The first token came with the prompt; the rest are generation.
        self.tokens.saturating_sub(1) as f64 / (self.total - self.ttft).as_secs_f64().max(1e-6)
    }

    fn prompt_rate(&self) -> f64 {
        self.prompt_tokens as f64 / self.ttft.as_secs_f64().max(1e-6)
    }
}

async fn octo_turn(s: &LocalSender, history: &[Message], system: &str) -> (Turn, String) {
    let started = Instant::now();
    let req = Request::new(history).with_system(system).with_max_tokens(Some(MAX_TOKENS));
    let mut stream = octo_agent::StreamingSender::send_stream(s, req).await.unwrap();
    let (mut ttft, mut text, mut tokens, mut prompt) = (None, String::new(), 0, 0);
    while let Some(ev) = stream.next().await {
        match ev.unwrap() {
            StreamEvent::TextDelta(t) => {
                ttft.get_or_insert_with(|| started.elapsed());
                text.push_str(&t);
            }
            StreamEvent::Usage(u) => {
                tokens = u.output_tokens;
                prompt = u.input_tokens + u.cache_read_tokens;
            }
            _ => {}
        }
    }
    (Turn { prompt_tokens: prompt, ttft: ttft.unwrap_or_default(), tokens, total: started.elapsed() }, text)
}

fn sender(path: &Path, threads: usize) -> LocalSender {
    LocalSender::new(LocalConfig {
        temperature: Some(0.0),
        context_size: Some(CONTEXT),
        threads: Some(threads),
        ..LocalConfig::new(path)
    })
    .unwrap()
}

fn row(what: &str, octo: String, server: String, goal: &str) {
    println!("  {what:<44} {octo:>12} {server:>14}   {goal}");
}

/// The median of `f` over the runs (`None` without runs).
fn median(runs: &[(Turn, Turn)], f: &dyn Fn(&(Turn, Turn)) -> f64) -> Option<f64> {
    let mut v: Vec<f64> = runs.iter().map(f).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn table(threads: usize, octo: &[(Turn, Turn)], server: &[(Turn, Turn)], source: &str) {
    let cell = |v: Option<f64>, unit: &str| v.map_or("—".to_owned(), |v| format!("{v:.0}{unit}"));
    let both = |f: &dyn Fn(&(Turn, Turn)) -> f64, unit: &str| {
        (cell(median(octo, f), unit), cell(median(server, f), unit))
    };
    println!(
        "local model against llama-server ({threads} threads, {} prompt tokens, median of {} alternating rounds, server {source}):",
        octo.first().map_or(0, |t| t.0.prompt_tokens),
        octo.len()
    );
    row("", "octo".into(), "llama-server".into(), "goal");
    let (o, s) = both(&|t| t.0.prompt_rate(), "");
    row("prompt processing, tokens/s", o, s, "octo ≥ server");
    let (o, s) = both(&|t| t.0.generation(), "");
    row("generation, tokens/s", o, s, "octo ≥ server");
    let (o, s) = both(&|t| t.0.ttft.as_secs_f64() * 1e3, " ms");
    row("time to first token, first turn", o, s, "octo ≤ server");
    let (o, s) = both(&|t| t.1.ttft.as_secs_f64() * 1e3, " ms");
    row("time to first token, second turn", o, s, "octo ≤ server");
    let share = median(octo, &|t| t.1.ttft.as_secs_f64() / t.0.ttft.as_secs_f64().max(1e-9)).unwrap_or(0.0);
    row("second turn's share of the first", format!("{:.0}%", share * 100.0), String::new(), "≤ 33%");
}

/// One round of octo: a fresh sender (nothing cached), two turns of one conversation.
fn octo_round(rt: &tokio::runtime::Runtime, path: &Path, threads: usize, system: &str) -> (Turn, Turn) {
    let s = sender(path, threads);
    let (first, answer) = rt.block_on(octo_turn(&s, &[Message::user(Q1)], system));
    let history = [Message::user(Q1), Message::assistant(answer), Message::user(Q2)];
    let (second, _) = rt.block_on(octo_turn(&s, &history, system));
    (first, second)
}

/// One round of the server: started fresh (an empty prompt cache), two turns; where it came
/// from, or why there is no round.
fn server_round(
    rt: &tokio::runtime::Runtime,
    path: &Path,
    threads: usize,
    system: &str,
) -> Result<((Turn, Turn), String), String> {
    let mut srv = server::start(path, threads)?;
    let source = srv.source.clone();
    rt.block_on(server::turns(&srv.url, system, Q1, Q2))
        .map(|t| (t, source.clone()))
        .map_err(|e| format!("{source}; its request failed: {e}, the server {}", srv.state()))
}

const Q1: &str = "Explain what a hash map is.";
const Q2: &str = "And a B-tree?";

fn main() {
    let Some(path) = model() else {
        println!("local model: skipped (set OCTO_TEST_GGUF to a GGUF, e.g. SmolLM2-135M-Instruct.Q4_1.gguf)");
        return;
    };
    let threads = octo_provider_local::physical_cores();
    let rounds: usize = std::env::var("LOCAL_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let system = system();
    // Warm up (page the model in), then fresh senders for the measured rounds.
    rt.block_on(octo_turn(&sender(&path, threads), &[Message::user("hi")], "x"));
    let (mut octo, mut server, mut source) = (Vec::new(), Vec::new(), String::new());
    // Alternating who goes first, so neither always runs on a cooler (or warmer) machine.
    for round in 0..rounds {
        let mut serve = || match server_round(&rt, &path, threads, &system) {
            Ok((t, from)) => {
                server.push(t);
                source = from;
            }
            Err(why) => source = format!("skipped: {why}"),
        };
        if round % 2 == 1 {
            serve();
            octo.push(octo_round(&rt, &path, threads, &system));
        } else {
            octo.push(octo_round(&rt, &path, threads, &system));
            serve();
        }
    }
    table(threads, &octo, &server, &source);
}

mod server {
    use super::{Turn, CONTEXT, MAX_TOKENS};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    pub struct Server {
        pub url: String,
        pub source: String,
        child: Child,
    }

    impl Server {
        /// Whether the process is still there (it may have crashed).
        pub fn state(&mut self) -> String {
            match self.child.try_wait() {
                Ok(Some(status)) => format!("exited: {status}"),
                _ => "is still running".into(),
            }
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Builds (once) and starts llama.cpp's server on the model.
    pub fn start(model: &Path, threads: usize) -> Result<Server, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let out = Command::new("bash")
            .arg(root.join("scripts/llama-server"))
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("scripts/llama-server: {e}"))?;
        if !out.status.success() {
            return Err("scripts/llama-server could not build llama-server".into());
        }
        let bin = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let source = std::fs::read_to_string(root.join("target/llama-server/source"))
            .map_or_else(|_| "built from LLAMA_CPP_DIR".into(), |s| format!("llama.cpp {}", s.trim()));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new(&bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", &CONTEXT.to_string()])
            .args(["-t", &threads.to_string(), "-tb", &threads.to_string(), "-np", "1", "-m"])
            .arg(model)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{bin}: {e}"))?;
        let server = Server { url: format!("http://127.0.0.1:{port}"), source, child };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if ready(&server.url) {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err("the server did not become ready".into());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Whether `GET /health` answers 200 (plain TCP: no runtime needed here).
    fn ready(url: &str) -> bool {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(url.trim_start_matches("http://")) else { return false };
        let _ = s.write_all(b"GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text.starts_with("HTTP/1.1 200")
    }

    /// The prompt octo renders for SmolLM2 (ChatML), for the completion endpoint.
    fn chatml(messages: &[(&str, &str)]) -> String {
        let mut p: String =
            messages.iter().map(|(r, c)| format!("<|im_start|>{r}\n{c}<|im_end|>\n")).collect();
        p.push_str("<|im_start|>assistant\n");
        p
    }

    /// Two turns of the same conversation (the second reusing the server's prompt cache).
    pub async fn turns(url: &str, system: &str, q1: &str, q2: &str) -> Result<(Turn, Turn), String> {
        let (first, answer) = turn(url, &chatml(&[("system", system), ("user", q1)])).await?;
        let (second, _) =
            turn(url, &chatml(&[("system", system), ("user", q1), ("assistant", &answer), ("user", q2)]))
                .await?;
        Ok((first, second))
    }

    async fn turn(url: &str, prompt: &str) -> Result<(Turn, String), String> {
        let client =
            octo_provider::build_client(&octo_provider::HttpConfig::default()).map_err(|e| e.to_string())?;
        let body = serde_json::json!({
            "prompt": prompt, "stream": true, "temperature": 0.0, "n_predict": MAX_TOKENS,
            "cache_prompt": true, "stop": ["<|im_end|>"]
        });
        let started = Instant::now();
        let send =
            client.post(format!("{url}/completion")).json(&body).timeout(Duration::from_secs(300)).send();
        let mut resp = send.await.map_err(|e| e.to_string())?;
        let (mut ttft, mut text, mut tokens, mut prompt_tokens, mut buf) =
            (None, String::new(), 0u64, 0u64, String::new());
        while let Ok(Some(chunk)) = resp.chunk().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find('\n') {
                let line = buf[..end].trim().to_owned();
                buf.drain(..=end);
                let Some(data) = line.strip_prefix("data: ") else { continue };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else { continue };
                if let Some(c) = v["content"].as_str().filter(|c| !c.is_empty()) {
                    ttft.get_or_insert_with(|| started.elapsed());
                    text.push_str(c);
                    tokens += 1;
                }
                if let Some(n) = v["timings"]["prompt_n"].as_u64() {
                    prompt_tokens = n;
                }
            }
        }
        if tokens == 0 {
            return Err("no tokens came back".into());
        }
        let turn = Turn { prompt_tokens, ttft: ttft.unwrap_or_default(), tokens, total: started.elapsed() };
        Ok((turn, text))
    }
}
