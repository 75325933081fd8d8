//! `make bench`: the local model's time to first token and tokens per second, and a second
//! turn's time to first token (the KV cache reused), side by side with the llama.cpp server of
//! the `llama-cpp-python` package on the same model, prompt and threads. The model comes from
//! `OCTO_TEST_GGUF` (or `target/test-models`, where `.ci/run` puts it); the Python server is
//! installed from PyPI when missing, and skipped with a message when that fails.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures_util::StreamExt;
use octo_agent::{Message, Request, StreamEvent};
use octo_provider_local::{LocalConfig, LocalSender};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const MAX_TOKENS: u32 = 128;

fn model() -> Option<PathBuf> {
    let env = std::env::var_os("OCTO_TEST_GGUF").map(PathBuf::from);
    let ci = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/test-models/SmolLM2-135M-Instruct.Q4_1.gguf");
    env.into_iter().chain([ci]).find(|p| p.is_file())
}

fn system() -> String {
    "You are a helpful assistant who answers questions about programming clearly and briefly. ".repeat(12)
}

struct Turn {
    ttft: Duration,
    tokens: u64,
    total: Duration,
}

impl Turn {
    fn rate(&self) -> f64 {
        self.tokens as f64 / (self.total - self.ttft).as_secs_f64().max(1e-6)
    }
}

async fn octo_turn(s: &LocalSender, history: &[Message], system: &str) -> (Turn, String) {
    let started = Instant::now();
    let req = Request::new(history).with_system(system).with_max_tokens(Some(MAX_TOKENS));
    let mut stream = octo_agent::StreamingSender::send_stream(s, req).await.unwrap();
    let (mut ttft, mut text, mut tokens) = (None, String::new(), 0);
    while let Some(ev) = stream.next().await {
        match ev.unwrap() {
            StreamEvent::TextDelta(t) => {
                ttft.get_or_insert_with(|| started.elapsed());
                text.push_str(&t);
            }
            StreamEvent::Usage(u) => tokens = u.output_tokens,
            _ => {}
        }
    }
    (Turn { ttft: ttft.unwrap_or_default(), tokens, total: started.elapsed() }, text)
}

fn report(who: &str, first: &Turn, second: &Turn) {
    println!(
        "local model, {who}: first turn TTFT {:.0} ms, {:.1} tokens/s ({} tokens); second turn TTFT {:.0} ms ({:.0}% of the first)",
        first.ttft.as_secs_f64() * 1e3,
        first.rate(),
        first.tokens,
        second.ttft.as_secs_f64() * 1e3,
        second.ttft.as_secs_f64() * 100.0 / first.ttft.as_secs_f64().max(1e-9)
    );
}

fn main() {
    let Some(path) = model() else {
        println!("local model: skipped (set OCTO_TEST_GGUF to a GGUF, e.g. SmolLM2-135M-Instruct.Q4_1.gguf)");
        return;
    };
    let threads = octo_provider_local::physical_cores();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let config = LocalConfig {
        temperature: Some(0.0),
        context_size: Some(2048),
        threads: Some(threads),
        ..LocalConfig::new(&path)
    };
    let sender = LocalSender::new(config).unwrap();
    let system = system();
    let q1 = "Explain what a hash map is.";
    let q2 = "And a B-tree?";
    rt.block_on(async {
        // Warm up (page the model in), then a fresh sender for the measured turns.
        let _ = octo_turn(&sender, &[Message::user("hi")], "x").await;
    });
    let sender = LocalSender::new(LocalConfig {
        temperature: Some(0.0),
        context_size: Some(2048),
        threads: Some(threads),
        ..LocalConfig::new(&path)
    })
    .unwrap();
    let (first, answer) = rt.block_on(octo_turn(&sender, &[Message::user(q1)], &system));
    let history = [Message::user(q1), Message::assistant(answer), Message::user(q2)];
    let (second, _) = rt.block_on(octo_turn(&sender, &history, &system));
    report("octo", &first, &second);
    match python::server(&path, threads) {
        Ok(mut server) => {
            let first = rt.block_on(python::turn(&server.url, &[("system", &system), ("user", q1)]));
            let second = first.as_ref().ok().map(|(_, pa)| {
                rt.block_on(python::turn(
                    &server.url,
                    &[("system", &system), ("user", q1), ("assistant", pa), ("user", q2)],
                ))
            });
            match (first, second) {
                (Ok((pf, _)), Some(Ok((ps, _)))) => report("llama-cpp-python server", &pf, &ps),
                (Err(e), _) | (_, Some(Err(e))) => println!(
                    "local model, llama-cpp-python server: skipped (its request failed: {e}; the server {})",
                    server.state()
                ),
                _ => {}
            }
        }
        Err(why) => println!("local model, llama-cpp-python server: skipped ({why})"),
    }
}

mod python {
    use super::{Turn, MAX_TOKENS};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    pub struct Server {
        pub url: String,
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

    fn installed() -> bool {
        Command::new("python3")
            .args(["-c", "import llama_cpp.server"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Starts `python3 -m llama_cpp.server` on the model, installing the package when missing.
    pub fn server(model: &Path, threads: usize) -> Result<Server, String> {
        if !installed() {
            println!(
                "local model: installing llama-cpp-python[server] from PyPI (it compiles llama.cpp; minutes)"
            );
            let _ = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "llama-cpp-python[server]"])
                .status();
            if !installed() {
                let _ = Command::new("python3")
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--break-system-packages",
                        "llama-cpp-python[server]",
                    ])
                    .status();
            }
            if !installed() {
                return Err("llama-cpp-python[server] could not be installed".into());
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "llama_cpp.server",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--n_ctx",
                "2048",
            ])
            .args(["--n_threads", &threads.to_string(), "--model"])
            .arg(model)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let server = Server { url: format!("http://127.0.0.1:{port}"), child };
        let deadline = Instant::now() + Duration::from_secs(120);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err("the server did not start".into());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(server)
    }

    /// One streamed chat completion; its timing and text.
    pub async fn turn(url: &str, messages: &[(&str, &str)]) -> Result<(Turn, String), String> {
        let client = octo_provider::build_client(&octo_provider::HttpConfig::default()).unwrap();
        // The same prompt text octo renders (the model's template is ChatML), sent to the
        // completions endpoint: this build's chat endpoint crashes in libggml-cpu on this
        // machine, its completions endpoint does not.
        let mut prompt: String =
            messages.iter().map(|(r, c)| format!("<|im_start|>{r}\n{c}<|im_end|>\n")).collect();
        prompt.push_str("<|im_start|>assistant\n");
        let body = serde_json::json!({"prompt": prompt, "stream": true, "temperature": 0.0, "max_tokens": MAX_TOKENS, "stop": ["<|im_end|>"]});
        let started = Instant::now();
        let send =
            client.post(format!("{url}/v1/completions")).json(&body).timeout(Duration::from_secs(120)).send();
        let mut resp = send.await.map_err(|e| e.to_string())?;
        let (mut ttft, mut text, mut tokens, mut buf) = (None, String::new(), 0u64, String::new());
        while let Ok(Some(chunk)) = resp.chunk().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find('\n') {
                let line = buf[..end].trim().to_owned();
                buf.drain(..=end);
                let Some(data) = line.strip_prefix("data: ") else { continue };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else { continue };
                if let Some(c) = v["choices"][0]["text"].as_str().filter(|c| !c.is_empty()) {
                    ttft.get_or_insert_with(|| started.elapsed());
                    text.push_str(c);
                    tokens += 1;
                }
            }
        }
        if tokens == 0 {
            return Err("no tokens came back".into());
        }
        Ok((Turn { ttft: ttft.unwrap_or_default(), tokens, total: started.elapsed() }, text))
    }
}
