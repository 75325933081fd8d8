//! Talking to a model hub: its address (`HF_ENDPOINT`, Hugging Face's variable for mirrors),
//! redirects followed one by one so that what the hub says about the file on its redirect —
//! `X-Linked-Etag` (the SHA-256 of an LFS file) and `X-Linked-Size` — is kept, though the
//! storage server answering in the end reports an etag of its own; and errors that name their
//! cause once.

use crate::LocalError;
use reqwest::header::{HeaderMap, LOCATION, RANGE};

/// The hub's address: `HF_ENDPOINT` when set, else `https://huggingface.co`.
pub fn endpoint() -> String {
    endpoint_from(std::env::var("HF_ENDPOINT").ok())
}

/// The hub's address given `HF_ENDPOINT`'s value: an `http(s)://` URL without its trailing
/// slash, else Hugging Face.
fn endpoint_from(var: Option<String>) -> String {
    var.map(|e| e.trim().trim_end_matches('/').to_owned())
        .filter(|e| e.starts_with("https://") || e.starts_with("http://"))
        .unwrap_or_else(|| "https://huggingface.co".to_owned())
}

/// The answer that carries the file, and what was announced about it on the way.
pub(crate) struct Answer {
    pub resp: reqwest::Response,
    /// The SHA-256 announced: `X-Linked-Etag` of a redirect (or of the answer), else, when no
    /// redirect was followed, an `ETag` of 64 hex digits.
    pub sha256: Option<String>,
    /// The whole file's size as the hub announced it (`X-Linked-Size`).
    pub size: Option<u64>,
}

/// Most redirects followed for one download.
const MAX_REDIRECTS: usize = 10;

/// GETs `url` from byte `from` on, following redirects by hand (the client must not follow
/// them itself) with the range on every hop.
pub(crate) async fn get(client: &reqwest::Client, url: &str, from: u64) -> Result<Answer, LocalError> {
    let mut at = reqwest::Url::parse(url)
        .map_err(|e| LocalError::Download(format!("`{url}` is not an address: {e}")))?;
    let (mut sha256, mut size, mut redirected) = (None, None, false);
    for _ in 0..=MAX_REDIRECTS {
        let mut req = client.get(at.clone());
        if from > 0 {
            req = req.header(RANGE, format!("bytes={from}-"));
        }
        let resp = req.send().await.map_err(|e| cause(&at, &e))?;
        let headers = resp.headers();
        sha256 = sha256.or_else(|| linked_sha256(headers));
        size = size.or_else(|| linked_size(headers));
        if !resp.status().is_redirection() {
            if !redirected {
                sha256 = sha256.or_else(|| hex64(headers.get("etag")?.to_str().ok()?));
            }
            return Ok(Answer { resp, sha256, size });
        }
        let next =
            headers.get(LOCATION).and_then(|l| l.to_str().ok()).and_then(|l| at.join(l).ok()).ok_or_else(
                || LocalError::Download(format!("{} redirected without a usable Location", host(&at))),
            )?;
        if at.scheme() == "https" && next.scheme() != "https" {
            return Err(LocalError::Download(format!(
                "{} redirected from https to {}; refused",
                host(&at),
                next.scheme()
            )));
        }
        at = next;
        redirected = true;
    }
    Err(LocalError::Download(format!("more than {MAX_REDIRECTS} redirects from {url}")))
}

/// `X-Linked-Etag` when it is a SHA-256.
fn linked_sha256(headers: &HeaderMap) -> Option<String> {
    hex64(headers.get("x-linked-etag")?.to_str().ok()?)
}

fn linked_size(headers: &HeaderMap) -> Option<u64> {
    headers.get("x-linked-size")?.to_str().ok()?.trim().parse().ok()
}

/// A quoted or weak etag's value when it is 64 hex digits, lowercased.
fn hex64(value: &str) -> Option<String> {
    let v = value.trim().trim_start_matches("W/").trim_matches('"');
    (v.len() == 64 && v.chars().all(|c| c.is_ascii_hexdigit())).then(|| v.to_ascii_lowercase())
}

fn host(url: &reqwest::Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        _ => url.to_string(),
    }
}

/// What went wrong reaching `url`, said once: the host and the innermost cause (the name lookup,
/// a refused connection, the TLS handshake, a timeout).
pub(crate) fn cause(url: &reqwest::Url, e: &reqwest::Error) -> LocalError {
    let mut inner: &dyn std::error::Error = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    let what = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        format!("could not connect: {inner}")
    } else {
        inner.to_string()
    };
    LocalError::Download(format!("{}: {what}", host(url)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announced_hashes_and_sizes_are_read_as_the_hub_writes_them() {
        let mut h = HeaderMap::new();
        let hex = "AB".repeat(32);
        h.insert("x-linked-etag", format!("\"{hex}\"").parse().unwrap());
        h.insert("x-linked-size", "1234".parse().unwrap());
        assert_eq!(linked_sha256(&h), Some(hex.to_ascii_lowercase()));
        assert_eq!(linked_size(&h), Some(1234));
        assert_eq!(hex64("W/\"123-abc\""), None);
    }

    #[test]
    fn hf_endpoint_names_a_mirror() {
        // The variable is read each time; without it the hub is Hugging Face.
        if std::env::var_os("HF_ENDPOINT").is_none() {
            assert_eq!(endpoint(), "https://huggingface.co");
        }
        assert_eq!(endpoint_from(Some("https://hf-mirror.com/ ".into())), "https://hf-mirror.com");
        assert_eq!(endpoint_from(Some("http://10.0.0.5:8080/".into())), "http://10.0.0.5:8080");
        assert_eq!(endpoint_from(Some("hf-mirror.com".into())), "https://huggingface.co", "not a URL");
        assert_eq!(endpoint_from(None), "https://huggingface.co");
    }
}
