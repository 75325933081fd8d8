//! The binary with the built-in local model: `--endpoint local`, the fallback when nothing is
//! configured, and `octo models` (pull from a local HTTP server, list, rm). The model is the test
//! GGUF from `OCTO_TEST_GGUF` (see octo-provider-local's tests); without it these say so.

use super::common::octo;
use octo_testkit::TempHome;
use predicates::prelude::*;
use std::path::PathBuf;

fn gguf() -> Option<PathBuf> {
    match std::env::var_os("OCTO_TEST_GGUF").map(PathBuf::from).filter(|p| p.is_file()) {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => panic!("OCTO_TEST_GGUF must name the test GGUF in CI"),
        None => {
            eprintln!("\n*** SKIPPED: set OCTO_TEST_GGUF to run the local model tests ***\n");
            None
        }
    }
}

#[test]
fn local_model_answers_a_one_shot_with_no_key_and_no_server() {
    let Some(model) = gguf() else { return };
    let home = TempHome::new().unwrap();
    octo(&home)
        .args(["--endpoint", "local", "--model"])
        .arg(&model)
        .args(["--no-tools", "--max-tokens", "16", "Say hello."])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success()
        .stdout(predicate::str::is_empty().not());
}

#[test]
fn local_model_is_the_fallback_when_nothing_is_configured() {
    let home = TempHome::new().unwrap();
    // No model yet: the error offers the one command that pulls one.
    octo(&home)
        .arg("hello")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("octo setup "))
        .stderr(predicate::str::contains("octo models pull qwen2.5-coder-1.5b"))
        .stderr(predicate::str::contains("tool calls, 32k context"))
        .stderr(predicate::str::contains("ANTHROPIC_API_KEY"));
    let Some(model) = gguf() else { return };
    let dir = home.home().join("models");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&model, dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")).unwrap();
    octo(&home)
        .args(["--no-tools", "--max-tokens", "16", "Say hello."])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success()
        .stderr(predicate::str::contains("using the local model smollm2-135m"));
    octo(&home)
        .args(["models", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("smollm2-135m").and(predicate::str::contains("94 MB")));
}

/// A new user's home with the test model pulled (and a one-file workspace), nothing else.
fn new_user_with(model: &std::path::Path) -> TempHome {
    let home = TempHome::new().unwrap();
    home.write("main.py", "print('hi')\n").unwrap();
    let dir = home.home().join("models");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(model, dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")).unwrap();
    home
}

/// The first question a new user asks, with nothing configured but the pulled test model (too
/// small for tools): it answers as plain chat, says so, and is quick.
#[test]
fn a_small_local_model_answers_as_chat_and_says_so() {
    let Some(model) = gguf() else { return };
    let home = new_user_with(&model);
    // As a new user runs it: nothing configured but the model, no flags.
    octo(&home)
        .args(["--no-save", "what files are in this repo?"])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success()
        .stdout(predicate::str::is_empty().not())
        .stderr(predicate::str::contains("runs as plain chat"));
}

#[test]
fn a_small_model_held_to_tool_calls_is_stopped_when_it_degenerates() {
    let Some(model) = gguf() else { return };
    let home = new_user_with(&model);
    std::fs::write(home.home().join("config.toml"), "[endpoints.local]\ntools = true\n").unwrap();
    let out = octo(&home)
        .args(["--no-save", "what files are in this repo?"])
        .timeout(std::time::Duration::from_secs(180))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // It answers, or it is stopped with the reason: never minutes of continuations.
    assert!(out.status.success() || stderr.contains("stopped making sense"), "{:?}: {stderr}", out.status);
}

#[test]
fn a_file_that_is_not_a_model_is_a_clear_error() {
    let home = TempHome::new().unwrap();
    let bad = home.write("notes.gguf", "these are notes, not a model").unwrap();
    octo(&home)
        .args(["--endpoint", "local", "--model"])
        .arg(&bad)
        .arg("hi")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a GGUF model"));
}

/// Serves `body` at /m/tiny.gguf, honouring `Range`, for `octo models pull`.
fn serve(body: Vec<u8>) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/m/tiny.gguf", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut sock in listener.incoming().flatten() {
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&req).to_lowercase();
            let from: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("range: bytes="))
                .and_then(|r| r.trim().trim_end_matches('-').parse().ok())
                .unwrap_or(0);
            let status = if from > 0 { "206 Partial Content" } else { "200 OK" };
            let _ = write!(
                sock,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len() - from
            );
            let _ = sock.write_all(&body[from..]);
        }
    });
    url
}

#[test]
fn models_pull_list_and_rm() {
    let home = TempHome::new().unwrap();
    let mut body = b"GGUF".to_vec();
    body.extend(3u32.to_le_bytes());
    body.extend(1u64.to_le_bytes());
    body.extend(0u64.to_le_bytes());
    body.extend(vec![7u8; 100_000]);
    let url = serve(body.clone());
    // A partial download from an earlier attempt is resumed.
    let dir = home.home().join("models");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tiny.gguf.part"), &body[..50_000]).unwrap();
    octo(&home)
        .args(["models", "pull", &url])
        .assert()
        .success()
        .stderr(predicate::str::contains("resuming after").and(predicate::str::contains("tiny is ready")));
    assert_eq!(std::fs::read(dir.join("tiny.gguf")).unwrap(), body);
    octo(&home).args(["models", "list"]).assert().success().stdout(predicate::str::contains("tiny"));
    octo(&home)
        .args(["models", "list", "--available"])
        .assert()
        .success()
        .stdout(predicate::str::contains("qwen2.5-coder-1.5b"))
        .stdout(predicate::str::contains("tool calls, 32k context (recommended)"));
    // Without a name, the choices and the recommended one.
    octo(&home)
        .args(["models", "pull"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("name the model to pull"))
        .stderr(
            predicate::str::contains("smollm2-135m").and(predicate::str::contains("chat only, 8k context")),
        )
        .stderr(predicate::str::contains("start with `octo models pull qwen2.5-coder-1.5b`"));
    // A wrong hash: deleted, an error.
    octo(&home)
        .args(["models", "pull", &url, "--sha256", &"0".repeat(64)])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("does not match its SHA-256"));
    octo(&home).args(["models", "rm", "tiny"]).assert().success();
    assert!(!dir.join("tiny.gguf").exists());
    octo(&home).args(["models", "rm", "tiny"]).assert().code(2);
    octo(&home)
        .args(["models", "pull", "no-such-model"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a known model"));
}

#[test]
fn setup_pulls_the_local_model_tests_it_and_makes_it_the_default() {
    let Some(model) = gguf() else { return };
    let home = TempHome::new().unwrap();
    let url = serve(std::fs::read(&model).unwrap());
    octo(&home)
        .args(["setup", "--endpoint", "local", "--model", &url])
        .assert()
        .success()
        .stderr(predicate::str::contains("pulling"))
        .stderr(predicate::str::contains("it answered:"))
        .stderr(predicate::str::contains("set up local:"));
    let name = url.rsplit('/').next().unwrap().trim_end_matches(".gguf").to_owned();
    let config = std::fs::read_to_string(home.home().join("config.toml")).unwrap();
    assert!(config.contains(&format!("default = \"local:{name}\"")), "{config}");
    // Already there: used as it is, not pulled again.
    octo(&home)
        .args(["setup", "--endpoint", "local", "--model", &name, "--no-test"])
        .assert()
        .success()
        .stderr(predicate::str::contains("pulling").not());
    octo(&home).args(["--no-tools", "--max-tokens", "8", "Say hello."]).assert().success();
}
