//! `pull` against a local HTTP server: progress, resume after a broken connection, and the
//! SHA-256 check (a wrong file is deleted, never kept).

use octo_provider_local::pull::{partial_path, pull, sha256_file, Progress, PullSpec};
use octo_provider_local::LocalError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A file server: GET with an optional `Range: bytes=N-`; the first `breaks` answers stop half
/// way; `etag` is announced as Hugging Face does.
struct Server {
    url: String,
    requests: Arc<AtomicUsize>,
}

async fn serve(body: Vec<u8>, breaks: usize, etag: Option<String>) -> Server {
    serve_as(body, breaks, etag, false).await
}

/// As [`serve`]; with `hub`, the file's address answers as Hugging Face does: a redirect that
/// carries `X-Linked-Etag` and `X-Linked-Size`, to a storage address whose own `ETag` is another
/// 64-hex value.
async fn serve_as(body: Vec<u8>, breaks: usize, etag: Option<String>, hub: bool) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/models/tiny.gguf", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&requests);
    let body = Arc::new(body);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let n = count.fetch_add(1, Ordering::SeqCst);
            let body = Arc::clone(&body);
            let etag = etag.clone();
            tokio::spawn(async move {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => req.extend_from_slice(&buf[..k]),
                    }
                }
                let head = String::from_utf8_lossy(&req).to_lowercase();
                if hub && !head.starts_with("get /cdn/") {
                    let mut h = "HTTP/1.1 302 Found\r\nLocation: /cdn/blob-1?sig=x\r\nContent-Length: 0\r\n"
                        .to_owned();
                    if let Some(e) = &etag {
                        h.push_str(&format!("X-Linked-Etag: \"{e}\"\r\nX-Linked-Size: {}\r\n", body.len()));
                    }
                    h.push_str("Connection: close\r\n\r\n");
                    let _ = sock.write_all(h.as_bytes()).await;
                    return;
                }
                let n = if hub { n / 2 } else { n };
                let from: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("range: bytes="))
                    .and_then(|r| r.trim().trim_end_matches('-').parse().ok())
                    .unwrap_or(0);
                let total = body.len();
                let mut h = if from > 0 {
                    format!(
                        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {from}-{}/{total}\r\n",
                        total - 1
                    )
                } else {
                    "HTTP/1.1 200 OK\r\n".to_owned()
                };
                h.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n", total - from));
                match &etag {
                    Some(_) if hub => h.push_str(&format!("ETag: \"{}\"\r\n", "cd".repeat(32))),
                    Some(e) => h.push_str(&format!("X-Linked-Etag: \"{e}\"\r\n")),
                    None => {}
                }
                h.push_str("\r\n");
                let _ = sock.write_all(h.as_bytes()).await;
                let end = if n < breaks { from + (total - from) / 2 } else { total };
                let _ = sock.write_all(&body[from..end]).await;
                let _ = sock.flush().await;
            });
        }
    });
    Server { url, requests }
}

/// A small "model": a GGUF header and filler.
fn model_bytes() -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(1u64.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend((0..300_000u32).map(|i| (i % 251) as u8));
    b
}

fn sha(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x");
    std::fs::write(&p, bytes).unwrap();
    sha256_file(&p).unwrap()
}

#[derive(Default)]
struct Seen {
    starts: Vec<(Option<u64>, u64)>,
    bytes: u64,
    verified: bool,
}

impl Progress for Seen {
    fn start(&mut self, total: Option<u64>, resumed: u64) {
        self.starts.push((total, resumed));
    }
    fn advance(&mut self, bytes: u64) {
        self.bytes += bytes;
    }
    fn verifying(&mut self) {
        self.verified = true;
    }
}

fn spec(url: &str, sha256: Option<String>) -> PullSpec {
    PullSpec { name: "tiny".into(), url: url.into(), file: "tiny.gguf".into(), sha256 }
}

fn client() -> reqwest::Client {
    octo_provider::build_download_client().unwrap()
}

#[tokio::test]
async fn a_broken_download_resumes_and_is_checked() {
    let body = model_bytes();
    let server = serve(body.clone(), 1, Some(sha(&body))).await;
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Seen::default();
    let err = pull(&client(), &spec(&server.url, None), dir.path(), &mut seen).await.unwrap_err();
    assert!(err.to_string().contains("run the same command again to resume"), "{err}");
    let part = partial_path(dir.path(), "tiny.gguf");
    let half = std::fs::metadata(&part).unwrap().len();
    assert!(half > 0 && half < body.len() as u64);
    assert!(!dir.path().join("tiny.gguf").exists());
    let mut seen = Seen::default();
    let path = pull(&client(), &spec(&server.url, None), dir.path(), &mut seen).await.unwrap();
    assert_eq!(seen.starts, vec![(Some(body.len() as u64), half)], "resumed where it stopped");
    assert_eq!(seen.bytes, body.len() as u64 - half);
    assert!(seen.verified);
    assert_eq!(std::fs::read(&path).unwrap(), body);
    assert!(!part.exists());
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
    let listed = octo_provider_local::models::list(dir.path());
    assert_eq!(listed[0].sha256.as_deref(), Some(sha(&body).as_str()));
}

#[tokio::test]
async fn a_wrong_hash_is_deleted_never_kept() {
    let body = model_bytes();
    let server = serve(body.clone(), 0, None).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = "0".repeat(64);
    let err = pull(&client(), &spec(&server.url, Some(wrong.clone())), dir.path(), &mut Seen::default())
        .await
        .unwrap_err();
    assert!(matches!(err, LocalError::Hash { .. }), "{err}");
    assert!(err.to_string().contains("deleted"));
    assert!(!dir.path().join("tiny.gguf").exists());
    assert!(!partial_path(dir.path(), "tiny.gguf").exists());
    // The server's announced hash counts too.
    let lying = serve(body.clone(), 0, Some("1".repeat(64))).await;
    let err = pull(&client(), &spec(&lying.url, None), dir.path(), &mut Seen::default()).await.unwrap_err();
    assert!(matches!(err, LocalError::Hash { .. }), "{err}");
    // The right one is kept.
    let path = pull(&client(), &spec(&server.url, Some(sha(&body))), dir.path(), &mut Seen::default())
        .await
        .unwrap();
    assert!(path.is_file());
}

#[tokio::test]
async fn a_download_that_is_not_a_model_is_refused() {
    let server = serve(b"<html>not found</html> padding padding".to_vec(), 0, None).await;
    let dir = tempfile::tempdir().unwrap();
    let err = pull(&client(), &spec(&server.url, None), dir.path(), &mut Seen::default()).await.unwrap_err();
    assert!(matches!(err, LocalError::NotGguf { .. }), "{err}");
    assert!(!dir.path().join("tiny.gguf").exists());
}

#[tokio::test]
async fn the_hash_on_the_hubs_redirect_is_checked_and_a_cut_download_resumes_through_it() {
    let body = model_bytes();
    let server = serve_as(body.clone(), 1, Some(sha(&body)), true).await;
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Seen::default();
    let err = pull(&client(), &spec(&server.url, None), dir.path(), &mut seen).await.unwrap_err();
    assert!(err.to_string().contains("resume"), "{err}");
    // The second try goes through the redirect again, with the range, and is verified against
    // the hub's hash (the storage server's own etag is another value).
    let path = pull(&client(), &spec(&server.url, None), dir.path(), &mut seen).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), body);
    let total = body.len() as u64;
    assert_eq!(seen.starts[1].0, Some(total), "{:?}", seen.starts);
    assert!(seen.starts[1].1 > 0, "resumed: {:?}", seen.starts);
    // A hub announcing another hash: the file is deleted.
    let lying = serve_as(body.clone(), 0, Some("ab".repeat(32)), true).await;
    let other = tempfile::tempdir().unwrap();
    let err = pull(&client(), &spec(&lying.url, None), other.path(), &mut Seen::default()).await.unwrap_err();
    assert!(matches!(err, LocalError::Hash { .. }), "{err}");
    assert!(!other.path().join("tiny.gguf").exists() && !partial_path(other.path(), "tiny.gguf").exists());
}

#[tokio::test]
async fn an_unreachable_server_is_named_once_with_the_cause() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}/m/tiny.gguf");
    let dir = tempfile::tempdir().unwrap();
    let err =
        pull(&client(), &spec(&url, None), dir.path(), &mut Seen::default()).await.unwrap_err().to_string();
    assert!(err.contains(&addr.to_string()) && err.to_lowercase().contains("refused"), "{err}");
    assert_eq!(err.matches(&addr.to_string()).count(), 1, "{err}");
}

#[tokio::test]
async fn a_gguf_file_on_this_machine_is_imported_and_anything_else_refused() {
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("mine.gguf");
    std::fs::write(&file, model_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = octo_provider_local::pull::spec(file.to_str().unwrap()).unwrap();
    assert!(s.url.starts_with("file://") && s.file == "mine.gguf", "{s:?}");
    let path = pull(&client(), &s, dir.path(), &mut Seen::default()).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), model_bytes());
    assert!(file.is_file(), "the original stays");
    let fake = src.path().join("fake.gguf");
    std::fs::write(&fake, b"not a model at all, just text").unwrap();
    let s = octo_provider_local::pull::spec(fake.to_str().unwrap()).unwrap();
    assert!(pull(&client(), &s, dir.path(), &mut Seen::default()).await.is_err());
    assert!(!dir.path().join("fake.gguf").exists());
}
