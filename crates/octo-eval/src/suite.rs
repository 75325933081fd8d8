//! A suite: the tasks below a folder, in octo's format (`task.toml`) or Aider's polyglot layout
//! (`.meta/config.json`), found by walking it. A task folder that cannot be read is skipped and
//! named, never fatal for the rest.

use crate::task::{Task, TaskError};
use std::path::{Path, PathBuf};

/// The tasks found, and those skipped with why.
#[derive(Debug)]
pub struct Suite {
    /// The folder.
    pub root: PathBuf,
    /// Its tasks, by id.
    pub tasks: Vec<Task>,
    /// (id, why) of folders that look like tasks but cannot be read.
    pub skipped: Vec<(String, String)>,
}

/// Why there is no suite.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The folder cannot be read.
    #[error("cannot read the suite {}: {source}", .path.display())]
    Read {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Nothing there is a task.
    #[error("no tasks in {} (a task is a folder with task.toml, or a polyglot exercise with .meta/config.json)", .0.display())]
    Empty(PathBuf),
}

/// Folders never walked into.
fn skip_dir(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "node_modules" | "target" | "build" | "__pycache__")
}

impl Suite {
    /// Reads the suite at `root`.
    pub fn load(root: &Path) -> Result<Self, SuiteError> {
        let root = std::fs::canonicalize(root)
            .map_err(|source| SuiteError::Read { path: root.to_path_buf(), source })?;
        let mut suite = Self { root: root.clone(), tasks: Vec::new(), skipped: Vec::new() };
        suite.walk(&root, 0).map_err(|source| SuiteError::Read { path: root.clone(), source })?;
        if suite.tasks.is_empty() && suite.skipped.is_empty() {
            return Err(SuiteError::Empty(root));
        }
        suite.tasks.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(suite)
    }

    fn walk(&mut self, dir: &Path, depth: usize) -> std::io::Result<()> {
        let id = dir.strip_prefix(&self.root).unwrap_or(dir).to_string_lossy().replace('\\', "/");
        let id = if id.is_empty() { ".".to_owned() } else { id };
        let loaded: Option<Result<Task, TaskError>> = if dir.join("task.toml").is_file() {
            Some(crate::task::load_octo(dir, &id))
        } else if crate::polyglot::is_exercise(dir) {
            Some(crate::polyglot::load(dir, &id))
        } else {
            None
        };
        match loaded {
            Some(Ok(t)) => self.tasks.push(t),
            Some(Err(e)) => self.skipped.push((id, e.to_string())),
            None if depth < 6 => {
                let mut entries: Vec<_> = std::fs::read_dir(dir)?.flatten().collect();
                entries.sort_by_key(std::fs::DirEntry::file_name);
                for e in entries {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if e.file_type().is_ok_and(|t| t.is_dir()) && !skip_dir(&name) {
                        self.walk(&e.path(), depth + 1)?;
                    }
                }
            }
            None => {}
        }
        Ok(())
    }

    /// A fingerprint of which tasks the suite holds (not where it is): a results file belongs
    /// to the suite with the same one.
    pub fn fingerprint(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for t in &self.tasks {
            for b in t.id.bytes().chain(std::iter::once(0)) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{h:016x}")
    }

    /// Keeps the tasks whose id contains one of `patterns` (all when there are none).
    pub fn only(&mut self, patterns: &[String]) {
        if !patterns.is_empty() {
            self.tasks.retain(|t| patterns.iter().any(|p| t.id.contains(p.as_str())));
        }
    }
}
