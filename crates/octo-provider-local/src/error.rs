//! What can go wrong with a local model.

use std::path::PathBuf;

/// A local model that cannot be used, or a download that failed.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The file is missing or unreadable.
    #[error("cannot read the model {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a GGUF model.
    #[error("{path} is not a GGUF model ({why}); local models are GGUF files, such as those `octo models pull` downloads")]
    NotGguf {
        /// The file.
        path: PathBuf,
        /// What was found.
        why: String,
    },
    /// llama.cpp could not load it.
    #[error("llama.cpp could not load {path}: it may be truncated (an interrupted download? pull it again) or of an architecture this build does not know")]
    Load {
        /// The file.
        path: PathBuf,
    },
    /// The engine program could not load the model (in its own words).
    #[error("{0}")]
    Reported(String),
    /// The llama.cpp back end failed.
    #[error("the local model engine failed: {0}")]
    Engine(String),
    /// No model of this name is installed.
    #[error("no local model `{name}` in {dir}. {hint}")]
    NotInstalled {
        /// The name asked for.
        name: String,
        /// Where models are kept.
        dir: PathBuf,
        /// What to do.
        hint: String,
    },
    /// A download failed.
    #[error("download failed: {0}")]
    Download(String),
    /// A download did not match its SHA-256.
    #[error("the download of {name} does not match its SHA-256 (expected {expected}, got {actual}); the file was deleted")]
    Hash {
        /// The model.
        name: String,
        /// The hash it should have.
        expected: String,
        /// The hash it had.
        actual: String,
    },
    /// Writing a model file failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}
