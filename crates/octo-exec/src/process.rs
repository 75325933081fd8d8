//! Running a command through the platform shell in its own process group, with stdout and stderr
//! merged in order, and killing the whole group.

use crate::capture::Capture;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// A started command: the child, its process group, and the thread collecting its output.
pub struct Running {
    /// The shell process.
    pub child: tokio::process::Child,
    /// The process group id (the child's pid) on Unix; the pid on Windows.
    pub group: u32,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// Starts `command` in `cwd`, both output streams going into `capture` through one pipe, so
/// their interleaving is exactly what a terminal would show; confined by `sandbox` when one is
/// given (an error when the sandbox is required but unavailable).
pub fn spawn(
    command: &str,
    cwd: &Path,
    capture: Capture,
    env: &crate::env::ShellEnv,
    tag: &str,
    sandbox: Option<&crate::sandbox::Sandbox>,
) -> std::io::Result<Running> {
    crate::reaper::become_subreaper();
    let mut cmd = match sandbox {
        Some(s) => s.shell_command(command).map_err(std::io::Error::other)?,
        None => crate::shell::shell_command(command),
    };
    let (mut reader, writer) = std::io::pipe()?;
    env.apply(&mut cmd);
    cmd.env(crate::reaper::TAG_VAR, tag);
    cmd.current_dir(cwd).stdin(Stdio::null()).stdout(writer.try_clone()?).stderr(writer);
    // Tools run unattended: no pager or editor may wait for a keypress.
    cmd.env("PAGER", "cat").env("GIT_PAGER", "cat").env("GIT_TERMINAL_PROMPT", "0");
    #[cfg(unix)]
    own_session(&mut cmd);
    #[cfg(target_os = "linux")]
    crate::limit::cap_processes(&mut cmd);
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
    }
    let mut tokio_cmd = tokio::process::Command::from(cmd);
    tokio_cmd.kill_on_drop(true);
    // The command object held the write ends; [`crate::tied::spawn`] drops it, leaving only the
    // child's copies, so the reader sees EOF when every process of the group has closed them.
    let child = crate::tied::spawn(tokio_cmd)?;
    let group = child.id().unwrap_or(0);
    crate::reaper::set_managed(group, true);
    crate::reaper::record_group(group, tag);
    let reader = std::thread::Builder::new().name("octo-shell-output".into()).spawn(move || {
        use std::io::Read;
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => capture.push(&buf[..n]),
            }
        }
    })?;
    Ok(Running { child, group, reader: Some(reader) })
}

/// Starts the command in a session of its own (`setsid`), which is also its own process group:
/// it has no controlling terminal, so it cannot push keystrokes into the terminal octo runs in
/// (`TIOCSTI` on `/dev/tty`): they would be read by octo's prompt, or by the user's shell after
/// octo ends.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn own_session(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: runs in the forked child before exec and makes one system call.
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
    }
}

impl Running {
    /// Waits up to `grace` for the output pipe to close after the shell exited (a background
    /// grandchild may keep it open), then kills the rest of the group.
    pub async fn finish_output(&mut self, grace: Duration) {
        let Some(handle) = self.reader.take() else { return };
        let deadline = tokio::time::Instant::now() + grace;
        while !handle.is_finished() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if !handle.is_finished() {
            kill_group(self.group, true);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
            while !handle.is_finished() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        if handle.is_finished() {
            let _ = handle.join();
        }
        if self.child.try_wait().is_ok_and(|s| s.is_some()) {
            crate::reaper::set_managed(self.group, false);
        }
    }

    /// Stops the whole group: a polite signal, a short wait, then a forced kill.
    pub async fn terminate(&mut self) {
        kill_group(self.group, false);
        if tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await.is_err() {
            kill_group(self.group, true);
            let _ = self.child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        }
        // Grandchildren may outlive a shell that died from the polite signal.
        kill_group(self.group, true);
    }
}

/// Signals every process of the group (`force`: SIGKILL, else SIGTERM). Errors (the group is
/// already gone) are ignored.
pub fn kill_group(group: u32, force: bool) {
    if group == 0 {
        return;
    }
    #[cfg(unix)]
    {
        use nix::sys::signal::{killpg, Signal};
        use nix::unistd::Pid;
        let Ok(raw) = i32::try_from(group) else { return };
        let _ = killpg(Pid::from_raw(raw), if force { Signal::SIGKILL } else { Signal::SIGTERM });
    }
    #[cfg(windows)]
    {
        let _ = force;
        let _ = std::process::Command::new("taskkill")
            .args(["/T", "/F", "/PID", &group.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signalled(String),
    /// It ran past its timeout and was killed.
    TimedOut(Duration),
    /// The user cancelled the turn and it was killed.
    Cancelled,
    /// It had more processes at once than a command may ([`crate::limit::CROWD`]): a fork
    /// bomb, most likely; it was killed.
    TooManyProcesses,
}

impl Ending {
    /// From an exit status.
    pub fn from_status(status: std::process::ExitStatus) -> Self {
        if let Some(code) = status.code() {
            return Self::Exited(code);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(sig) = status.signal() {
                return Self::Signalled(format!("signal {sig}"));
            }
        }
        Self::Signalled("unknown".into())
    }

    /// The note appended to the output.
    pub fn describe(&self) -> String {
        match self {
            Self::Exited(c) => format!("[exit code {c}]"),
            Self::Signalled(s) => format!("[killed by {s}]"),
            Self::TimedOut(d) => format!(
                "[timed out after {}s; the command and everything it started were killed. Use a longer \
                 `timeout`, or `run_in_background` for long-running processes]",
                d.as_secs()
            ),
            Self::Cancelled => {
                "[cancelled by the user; the command and everything it started were killed]".into()
            }
            Self::TooManyProcesses => format!(
                "[stopped: the command had more than {} processes at once (a fork bomb?); it and \
                 everything it started were killed]",
                crate::limit::CROWD
            ),
        }
    }

    /// Whether the model should see it as a failure.
    pub fn is_error(&self) -> bool {
        !matches!(self, Self::Exited(0))
    }
}
