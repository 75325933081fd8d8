//! `octo models`: the local models in `~/.octo/models` — list, pull (resumable, hash-checked),
//! remove — and the short list of recommended ones. Only in builds with the `local` feature.

use crate::home::Home;
use std::path::{Path, PathBuf};

pub use octo_provider_local::models::{Installed, Recommended, RECOMMENDED};
pub use octo_provider_local::pull::{Progress, PullSpec, Quiet};

/// Where local models are kept.
pub fn dir(home: &Home) -> PathBuf {
    home.root().join("models")
}

/// The installed models.
pub fn list(home: &Home) -> Vec<Installed> {
    octo_provider_local::models::list(&dir(home))
}

/// What `name_or_url` would download, with `sha256` (when given) as the hash it must have.
pub fn spec(name_or_url: &str, sha256: Option<&str>) -> Result<PullSpec, String> {
    let mut s = octo_provider_local::pull::spec(name_or_url).map_err(|e| e.to_string())?;
    if let Some(h) = sha256 {
        let h = h.trim().to_ascii_lowercase();
        if h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("`{h}` is not a SHA-256 (64 hex digits)"));
        }
        s.sha256 = Some(h);
    }
    Ok(s)
}

/// Downloads `spec` into the models folder (resuming a partial download); the verified file.
pub async fn pull(home: &Home, spec: &PullSpec, progress: &mut dyn Progress) -> Result<PathBuf, String> {
    let client =
        octo_provider::build_client(&octo_provider::HttpConfig::default()).map_err(|e| e.to_string())?;
    octo_provider_local::pull::pull(&client, spec, &dir(home), progress).await.map_err(|e| e.to_string())
}

/// Deletes the installed model `name`; the file removed.
pub fn remove(home: &Home, name: &str) -> Result<PathBuf, String> {
    octo_provider_local::models::remove(&dir(home), name).map_err(|e| e.to_string())
}

/// Whether `path` is a usable GGUF file (for `octo doctor`).
pub fn check(path: &Path) -> Result<(), String> {
    octo_provider_local::check_gguf(path).map_err(|e| e.to_string())
}
