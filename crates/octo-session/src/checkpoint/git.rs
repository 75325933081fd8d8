//! Running the system `git` on the shadow repository: its own `GIT_DIR` and index, the
//! workspace as the work tree, and nothing from the user's or the system's git configuration
//! (no filters, hooks, fsmonitor or attributes that could run code or change bytes).

use super::error::CheckpointError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tree object with no entries.
pub(super) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// How git is run for one shadow repository.
#[derive(Debug, Clone)]
pub(super) struct Git {
    pub git_dir: PathBuf,
    pub work_tree: PathBuf,
}

impl Git {
    /// A git command on the shadow repository with `index` as its index file.
    pub fn command(&self, index: Option<&Path>, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        // Only what git needs to find itself and write its files; nothing of the user's setup.
        c.env_clear();
        for key in ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"] {
            if let Some(v) = std::env::var_os(key) {
                c.env(key, v);
            }
        }
        c.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", null_device())
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", "octo")
            .env("GIT_AUTHOR_EMAIL", "octo@localhost")
            .env("GIT_COMMITTER_NAME", "octo")
            .env("GIT_COMMITTER_EMAIL", "octo@localhost");
        if let Some(index) = index {
            c.env("GIT_INDEX_FILE", index);
        }
        c.args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.symlinks=true",
            "-c",
            "core.quotePath=false",
            "-c",
            "safe.directory=*",
            "-c",
            "core.logAllRefUpdates=false",
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
        ]);
        c.args(args)
            .current_dir(&self.work_tree)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs git and returns its standard output; `input` is written to its standard input.
    pub fn run(
        &self,
        index: Option<&Path>,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut c = self.command(index, args);
        if input.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CheckpointError::NoGit,
            _ => CheckpointError::Git { args: args.join(" "), reason: e.to_string() },
        })?;
        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            // A writer thread, so a large input and a large output cannot block each other.
            let bytes = bytes.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        let out = child
            .wait_with_output()
            .map_err(|e| CheckpointError::Git { args: args.join(" "), reason: e.to_string() })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let reason =
                stderr.lines().filter(|l| !l.trim().is_empty()).take(3).collect::<Vec<_>>().join("; ");
            return Err(CheckpointError::Git {
                args: args.join(" "),
                reason: if reason.is_empty() { out.status.to_string() } else { reason },
            });
        }
        Ok(out.stdout)
    }

    /// Creates the repository.
    pub fn init(&self) -> Result<(), CheckpointError> {
        // Everything git writes in the store is the user's alone (0600 files, 0700 folders).
        let mut c = self.command(None, &["init", "--quiet", "--bare", "--shared=0600"]);
        c.env_remove("GIT_WORK_TREE").env_remove("GIT_DIR").arg(&self.git_dir);
        let out = c.output().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CheckpointError::NoGit,
            _ => CheckpointError::Git { args: "init".into(), reason: e.to_string() },
        })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(CheckpointError::Git {
                args: "init".into(),
                reason: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }

    /// Runs git and returns its output as trimmed text.
    pub fn text(
        &self,
        index: Option<&Path>,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<String, CheckpointError> {
        let out = self.run(index, args, input)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }
}

/// Splits NUL-separated output into paths.
pub(super) fn nul_list(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// Joins paths NUL-separated, for `--stdin -z` and `--pathspec-file-nul`.
pub(super) fn nul_join<'a>(paths: impl IntoIterator<Item = &'a String>) -> Vec<u8> {
    let mut out = Vec::new();
    for p in paths {
        out.extend_from_slice(p.as_bytes());
        out.push(0);
    }
    out
}

fn null_device() -> &'static str {
    if cfg!(windows) {
        "NUL"
    } else {
        "/dev/null"
    }
}
