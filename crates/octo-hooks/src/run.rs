//! Running one hook: the command through the application's shell, in the workspace, in a process
//! group of its own, the event's JSON on stdin, stdout and stderr read up to a cap, a timeout that
//! kills the whole group.

use crate::config::Hook;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// The most of each output stream kept; a hook that prints more is stopped.
pub const MAX_OUTPUT: usize = 1024 * 1024;

/// Builds the process for a hook's command (the application's shell, the same wrap point its
/// command tool uses), and whether the hook asked for the network.
pub type Shell = Arc<dyn Fn(&str, bool) -> std::process::Command + Send + Sync>;

/// Where and how hooks run.
#[derive(Clone)]
pub struct Runner {
    /// The shell.
    pub shell: Shell,
    /// The working directory (the workspace).
    pub cwd: PathBuf,
    /// Whether the shell confines hooks in the command sandbox: a hook that then fails on a
    /// refusal reports its error instead of blocking (see [`crate::Hooks`]).
    pub sandboxed: bool,
    /// The tag every hook of this runner carries: what they leave running (`setsid …&`) is
    /// killed when the last clone of the runner goes, and when octo dies.
    tag: Arc<Tag>,
    /// A folder of this run that confined hooks can read, and the transcript's copy kept there.
    readable: Option<(PathBuf, Arc<crate::transcript::Mirror>)>,
    /// `CLAUDE_ENV_FILE` for SessionStart hooks.
    env_file: Option<PathBuf>,
}

/// A session tag that kills what carries it when dropped (once a hook ran with it: a session
/// without hooks pays nothing).
struct Tag(String, std::sync::atomic::AtomicBool);

impl Drop for Tag {
    fn drop(&mut self) {
        if self.1.load(std::sync::atomic::Ordering::Relaxed) {
            octo_exec::reaper::kill_tagged(&self.0);
        }
    }
}

impl Runner {
    /// Hooks run by `shell` in `cwd` (`sandboxed`: the shell confines them).
    pub fn new(shell: Shell, cwd: PathBuf, sandboxed: bool) -> Self {
        let tag = Arc::new(Tag(octo_exec::reaper::new_tag(), false.into()));
        Self { shell, cwd, sandboxed, tag, readable: None, env_file: None }
    }

    /// Gives SessionStart hooks `CLAUDE_ENV_FILE` = `file` (the caller makes its folder, lets
    /// the hooks write there, and removes it when the session ends).
    pub fn with_env_file(mut self, file: PathBuf) -> Self {
        self.env_file = Some(file);
        self
    }

    /// Gives confined hooks the session's transcript as a copy in `dir`, a folder of this run
    /// they can read (see `transcript`); unconfined hooks read the transcript itself.
    pub fn with_readable(mut self, dir: PathBuf) -> Self {
        self.readable = Some((dir, Arc::default()));
        self
    }

    /// Runs `hook`, keeping the transcript's copy (when it has one) up to date while it runs: a
    /// hook that waits for the newest lines sees them arrive.
    pub(crate) async fn run_mirrored(&self, hook: &Hook, input: &Value) -> Ran {
        let Some((_, mirror)) = self.readable.as_ref().filter(|_| self.sandboxed) else {
            return self.run(hook, input).await;
        };
        let run = self.run(hook, input);
        tokio::pin!(run);
        loop {
            tokio::select! {
                ran = &mut run => return ran,
                () = tokio::time::sleep(std::time::Duration::from_millis(100)) => mirror.refresh(),
            }
        }
    }

    /// The transcript path a hook is given for the session's transcript `real`.
    pub(crate) fn transcript_path(&self, real: &std::path::Path) -> PathBuf {
        match self.readable.as_ref().filter(|_| self.sandboxed) {
            Some((dir, mirror)) => mirror.path_for(real, dir),
            None => real.to_path_buf(),
        }
    }

    /// Kills what the hooks left running — by their tag, and what octo adopted from them (a
    /// daemon that cleared its environment) — when the session ends.
    pub fn stop_leftovers(&self) {
        if self.tag.1.load(std::sync::atomic::Ordering::Relaxed) {
            octo_exec::reaper::kill_tagged(&self.tag.0);
            octo_exec::reaper::reap_soon();
        }
    }
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").field("cwd", &self.cwd).field("sandboxed", &self.sandboxed).finish()
    }
}

/// What a hook did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    /// The command.
    pub command: String,
    /// Its exit code (`None`: killed, timed out, or it could not start).
    pub code: Option<i32>,
    /// Its standard output (capped).
    pub stdout: String,
    /// Its standard error (capped).
    pub stderr: String,
    /// Why it did not finish normally, when it did not.
    pub problem: Option<String>,
}

impl Runner {
    /// Runs `hook` with `input` on stdin.
    pub async fn run(&self, hook: &Hook, input: &Value) -> Ran {
        let mut ran = Ran {
            command: hook.command.clone(),
            code: None,
            stdout: String::new(),
            stderr: String::new(),
            problem: None,
        };
        let mut cmd = (self.shell)(&hook.command, hook.network);
        cmd.current_dir(&self.cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // Claude Code's hooks find their scripts through this variable.
        cmd.env("CLAUDE_PROJECT_DIR", &self.cwd).env("OCTO_PROJECT_DIR", &self.cwd);
        if let Some(f) = self.env_file.as_ref().filter(|_| input["hook_event_name"] == "SessionStart") {
            cmd.env("CLAUDE_ENV_FILE", f);
        }
        cmd.env(octo_exec::reaper::TAG_VAR, &self.tag.0);
        self.tag.1.store(true, std::sync::atomic::Ordering::Relaxed);
        // A session of its own, as a command's: no terminal to push keys into, and what it
        // leaves running is told apart from octo's own processes and killed with the session.
        #[cfg(unix)]
        octo_exec::own_session(&mut cmd);
        octo_exec::reaper::become_subreaper();
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.kill_on_drop(true);
        let child = match octo_exec::tied::spawn(cmd) {
            Ok(c) => c,
            Err(e) => {
                ran.problem = Some(format!("could not start: {e}"));
                return ran;
            }
        };
        let group = child.id().unwrap_or(0);
        octo_exec::reaper::track(group, &self.tag.0);
        let body = serde_json::to_vec(input).unwrap_or_default();
        let (detach_tx, detach_rx) = tokio::sync::oneshot::channel();
        // The hook is waited for in a task of its own, so that one which answers `{"async": true}`
        // on its first line can go on in the background; otherwise dropping this future (a
        // cancelled turn) aborts the task, and the hook's whole group goes with it.
        let mut task = Abort(Some(tokio::spawn(wait(child, group, body, hook.timeout, detach_tx))));
        let Some(handle) = task.0.as_mut() else { return ran };
        let done = tokio::select! {
            joined = handle => joined.ok(),
            Ok(()) = detach_rx => {
                // `{"async": true}`: it runs on, deciding nothing; its timeout still holds.
                task.0 = None;
                ran.code = Some(0);
                return ran;
            }
        };
        task.0 = None;
        finish(ran, done, group, hook.timeout)
    }
}

/// What waiting for a hook gave: its output (each with whether it was cut), its exit; `Err` when
/// it timed out (its group is then killed).
type Waited = Result<
    ((String, bool), (String, bool), std::io::Result<std::process::ExitStatus>),
    tokio::time::error::Elapsed,
>;

/// Feeds a hook its input and waits for it, up to `timeout`.
async fn wait(
    mut child: tokio::process::Child,
    group: u32,
    body: Vec<u8>,
    timeout: std::time::Duration,
    detach: tokio::sync::oneshot::Sender<()>,
) -> Waited {
    let _guard = GroupGuard(group);
    let stdin = child.stdin.take();
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let work = async {
        // Input is written while output is read: a hook that prints before reading (or never
        // reads) cannot stall on a full pipe.
        let write = async {
            if let Some(mut w) = stdin {
                let _ = w.write_all(&body).await;
                drop(w);
            }
        };
        let ((), out, err) =
            tokio::join!(write, read_capped(stdout, Some(detach)), read_capped(stderr, None));
        let status = child.wait().await;
        (out, err, status)
    };
    let done = tokio::time::timeout(timeout, work).await;
    if done.is_err() {
        kill_group(group);
    }
    done
}

/// A finished wait as what the hook did.
fn finish(mut ran: Ran, done: Option<Waited>, group: u32, timeout: std::time::Duration) -> Ran {
    match done {
        Some(Ok(((out, out_over), (err, err_over), status))) => {
            ran.stdout = out;
            ran.stderr = err;
            if out_over || err_over {
                kill_group(group);
                ran.problem = Some(format!("printed more than {} KB; stopped", MAX_OUTPUT / 1024));
            } else {
                match status {
                    Ok(s) => ran.code = s.code(),
                    Err(e) => ran.problem = Some(format!("could not be waited for: {e}")),
                }
                if ran.code.is_none() && ran.problem.is_none() {
                    ran.problem = Some("was killed by a signal".into());
                }
            }
        }
        Some(Err(_)) => {
            ran.problem = Some(format!("took longer than {} s and was stopped", timeout.as_secs_f64()));
        }
        None => ran.problem = Some("could not be waited for".into()),
    }
    ran
}

/// Aborts the task waiting for a hook when dropped (unless taken: the hook went on in the
/// background).
struct Abort<T>(Option<tokio::task::JoinHandle<T>>);

impl<T> Drop for Abort<T> {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.abort();
        }
    }
}

/// Kills a hook's process group when dropped.
struct GroupGuard(u32);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

/// Reads a stream up to [`MAX_OUTPUT`]; `true` when there was more. With `detach`, a first line
/// that is Claude Code's `{"async": true}` is told through it as soon as it is read.
async fn read_capped(
    stream: Option<impl AsyncRead + Unpin>,
    mut detach: Option<tokio::sync::oneshot::Sender<()>>,
) -> (String, bool) {
    let Some(mut s) = stream else { return (String::new(), false) };
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        match s.read(&mut chunk).await {
            Ok(0) | Err(_) => return (String::from_utf8_lossy(&buf).into_owned(), false),
            Ok(n) => {
                if buf.len() + n > MAX_OUTPUT {
                    return (String::from_utf8_lossy(&buf).into_owned(), true);
                }
                buf.extend_from_slice(&chunk[..n]);
                if let Some(first) = buf.iter().position(|b| *b == b'\n').map(|i| &buf[..i]) {
                    if let Some(tx) = detach.take().filter(|_| asks_async(first)) {
                        let _ = tx.send(());
                    }
                }
            }
        }
    }
}

/// Whether a hook's first output line is `{"async": true, …}`.
fn asks_async(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line)
        .ok()
        .is_some_and(|v| v.get("async").and_then(Value::as_bool) == Some(true))
}

fn kill_group(group: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(group) {
        if pid > 0 {
            let _ =
                nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = group;
}
