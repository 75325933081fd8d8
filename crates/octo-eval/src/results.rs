//! The results file: JSON Lines, a header naming the suite and the agent, then one record per
//! task as it finishes (appended and flushed, so an interrupted run keeps what it did). `--resume`
//! reads it back: tasks with a record are done unless it is an error (an endpoint that failed, a
//! crash), which is run again; the last record of a task counts.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `run`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The suite's fingerprint ([`crate::suite::Suite::fingerprint`]).
    pub suite_id: String,
    /// Where the suite was.
    pub suite: String,
    /// Who was scored (`octo mock:claude-sonnet-4-5`, `cmd: claude -p …`).
    pub agent: String,
    /// Attempts per task.
    pub attempts: u32,
    /// Seconds since 1970 when the run started.
    pub started: u64,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Whether the hidden tests passed after it.
    pub passed: bool,
    /// How the verify command ended.
    pub verify: String,
    /// The end of the verify output (what a next attempt is shown).
    pub output_tail: String,
}

/// One task's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Always `task`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The task's id.
    pub task: String,
    /// Its language.
    pub language: String,
    /// Each attempt made, in order.
    pub attempts: Vec<Attempt>,
    /// Passed in some attempt.
    pub passed: bool,
    /// Model requests (octo only).
    pub turns: Option<u32>,
    /// Tool calls (octo only).
    pub tool_calls: Option<u32>,
    /// Input tokens, cache reads not included (octo only).
    pub tokens_in: Option<u64>,
    /// Output tokens (octo only).
    pub tokens_out: Option<u64>,
    /// Input tokens read from the cache (octo only).
    pub tokens_cached: Option<u64>,
    /// USD, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// Seconds from start to score.
    pub wall_secs: f64,
    /// Why the task could not be scored (`endpoint`, `agent`, `setup`): such a task is neither
    /// passed nor failed, and `--resume` runs it again.
    pub error_kind: Option<String>,
    /// The error's message.
    pub error: Option<String>,
}

impl Record {
    /// The attempt it passed in (1-based).
    pub fn passed_in(&self) -> Option<usize> {
        self.attempts.iter().position(|a| a.passed).map(|i| i + 1)
    }
}

/// Why a results file is no use.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// It cannot be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not a header or a record.
    #[error("{}:{line}: not a results line ({why})", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Its line number.
        line: usize,
        /// serde's words.
        why: String,
    },
    /// No header.
    #[error("{} has no header line; it is not an octo-eval results file", .0.display())]
    NoHeader(PathBuf),
    /// The file is another suite's.
    #[error("{} holds results of another suite ({theirs}, this one is {ours}); give --out a new file instead of --resume", .path.display())]
    OtherSuite {
        /// The file.
        path: PathBuf,
        /// Its suite's fingerprint.
        theirs: String,
        /// This suite's.
        ours: String,
    },
}

/// A results file read back.
#[derive(Debug, Clone)]
pub struct Results {
    /// Its header.
    pub header: Header,
    /// The last record of each task, by id.
    pub records: BTreeMap<String, Record>,
}

impl Results {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self, ResultsError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ResultsError::Io { path: path.to_path_buf(), source })?;
        let mut header = None;
        let mut records = BTreeMap::new();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let parse = |why: serde_json::Error| ResultsError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                why: why.to_string(),
            };
            if header.is_none() {
                header = Some(serde_json::from_str::<Header>(line).map_err(parse)?);
                continue;
            }
            let r: Record = serde_json::from_str(line).map_err(parse)?;
            records.insert(r.task.clone(), r);
        }
        let header = header.ok_or_else(|| ResultsError::NoHeader(path.to_path_buf()))?;
        Ok(Self { header, records })
    }

    /// Tasks that need no new run: a record without an error.
    pub fn done(&self) -> impl Iterator<Item = &str> {
        self.records.values().filter(|r| r.error_kind.is_none()).map(|r| r.task.as_str())
    }
}

/// A results file being written.
#[derive(Debug)]
pub struct Writer {
    path: PathBuf,
    file: std::fs::File,
}

impl Writer {
    /// Starts `path` anew with `header` (refusing to overwrite a file that exists).
    pub fn create(path: &Path, header: &Header) -> Result<Self, ResultsError> {
        let io = |source| ResultsError::Io { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(io)?;
        let mut w = Self { path: path.to_path_buf(), file };
        w.line(&serde_json::to_string(header).unwrap_or_default())?;
        Ok(w)
    }

    /// Appends to `path`, whose header must name `suite_id`.
    pub fn resume(path: &Path, suite_id: &str) -> Result<(Self, Results), ResultsError> {
        let read = Results::read(path)?;
        if read.header.suite_id != suite_id {
            return Err(ResultsError::OtherSuite {
                path: path.to_path_buf(),
                theirs: read.header.suite_id,
                ours: suite_id.to_owned(),
            });
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| ResultsError::Io { path: path.to_path_buf(), source })?;
        Ok((Self { path: path.to_path_buf(), file }, read))
    }

    /// Appends `record`.
    pub fn record(&mut self, record: &Record) -> Result<(), ResultsError> {
        self.line(&serde_json::to_string(record).unwrap_or_default())
    }

    fn line(&mut self, line: &str) -> Result<(), ResultsError> {
        let io = |source| ResultsError::Io { path: self.path.clone(), source };
        writeln!(self.file, "{line}").map_err(io)?;
        self.file.sync_data().map_err(|source| ResultsError::Io { path: self.path.clone(), source })
    }
}
