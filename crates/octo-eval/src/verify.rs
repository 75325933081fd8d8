//! Running a task's verify command (and an outside agent's command line): in the folder given,
//! inside octo's OS sandbox with the network off, with the filtered environment octo's own
//! commands get, killed as a whole process group at its limit.

use octo_exec::sandbox::{Mode, Policy, Sandbox};
use octo_exec::{Capture, Ending};
use std::path::Path;
use std::time::Duration;

/// Output kept in memory (the rest goes to a file beside the folder).
const KEPT: usize = 256 * 1024;

/// How a command run went.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Exit status 0.
    pub ok: bool,
    /// It ran past its limit and was killed.
    pub timed_out: bool,
    /// How it ended, in words (`exit code 1`, `killed after 60 s`).
    pub ending: String,
    /// Its output (stdout and stderr in order), cut in the middle when long.
    pub output: String,
}

/// The sandbox a task's commands run in: `dir` writable, the network off.
pub fn sandbox_for(dir: &Path) -> Sandbox {
    Sandbox::new(Policy::new(Mode::WorkspaceWrite, dir))
}

/// Runs `command` in `dir` for at most `limit`; the output spills to `spill` past 256 KB.
pub async fn run(command: &str, dir: &Path, limit: Duration, spill: &Path) -> std::io::Result<Ran> {
    run_in(&sandbox_for(dir), &octo_exec::env::ShellEnv::default(), command, dir, limit, spill).await
}

/// Runs an outside agent's command line like [`run`], with the network on (it reaches its
/// model), its whole environment (its keys) and its own state folders in the home writable (`~/.claude`, `~/.codex`, `~/.cache`,
/// `~/.config`, `~/.local/state`).
pub async fn run_agent(command: &str, dir: &Path, limit: Duration, spill: &Path) -> std::io::Result<Ran> {
    let mut policy = Policy::new(Mode::WorkspaceWrite, dir);
    policy.network = true;
    if let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) {
        for d in [".claude", ".codex", ".cache", ".config", ".local/state"] {
            let path = home.join(d);
            if path.is_dir() {
                policy.writable_roots.push(path);
            }
        }
    }
    // The agent's own keys reach it: it is the user's program, not the model's.
    let env = octo_exec::env::ShellEnv { include: vec!["*".into()], ..octo_exec::env::ShellEnv::default() };
    run_in(&Sandbox::new(policy), &env, command, dir, limit, spill).await
}

async fn run_in(
    sandbox: &Sandbox,
    env: &octo_exec::env::ShellEnv,
    command: &str,
    dir: &Path,
    limit: Duration,
    spill: &Path,
) -> std::io::Result<Ran> {
    let capture = Capture::new(KEPT, spill.to_path_buf());
    let mut running = octo_exec::spawn(command, dir, capture.clone(), env, "octo-eval", Some(sandbox))?;
    let status = tokio::time::timeout(limit, running.child.wait()).await;
    let (ending, timed_out) = match status {
        Ok(Ok(s)) => (Ending::from_status(s), false),
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            running.terminate().await;
            (Ending::TimedOut(limit), true)
        }
    };
    running.finish_output(Duration::from_secs(2)).await;
    Ok(Ran {
        ok: !ending.is_error() && !timed_out,
        timed_out,
        ending: if timed_out { format!("killed after {} s", limit.as_secs()) } else { ending.describe() },
        output: capture.render(),
    })
}

/// The last `max` bytes of `text` (on a character boundary), saying what was cut.
pub fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {} bytes cut …]\n{}", start, &text[start..])
}
