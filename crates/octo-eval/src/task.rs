//! A task: what the agent is asked, the files it starts from, the tests it never sees, and the
//! command that says whether it succeeded.
//!
//! octo's own format is a folder with `task.toml`:
//!
//! ```toml
//! prompt = "Fix the failing test in stats.py."   # or prompt_file = "PROMPT.md"
//! language = "python"
//! verify = "python3 -m unittest -q"              # run in a copy with hidden/ laid over it
//! timeout = 60                                   # seconds the verify command may take
//! ```
//!
//! beside `repo/` (the starting files), `hidden/` (tests copied in only to verify) and, for
//! checking the task itself, `solution/` (files that make it pass, laid over `repo/`).

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The verify command's limit when a task names none.
pub const DEFAULT_VERIFY_LIMIT: Duration = Duration::from_secs(120);

/// One task of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Its id in the suite (`python/median`): the folder below the suite's root.
    pub id: String,
    /// The language it is in (`python`, `rust`, …).
    pub language: String,
    /// What the agent is asked.
    pub prompt: String,
    /// The folder whose files the agent starts from.
    pub start: PathBuf,
    /// Files of `start` the agent never sees (the polyglot layout's tests), relative to it.
    pub withheld: Vec<PathBuf>,
    /// Folders laid over the agent's work before verifying: (from, into) relative to the copy.
    pub hidden: Vec<(PathBuf, PathBuf)>,
    /// Files that make the task pass (a reference solution), laid over the start.
    pub solution: Vec<(PathBuf, PathBuf)>,
    /// The verify command (a shell command line run in the verify copy).
    pub verify: String,
    /// How long it may take.
    pub verify_limit: Duration,
    /// Lines of hidden test files that skip tests, turned on before verifying (the polyglot
    /// suite skips all but the first test in some languages).
    pub unskip: Vec<(String, String)>,
}

/// Why a task folder could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not what the format asks.
    #[error("{}: {why}", .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

impl TaskError {
    pub(crate) fn format(path: &Path, why: impl Into<String>) -> Self {
        Self::Format { path: path.to_path_buf(), why: why.into() }
    }
}

pub(crate) fn read(path: &Path) -> Result<String, TaskError> {
    std::fs::read_to_string(path).map_err(|source| TaskError::Read { path: path.to_path_buf(), source })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskToml {
    prompt: Option<String>,
    prompt_file: Option<String>,
    language: Option<String>,
    verify: String,
    timeout: Option<f64>,
}

/// Reads the octo-format task in `dir` (which holds `task.toml`), named `id`.
pub fn load_octo(dir: &Path, id: &str) -> Result<Task, TaskError> {
    let file = dir.join("task.toml");
    let spec: TaskToml =
        toml::from_str(&read(&file)?).map_err(|e| TaskError::format(&file, e.to_string()))?;
    let prompt = match (spec.prompt, spec.prompt_file) {
        (Some(p), None) => p,
        (None, Some(f)) => read(&dir.join(f))?,
        _ => return Err(TaskError::format(&file, "give exactly one of `prompt` and `prompt_file`")),
    };
    if prompt.trim().is_empty() {
        return Err(TaskError::format(&file, "the prompt is empty"));
    }
    if spec.verify.trim().is_empty() {
        return Err(TaskError::format(&file, "`verify` is empty"));
    }
    let start = dir.join("repo");
    if !start.is_dir() {
        return Err(TaskError::format(&file, "the task has no repo/ folder to start from"));
    }
    let verify_limit = match spec.timeout {
        None => DEFAULT_VERIFY_LIMIT,
        Some(t) if t > 0.0 && t <= 86_400.0 => Duration::from_secs_f64(t),
        Some(t) => {
            return Err(TaskError::format(&file, format!("`timeout = {t}` is not 0 < seconds <= 86400")))
        }
    };
    let overlay = |name: &str| {
        let d = dir.join(name);
        if d.is_dir() {
            vec![(d, PathBuf::new())]
        } else {
            Vec::new()
        }
    };
    Ok(Task {
        id: id.to_owned(),
        language: spec.language.unwrap_or_else(|| "other".into()),
        prompt,
        start,
        withheld: Vec::new(),
        hidden: overlay("hidden"),
        solution: overlay("solution"),
        verify: spec.verify,
        verify_limit,
        unskip: Vec::new(),
    })
}
