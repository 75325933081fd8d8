//! Commands running in the background: `terminal` with `run_in_background`, read with
//! `terminal_output`, stopped with `kill_shell`. All of them die when the registry is dropped
//! (when octo exits).

use super::capture::Capture;
use super::process::{kill_group, spawn, Ending};
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

/// The background commands of one octo process.
#[derive(Default)]
pub struct BackgroundShells {
    shells: Mutex<HashMap<String, Arc<Shell>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for BackgroundShells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundShells").field("running", &self.lock().len()).finish()
    }
}

impl BackgroundShells {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Shell>>> {
        self.shells.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts `command`; its output goes to a log file in `log_dir`. Returns the shell's id.
    pub fn start(&self, command: &str, cwd: &Path, log_dir: &Path) -> std::io::Result<String> {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("shell-{n}");
        std::fs::create_dir_all(log_dir)?;
        let log = log_dir.join(format!("{}-{id}-{:x}.log", std::process::id(), super::unique()));
        let capture = Capture::to_file(log.clone())?;
        let mut running = spawn(command, cwd, capture.clone())?;
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
            drop(capture);
            let end = match status {
                Ok(s) => Ending::from_status(s),
                Err(e) => Ending::Signalled(e.to_string()),
            };
            *ending.lock().unwrap_or_else(|e| e.into_inner()) = Some(end);
        });
        self.lock().insert(id.clone(), shell);
        Ok(id)
    }

    /// New output since the last read (at most `max` bytes, the latest kept) and the status.
    pub fn read(&self, id: &str, max: usize) -> Result<String, String> {
        let found = self.lock().get(id).cloned();
        let shell = found.ok_or_else(|| self.unknown(id))?;
        let bytes = std::fs::read(&shell.log).unwrap_or_default();
        let mut read_to = shell.read_to.lock().unwrap_or_else(|e| e.into_inner());
        let start = usize::try_from(*read_to).unwrap_or(usize::MAX).min(bytes.len());
        let new = &bytes[start..];
        *read_to = bytes.len() as u64;
        let (skipped, shown) =
            if new.len() > max { (new.len() - max, &new[new.len() - max..]) } else { (0, new) };
        let status = match &*shell.ending.lock().unwrap_or_else(|e| e.into_inner()) {
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
    pub fn kill(&self, id: &str) -> Result<String, String> {
        let removed = self.lock().remove(id);
        let shell = removed.ok_or_else(|| self.unknown(id))?;
        kill_group(shell.group, false);
        kill_group(shell.group, true);
        Ok(format!("{id} (`{}`) stopped; its output is in {}", shell.command, shell.log.display()))
    }

    fn unknown(&self, id: &str) -> String {
        let ids: Vec<String> = self.lock().keys().cloned().collect();
        if ids.is_empty() {
            format!("no background shell `{id}`; none is running")
        } else {
            format!("no background shell `{id}`; running: {}", ids.join(", "))
        }
    }
}

impl Drop for BackgroundShells {
    fn drop(&mut self) {
        for shell in self.lock().values() {
            kill_group(shell.group, true);
        }
    }
}
