//! The llama.cpp back end and the loaded models: each initialised once per process and kept
//! for its lifetime (a model is memory-mapped, so keeping it costs address space, not memory).

use crate::LocalError;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The back end, initialised on first use with llama.cpp's own logging silenced (it would write
/// over the terminal).
pub fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            LlamaBackend::init()
                .map(|mut b| {
                    b.void_logs();
                    b
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LocalError::Engine(e.clone()))
}

/// The model at `path`, loaded on first use and shared by every sender of the process.
pub fn model(path: &Path) -> Result<&'static LlamaModel, LocalError> {
    crate::gguf::check_gguf(path)?;
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    static MODELS: OnceLock<Mutex<HashMap<PathBuf, &'static LlamaModel>>> = OnceLock::new();
    let mut models = MODELS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(m) = models.get(&key) {
        return Ok(m);
    }
    let loaded = LlamaModel::load_from_file(backend()?, &key, &LlamaModelParams::default())
        .map_err(|_| LocalError::Load { path: path.to_path_buf() })?;
    // Kept for the process's lifetime: contexts borrow it from worker threads.
    let leaked: &'static LlamaModel = Box::leak(Box::new(loaded));
    models.insert(key, leaked);
    Ok(leaked)
}
