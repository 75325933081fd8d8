//! The engine program as a child process, driven by small stand-in programs (shell scripts that
//! speak the line protocol): answers streamed back, a crash reported with the program's own last
//! words and the next request starting it again, a load failure, a missing program. The real
//! engine is exercised end to end by octo's own local-model tests.

#![cfg(unix)]

use futures_util::StreamExt;
use octo_agent::{Message, ProviderError, Request, StreamEvent, StreamingSender};
use octo_provider_local::{LocalConfig, LocalError, LocalSender};
use std::path::{Path, PathBuf};

/// A file that passes the GGUF header check (the stand-ins never read it).
fn model(dir: &Path) -> PathBuf {
    let path = dir.join("m.gguf");
    let mut head = b"GGUF".to_vec();
    head.extend(3u32.to_le_bytes());
    head.extend(1u64.to_le_bytes());
    head.extend(0u64.to_le_bytes());
    std::fs::write(&path, head).unwrap();
    path
}

/// A stand-in engine: ready, then for each request `body` (with `$id` set), in `sh`.
fn engine(dir: &Path, ready: &str, body: &str) -> PathBuf {
    let path = dir.join("engine.sh");
    let script = format!(
        "#!/bin/sh\nread open\necho '{ready}'\nwhile read line; do\n  id=$(printf '%s' \"$line\" | sed -n 's/.*\"id\":\\([0-9]*\\).*/\\1/p')\n  case \"$line\" in *cancel*) continue;; esac\n{body}\ndone\n"
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const READY: &str = r#"{"ready":{"Ok":{"n_ctx":512,"notice":"a note","chat_only":false,"small":true}}}"#;

const ANSWER: &str = r#"  echo "{\"event\":[$id,{\"text\":\"hi\"}]}"
  echo "{\"event\":[$id,{\"stop\":\"end_turn\"}]}"
  echo "{\"end\":[$id,{\"prompt\":3,\"evaluated\":2,\"reused\":1,\"generated\":1,\"first_token_us\":5,\"total_us\":9}]}""#;

async fn answer(s: &LocalSender) -> Result<String, ProviderError> {
    let history = [Message::user("hello")];
    let mut stream = s.send_stream(Request::new(&history)).await?;
    let mut text = String::new();
    while let Some(ev) = stream.next().await {
        if let StreamEvent::TextDelta(t) = ev? {
            text.push_str(&t);
        }
    }
    Ok(text)
}

#[tokio::test]
async fn answers_come_back_from_the_engine_program_with_its_stats() {
    let dir = tempfile::tempdir().unwrap();
    let s =
        LocalSender::spawn(LocalConfig::new(model(dir.path())), &engine(dir.path(), READY, ANSWER)).unwrap();
    assert_eq!(s.context_size(), 512);
    assert_eq!(s.notice(), Some("a note"));
    assert_eq!(answer(&s).await.unwrap(), "hi");
    assert_eq!(answer(&s).await.unwrap(), "hi", "a second request on the same program");
    let stats = s.stats();
    assert_eq!((stats.prompt_tokens, stats.reused_tokens, stats.generated_tokens), (3, 1, 1));
}

#[tokio::test]
async fn a_crashed_engine_fails_the_request_in_its_own_words_and_the_next_one_starts_it_again() {
    let dir = tempfile::tempdir().unwrap();
    // The first start dies at its first request; later starts answer.
    let marker = dir.path().join("crashed");
    let body = format!(
        "  if [ ! -e {m} ]; then touch {m}; echo 'GGML_ASSERT(n_tokens > 0) failed' >&2; exit 134; fi\n{ANSWER}",
        m = marker.display()
    );
    let s =
        LocalSender::spawn(LocalConfig::new(model(dir.path())), &engine(dir.path(), READY, &body)).unwrap();
    let e = answer(&s).await.unwrap_err();
    let ProviderError::Server { message, .. } = &e else { panic!("{e:?}") };
    assert!(message.contains("GGML_ASSERT(n_tokens > 0) failed"), "{message}");
    assert!(message.contains("134"), "the exit status is named: {message}");
    assert!(message.contains("starts it again"), "{message}");
    assert!(e.is_retryable());
    assert_eq!(answer(&s).await.unwrap(), "hi", "started again for the next request");
}

#[tokio::test]
async fn a_model_the_engine_cannot_load_is_its_error_and_a_missing_engine_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = model(dir.path());
    let refused = r#"{"ready":{"Err":"llama.cpp could not load m.gguf: it may be truncated"}}"#;
    let e = LocalSender::spawn(LocalConfig::new(&path), &engine(dir.path(), refused, ANSWER)).unwrap_err();
    assert!(matches!(&e, LocalError::Reported(m) if m.contains("could not load")), "{e}");

    let e = LocalSender::spawn(LocalConfig::new(&path), &dir.path().join("no-such-engine")).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("no-such-engine") && text.contains("OCTO_ENGINE"), "{text}");

    // A file that is no model fails before any program is started.
    std::fs::write(dir.path().join("x.gguf"), "not a model at all, clearly").unwrap();
    let e =
        LocalSender::spawn(LocalConfig::new(dir.path().join("x.gguf")), &dir.path().join("no-such-engine"))
            .unwrap_err();
    assert!(matches!(e, LocalError::NotGguf { .. }), "{e}");
}

#[tokio::test]
async fn a_dropped_stream_is_cancelled_and_the_program_stops_with_the_sender() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // Never answers: only a cancel or the sender's end stops the wait.
    let body = format!("  echo $$ > {}\n", pid_file.display());
    let s =
        LocalSender::spawn(LocalConfig::new(model(dir.path())), &engine(dir.path(), READY, &body)).unwrap();
    let history = [Message::user("hello")];
    let stream = s.send_stream(Request::new(&history)).await.unwrap();
    for _ in 0..200 {
        if pid_file.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    drop(stream);
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
    assert!(Path::new(&format!("/proc/{pid}")).exists() || !cfg!(target_os = "linux"));
    drop(s);
    if cfg!(target_os = "linux") {
        let gone = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |st| st.contains(") Z "))
        });
        assert!(gone, "the engine program stops with its sender");
    }
}
