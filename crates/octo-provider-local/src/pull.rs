//! Downloading a model: resumable (an interrupted download continues where it stopped), checked
//! against a SHA-256 (octo's, the caller's, or the one Hugging Face announces for the file), and
//! written under a temporary name until it is whole and verified. A file that fails the check is
//! deleted, never used.

use crate::LocalError;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// What to download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullSpec {
    /// The name it is known by (the recommended name, or the file name).
    pub name: String,
    /// The address.
    pub url: String,
    /// The file name in the models folder.
    pub file: String,
    /// The SHA-256 it must have, when known before the download.
    pub sha256: Option<String>,
}

/// What `name_or_url` asks for: a recommended name, a `.gguf` file on this machine (imported), an
/// `https://` address, or `owner/repo/file.gguf` on Hugging Face (or the mirror `HF_ENDPOINT`
/// names).
pub fn spec(name_or_url: &str) -> Result<PullSpec, LocalError> {
    let s = name_or_url.trim();
    if let Some(r) = crate::models::recommended(s) {
        return Ok(PullSpec {
            name: r.name.into(),
            url: r.url(),
            file: r.file.into(),
            sha256: r.sha256.map(str::to_owned),
        });
    }
    let bad = |why: &str| {
        LocalError::Download(format!("`{s}` {why}; give a model name (`octo models list --available`), an https:// URL of a .gguf file, or owner/repo/file.gguf on Hugging Face"))
    };
    let local = Path::new(s);
    if local.extension().is_some_and(|e| e == "gguf") && local.is_file() {
        let abs = std::fs::canonicalize(local).map_err(|e| LocalError::Download(format!("`{s}`: {e}")))?;
        let file = abs.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        return Ok(PullSpec {
            name: file.trim_end_matches(".gguf").into(),
            url: format!("file://{}", abs.display()),
            file,
            sha256: None,
        });
    }
    if s.starts_with("https://") || s.starts_with("http://") {
        let file = s.split(['?', '#']).next().unwrap_or(s).rsplit('/').next().unwrap_or("").to_owned();
        if !file.ends_with(".gguf") {
            return Err(bad("does not name a .gguf file"));
        }
        return Ok(PullSpec {
            name: file.trim_end_matches(".gguf").into(),
            url: s.into(),
            file,
            sha256: None,
        });
    }
    let parts: Vec<&str> = s.split('/').collect();
    if parts.len() >= 3 && s.ends_with(".gguf") && parts.iter().all(|p| !p.is_empty() && *p != "..") {
        let file = parts[parts.len() - 1].to_owned();
        let url = format!(
            "{}/{}/{}/resolve/main/{}",
            crate::hub::endpoint(),
            parts[0],
            parts[1],
            parts[2..].join("/")
        );
        return Ok(PullSpec { name: file.trim_end_matches(".gguf").into(), url, file, sha256: None });
    }
    Err(bad("is not a known model"))
}

/// What a download reports as it goes.
pub trait Progress: Send {
    /// The download starts: its total size when known, and how much an earlier attempt left.
    fn start(&mut self, total: Option<u64>, resumed: u64);
    /// `bytes` more arrived.
    fn advance(&mut self, bytes: u64);
    /// The hash is being checked.
    fn verifying(&mut self) {}
}

/// No progress display.
#[derive(Debug, Default)]
pub struct Quiet;

impl Progress for Quiet {
    fn start(&mut self, _: Option<u64>, _: u64) {}
    fn advance(&mut self, _: u64) {}
}

/// The partial file of a download of `file` into `dir`.
pub fn partial_path(dir: &Path, file: &str) -> PathBuf {
    dir.join(format!("{file}.part"))
}

/// Downloads `spec` into `dir` (resuming a partial download); the verified file.
pub async fn pull(
    client: &reqwest::Client,
    spec: &PullSpec,
    dir: &Path,
    progress: &mut dyn Progress,
) -> Result<PathBuf, LocalError> {
    let write = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LocalError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(write(dir))?;
    let target = dir.join(&spec.file);
    let part = partial_path(dir, &spec.file);
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    if let Some(local) = spec.url.strip_prefix("file://") {
        return import(Path::new(local), spec, &part, &target, progress);
    }
    let crate::hub::Answer { mut resp, sha256: announced, size: announced_size } =
        crate::hub::get(client, &spec.url, have).await?;
    let status = resp.status();
    let resumed = if status == reqwest::StatusCode::PARTIAL_CONTENT {
        have
    } else if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
        // The partial file is already whole: only the check is left.
        have
    } else if status.is_success() {
        0
    } else {
        return Err(LocalError::Download(format!("the server answered {status} for {}", spec.url)));
    };
    let expected = spec.sha256.clone().or(announced).map(|h| h.to_ascii_lowercase());
    let total = match status {
        reqwest::StatusCode::RANGE_NOT_SATISFIABLE => Some(announced_size.unwrap_or(have)),
        _ => announced_size.or_else(|| resp.content_length().map(|l| l + resumed)),
    };
    progress.start(total, resumed);
    if status != reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(resumed > 0)
            .truncate(resumed == 0)
            .open(&part)
            .map_err(write(&part))?;
        loop {
            match resp.chunk().await {
                Ok(Some(bytes)) => {
                    file.write_all(&bytes).map_err(write(&part))?;
                    progress.advance(bytes.len() as u64);
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = file.flush();
                    return Err(LocalError::Download(format!(
                        "the connection broke ({e}); run the same command again to resume"
                    )));
                }
            }
        }
        file.flush().map_err(write(&part))?;
    }
    let size = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    if let Some(t) = total.filter(|t| *t != size) {
        if size > t {
            let _ = std::fs::remove_file(&part);
            return Err(LocalError::Download(format!(
                "got {size} bytes where {t} were announced; the partial file was deleted"
            )));
        }
        return Err(LocalError::Download(format!(
            "got {size} of {t} bytes; run the same command again to resume"
        )));
    }
    finish(spec, &part, &target, expected, progress)
}

/// Checks the whole download (or copy) in `part` against `expected` and as a GGUF file, then
/// moves it to `target` with its hash beside it; a file that fails is deleted.
fn finish(
    spec: &PullSpec,
    part: &Path,
    target: &Path,
    expected: Option<String>,
    progress: &mut dyn Progress,
) -> Result<PathBuf, LocalError> {
    let write = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LocalError::Write { path, source }
    };
    progress.verifying();
    let actual = sha256_file(part).map_err(write(part))?;
    if let Some(expected) = expected.filter(|e| *e != actual) {
        let _ = std::fs::remove_file(part);
        return Err(LocalError::Hash { name: spec.name.clone(), expected, actual });
    }
    crate::check_gguf(part).inspect_err(|_| {
        let _ = std::fs::remove_file(part);
    })?;
    std::fs::rename(part, target).map_err(write(target))?;
    std::fs::write(crate::models::sidecar(target), format!("{actual}\n")).map_err(write(target))?;
    Ok(target.to_path_buf())
}

/// Imports a GGUF file from this machine: checked first (the original is never changed), copied
/// under the partial name, then checked and moved like a download.
fn import(
    from: &Path,
    spec: &PullSpec,
    part: &Path,
    target: &Path,
    progress: &mut dyn Progress,
) -> Result<PathBuf, LocalError> {
    crate::check_gguf(from)?;
    let size = std::fs::metadata(from).map(|m| m.len()).ok();
    progress.start(size, 0);
    let copied =
        std::fs::copy(from, part).map_err(|source| LocalError::Write { path: part.to_path_buf(), source })?;
    progress.advance(copied);
    finish(spec, part, target, spec.sha256.clone(), progress)
}

/// The SHA-256 of a file, in lowercase hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_from_names_urls_and_repositories() {
        let r = spec("smollm2-135m").unwrap();
        assert!(r.url.ends_with("/resolve/main/SmolLM2-135M-Instruct.Q4_1.gguf"));
        let u = spec("https://example.com/m/tiny.gguf?download=1").unwrap();
        assert_eq!((u.file.as_str(), u.name.as_str()), ("tiny.gguf", "tiny"));
        let h = spec("bartowski/Some-GGUF/Some-Q4_K_M.gguf").unwrap();
        assert_eq!(h.url, "https://huggingface.co/bartowski/Some-GGUF/resolve/main/Some-Q4_K_M.gguf");
        assert!(spec("https://example.com/model.bin").is_err());
        assert!(spec("nonsense").unwrap_err().to_string().contains("not a known model"));
        assert!(spec("a/../b.gguf").is_err());
    }
}
