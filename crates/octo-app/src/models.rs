//! `octo models`: the local models in `~/.octo/models` — list, pull (resumable, hash-checked),
//! remove — and the short list of recommended ones. Only in builds with the `local` feature.

use crate::home::Home;
use std::path::{Path, PathBuf};

pub use octo_provider_local::models::{default_choice, recommended, Installed, Recommended, RECOMMENDED};
pub use octo_provider_local::pull::{Progress, PullSpec, Quiet};

/// Where local models are kept.
pub fn dir(home: &Home) -> PathBuf {
    home.root().join("models")
}

/// The installed models.
pub fn list(home: &Home) -> Vec<Installed> {
    octo_provider_local::models::list(&dir(home))
}

/// Why a model could not be named, pulled, removed or checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The local engine said why (an unknown name, a download or hash failure, a file that is no
    /// GGUF).
    #[error(transparent)]
    Local(#[from] octo_provider_local::LocalError),
    /// `--sha256` is not a SHA-256.
    #[error("`{0}` is not a SHA-256 (64 hex digits)")]
    BadHash(String),
    /// The HTTP client for the download could not be set up.
    #[error(transparent)]
    Client(#[from] octo_provider::SetupError),
}

/// What `name_or_url` would download, with `sha256` (when given) as the hash it must have.
pub fn spec(name_or_url: &str, sha256: Option<&str>) -> Result<PullSpec, ModelError> {
    let mut s = octo_provider_local::pull::spec(name_or_url)?;
    if let Some(h) = sha256 {
        let h = h.trim().to_ascii_lowercase();
        if h.len() != 64 || !h.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(ModelError::BadHash(h));
        }
        s.sha256 = Some(h);
    }
    Ok(s)
}

/// Downloads `spec` into the models folder (resuming a partial download); the verified file.
pub async fn pull(home: &Home, spec: &PullSpec, progress: &mut dyn Progress) -> Result<PathBuf, ModelError> {
    let client = octo_provider::build_download_client()?;
    Ok(octo_provider_local::pull::pull(&client, spec, &dir(home), progress).await?)
}

/// Deletes the installed model `name`; the file removed.
pub fn remove(home: &Home, name: &str) -> Result<PathBuf, ModelError> {
    Ok(octo_provider_local::models::remove(&dir(home), name)?)
}

/// Whether `path` is a usable GGUF file (for `octo doctor`).
pub fn check(path: &Path) -> Result<(), ModelError> {
    Ok(octo_provider_local::check_gguf(path)?)
}

/// The name of the engine program that runs local models (`octo-engine`, beside `octo`).
pub(crate) const ENGINE_PROGRAM: &str = "octo-engine";

/// Where the engine program is: `OCTO_ENGINE` when set, else beside the running binary (or
/// one folder up, where a test binary in `target/<profile>/deps` finds the built one).
pub(crate) fn engine_program() -> PathBuf {
    if let Some(p) = std::env::var_os("OCTO_ENGINE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let name = format!("{ENGINE_PROGRAM}{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().ok();
    let dir = exe.as_deref().and_then(Path::parent).unwrap_or_else(|| Path::new("."));
    let beside = dir.join(&name);
    if !beside.exists() && dir.file_name().is_some_and(|n| n == "deps") {
        if let Some(up) = dir.parent().map(|d| d.join(&name)).filter(|p| p.exists()) {
            return up;
        }
    }
    beside
}

/// The engine program's loop, for its `main` (`octo-engine`): loads the model octo names on
/// stdin and answers its requests. Only in builds with the `engine` feature.
#[cfg(feature = "engine")]
pub fn engine_main() -> std::process::ExitCode {
    octo_provider_local::serve()
}
