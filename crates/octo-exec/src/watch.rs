//! What octo's commands leave behind dies with octo, even when octo is killed with `SIGKILL`.
//!
//! A command's shell dies with octo (a parent-death signal, [`crate::tied`]), but what it left
//! running — a `setsid` daemon, a double fork, the foreground command's own child — is not
//! octo's child and would be adopted by init. So at the first command octo starts a watcher: a
//! small shell in a process group of its own that ignores the terminal's and the session's
//! signals and blocks reading a pipe whose only writer is octo. When octo ends, however it ends,
//! the kernel closes the pipe; the watcher then kills every process carrying one of this octo's
//! session tags (`OCTO_SESSION_TAG=<octo's pid>-…`, [`crate::reaper`]), looking again while
//! something forks, and ends. A process that dropped the tag from its environment (`env -i`) is
//! not found this way; while octo lives, [`crate::reaper::kill_tagged`] finds those too.

use std::sync::{Mutex, OnceLock};

/// The watcher's script: `$1` is octo's process id, `$2` the name of the tag's variable. Reading stdin returns only when every
/// writer is gone; then five rounds of looking for tagged processes, each killed.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const SCRIPT: &str = r#"trap '' HUP INT TERM QUIT PIPE
cat >/dev/null 2>&1
round=0
while [ "$round" -lt 5 ]; do
  found=
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [ "$pid" = "$$" ] && continue
    if tr '\000' '\n' < "$d/environ" 2>/dev/null | grep -q "^$2=$1-"; then
      kill -9 "$pid" 2>/dev/null && found=1
    fi
  done
  [ -z "$found" ] && break
  round=$((round + 1))
  sleep 0.05
done
"#;

/// The watcher, kept (with the pipe's writing end) for the life of the process.
fn watcher() -> &'static Mutex<Option<std::process::Child>> {
    static W: OnceLock<Mutex<Option<std::process::Child>>> = OnceLock::new();
    W.get_or_init(|| Mutex::new(None))
}

/// Starts the watcher once per process (on Linux; elsewhere nothing is started), for commands
/// whose tag is in the variable `tag_var`. Errors are kept quiet: [`running`] tells whether
/// there is one.
pub(crate) fn start(tag_var: &'static str) {
    #[cfg(not(target_os = "linux"))]
    let _ = tag_var;
    #[cfg(target_os = "linux")]
    {
        static STARTED: OnceLock<()> = OnceLock::new();
        STARTED.get_or_init(|| {
            let child = spawn(tag_var).ok();
            *watcher().lock().unwrap_or_else(std::sync::PoisonError::into_inner) = child;
        });
    }
}

#[cfg(target_os = "linux")]
fn spawn(tag_var: &str) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", SCRIPT, "octo-watch", &std::process::id().to_string(), tag_var])
        .env_remove(tag_var)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        // Its own group: Ctrl-C at the terminal reaches octo's group, not the watcher.
        .process_group(0);
    cmd.spawn()
}

/// Whether a watcher is running for this process (started by the first command).
pub fn running() -> bool {
    let mut w = watcher().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    w.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)))
}

/// Whether a watcher can be started here: Linux with `/bin/sh` and a readable `/proc`.
pub fn possible() -> bool {
    cfg!(target_os = "linux")
        && std::path::Path::new("/bin/sh").exists()
        && std::fs::metadata(format!("/proc/{}/environ", std::process::id())).is_ok()
}
