//! Commands running in the background: `terminal` with `run_in_background`, read with
//! `terminal_output`, stopped with `kill_shell`. They, and every process any command of the
//! session started (found by the session's tag, see [`super::reaper`]), are stopped by
//! [`BackgroundShells::stop_all`] when the session ends, or when the registry is dropped.

use crate::error::ToolError;
use octo_exec::{kill_group, spawn, Capture, Ending};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

struct Shell {
    command: String,
    group: u32,
    log: PathBuf,
    read_to: Mutex<u64>,
    ending: Arc<Mutex<Option<Ending>>>,
}

/// The background commands of one session, and the tag every command of the session carries.
pub struct BackgroundShells {
    shells: Mutex<HashMap<String, Arc<Shell>>>,
    next: AtomicU64,
    tag: String,
    /// Whether any command carried the tag (else there is nothing to look for at the end).
    used: std::sync::atomic::AtomicBool,
    /// Counts the session as alive for the reaper.
    _live: super::reaper::SessionGuard,
}

impl Default for BackgroundShells {
    fn default() -> Self {
        Self {
            shells: Mutex::default(),
            next: AtomicU64::new(0),
            tag: super::reaper::new_tag(),
            used: std::sync::atomic::AtomicBool::new(false),
            _live: super::reaper::SessionGuard::new(),
        }
    }
}

impl std::fmt::Debug for BackgroundShells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundShells").field("running", &self.lock().len()).finish()
    }
}

impl BackgroundShells {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Shell>>> {
        self.shells.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The tag a command of the session carries in its environment (asking for it means a
    /// command is about to run, so [`Self::stop_all`] will look for its leftovers).
    pub fn tag(&self) -> &str {
        self.used.store(true, Ordering::Relaxed);
        &self.tag
    }

    /// How many background commands are still running.
    pub fn running(&self) -> usize {
        self.lock()
            .values()
            .filter(|s| s.ending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_none())
            .count()
    }

    /// Stops every background command and every process a command of the session left behind;
    /// returns the background commands that were still running (`id (`command`)`), to be named.
    pub fn stop_all(&self) -> Vec<String> {
        let shells: Vec<(String, Arc<Shell>)> = self.lock().drain().collect();
        let mut named: Vec<(u64, String)> = Vec::new();
        for (id, shell) in shells {
            let running = shell.ending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_none();
            self.stop_group(&shell, running);
            if running {
                let n = id.trim_start_matches("shell-").parse().unwrap_or(u64::MAX);
                named.push((n, format!("{id} (`{}`)", shell.command)));
            }
        }
        if self.used.load(Ordering::Relaxed) {
            super::reaper::kill_tagged(&self.tag);
            super::reaper::reap_soon();
        }
        named.sort();
        named.into_iter().map(|(_, s)| s).collect()
    }

    /// Starts `command`; its output goes to a log file in `log_dir`. Returns the shell's id.
    pub fn start(
        &self,
        command: &str,
        cwd: &Path,
        log_dir: &Path,
        env: &super::env::ShellEnv,
        sandbox: Option<&super::sandbox::Sandbox>,
    ) -> std::io::Result<String> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("shell-{n}");
        crate::private::create_dir(log_dir)?;
        let log = log_dir.join(format!("{}-{id}-{:x}.log", std::process::id(), super::unique()));
        let capture = Capture::to_file(log.clone())?;
        let missing = sandbox.map(super::sandbox::Sandbox::protected_missing).unwrap_or_default();
        let quarantine = sandbox.and_then(|s| s.policy().quarantine.clone());
        let mut running = spawn(command, cwd, capture.clone(), env, self.tag(), sandbox)?;
        let ending = Arc::new(Mutex::new(None));
        let shell = Arc::new(Shell {
            command: command.to_owned(),
            group: running.group,
            log,
            read_to: Mutex::new(0),
            ending: Arc::clone(&ending),
        });
        tokio::spawn(async move {
            let status = running.child.wait().await;
            running.finish_output(std::time::Duration::from_millis(200)).await;
            super::reaper::reap_soon();
            let undone = super::sandbox::undo_created(&missing, quarantine.as_deref());
            if !undone.is_empty() {
                capture.push(format!("\n{}\n", super::undone::note(&undone)).as_bytes());
            }
            drop(capture);
            let end = match status {
                Ok(s) => Ending::from_status(s),
                Err(e) => Ending::Signalled(e.to_string()),
            };
            *ending.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(end);
        });
        self.lock().insert(id.clone(), shell);
        Ok(id)
    }

    /// New output since the last read (at most `max` bytes, the latest kept) and the status.
    pub fn read(&self, id: &str, max: usize) -> Result<String, ToolError> {
        let found = self.lock().get(id).cloned();
        let shell = found.ok_or_else(|| self.unknown(id))?;
        let mut read_to = shell.read_to.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Only the new tail is read from the log, however long the command has been talking.
        let (skipped, shown) = read_tail(&shell.log, &mut read_to, max);
        let shown = shown.as_slice();
        let status = match &*shell.ending.lock().unwrap_or_else(std::sync::PoisonError::into_inner) {
            None => "running".to_owned(),
            Some(e) => format!("finished {}", e.describe()),
        };
        let mut out = format!("{id} (`{}`): {status}\n", shell.command);
        if skipped > 0 {
            out.push_str(&format!(
                "[... {skipped} earlier bytes of new output skipped; all of it is in {}]\n",
                shell.log.display()
            ));
        }
        if shown.is_empty() {
            out.push_str("(no new output)\n");
        } else {
            out.push_str(&String::from_utf8_lossy(shown));
        }
        Ok(out)
    }

    /// Stops a background command and everything it started.
    pub fn kill(&self, id: &str) -> Result<String, ToolError> {
        let removed = self.lock().remove(id);
        let shell = removed.ok_or_else(|| self.unknown(id))?;
        let running = shell.ending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_none();
        self.stop_group(&shell, running);
        super::reaper::reap_soon();
        Ok(format!("{id} (`{}`) stopped; its output is in {}", shell.command, shell.log.display()))
    }

    /// Stops a shell's process group: by its number while the shell runs (the number is still
    /// its own), else only the members that carry the session's tag.
    fn stop_group(&self, shell: &Shell, running: bool) {
        if running {
            kill_group(shell.group, false);
            kill_group(shell.group, true);
        } else {
            super::reaper::kill_group_tagged(shell.group, &self.tag);
        }
    }

    fn unknown(&self, id: &str) -> ToolError {
        let ids: Vec<String> = self.lock().keys().cloned().collect();
        ToolError::NotFound(if ids.is_empty() {
            format!("no background shell `{id}`; none is running")
        } else {
            format!("no background shell `{id}`; running: {}", ids.join(", "))
        })
    }
}

/// The bytes of `log` past `*read_to` (at most the last `max` of them) and how many were skipped;
/// moves `*read_to` to the end.
fn read_tail(log: &std::path::Path, read_to: &mut u64, max: usize) -> (u64, Vec<u8>) {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(log) else { return (0, Vec::new()) };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = (*read_to).min(len);
    let new = len - start;
    let from = len - new.min(max as u64);
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(from)).is_ok() {
        let _ = f.take(len - from).read_to_end(&mut buf);
    }
    *read_to = from + buf.len() as u64;
    (from - start, buf)
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        self.stop_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tail_reads_only_new_bytes_and_keeps_the_latest() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        std::fs::write(&log, b"0123456789").unwrap();
        let mut at = 0;
        assert_eq!(read_tail(&log, &mut at, 4), (6, b"6789".to_vec()), "the latest bytes win");
        assert_eq!(at, 10);
        assert_eq!(read_tail(&log, &mut at, 4), (0, Vec::new()), "nothing new");
        std::fs::write(&log, b"0123456789ab").unwrap();
        assert_eq!(read_tail(&log, &mut at, 4), (0, b"ab".to_vec()));
        assert_eq!(read_tail(&dir.path().join("gone"), &mut at, 4), (0, Vec::new()));
    }
}
