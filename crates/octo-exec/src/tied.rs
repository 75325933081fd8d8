//! Children that die with octo, however octo ends: on Linux a process octo starts for itself (an
//! MCP server, a language server, a hook, a command's shell) gets a parent-death signal
//! (`PR_SET_PDEATHSIG`, `SIGKILL`), so even an octo killed with `SIGKILL` leaves none of them
//! behind.
//!
//! The kernel sends that signal when the *thread* that forked the child ends, not the process:
//! a child forked on one of the runtime's short-lived blocking threads would be killed minutes
//! later, when that thread retires. So every such child is forked by one thread that lives as
//! long as the process ([`spawn`]), inside the caller's Tokio runtime. Elsewhere (other
//! platforms, no runtime) [`spawn`] is `Command::spawn`.

use std::io;
use tokio::process::{Child, Command};

/// Starts `cmd` tied to octo's life (see the module). Must be called inside a Tokio runtime, as
/// `tokio::process::Command::spawn` must. The command is dropped once spawned, so pipes it held
/// are closed on octo's side.
pub fn spawn(mut cmd: Command) -> io::Result<Child> {
    #[cfg(target_os = "linux")]
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        tie(&mut cmd);
        return linux::spawner().spawn(cmd, handle);
    }
    cmd.spawn()
}

/// Adds the parent-death signal to `cmd`, and refuses to run when octo is already gone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn tie(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: runs in the forked child before exec and makes only two system calls on values
    // prepared before the fork; its error is built from the raw errno, without allocating.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // octo ended between the fork and the call: the signal will never come.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{io, Child, Command};
    use std::sync::mpsc;
    use std::sync::{Mutex, OnceLock};

    struct Job {
        cmd: Command,
        handle: tokio::runtime::Handle,
        reply: mpsc::SyncSender<io::Result<Child>>,
    }

    /// The thread that forks tied children; `None` when it could not be started (then children
    /// are forked where they are asked for, untied).
    pub(super) struct Spawner(Option<Mutex<mpsc::Sender<Job>>>);

    pub(super) fn spawner() -> &'static Spawner {
        static S: OnceLock<Spawner> = OnceLock::new();
        S.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let started = std::thread::Builder::new().name("octo-spawner".into()).spawn(move || {
                for Job { mut cmd, handle, reply } in rx {
                    let child = {
                        let _entered = handle.enter();
                        cmd.spawn()
                    };
                    drop(cmd);
                    let _ = reply.send(child);
                }
            });
            Spawner(started.ok().map(|_| Mutex::new(tx)))
        })
    }

    impl Spawner {
        pub(super) fn spawn(&self, mut cmd: Command, handle: tokio::runtime::Handle) -> io::Result<Child> {
            let Some(tx) = &self.0 else { return cmd.spawn() };
            let (reply, answer) = mpsc::sync_channel(1);
            let sent =
                tx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).send(Job { cmd, handle, reply });
            if let Err(mpsc::SendError(job)) = sent {
                let mut cmd = job.cmd;
                return cmd.spawn();
            }
            answer.recv().unwrap_or_else(|_| Err(io::Error::other("the spawner thread ended")))
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A child asked for by a thread that ends at once lives on: the signal follows the
    /// spawner thread, which lives as long as the process.
    #[tokio::test]
    async fn a_tied_child_outlives_the_thread_that_asked() {
        let handle = tokio::runtime::Handle::current();
        let mut child = std::thread::spawn(move || {
            let _entered = handle.enter();
            let mut cmd = Command::new("sleep");
            cmd.arg("5");
            spawn(cmd)
        })
        .join()
        .unwrap()
        .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(child.try_wait().unwrap().is_none(), "the child died with the thread that asked");
        let _ = child.kill().await;
    }

    #[tokio::test]
    async fn the_child_reads_its_death_signal_as_sigkill() {
        let mut cmd = Command::new("python3");
        cmd.arg("-c").arg(
            "import ctypes,sys; s=ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(s)); print(s.value)",
        );
        cmd.stdout(std::process::Stdio::piped());
        let Ok(child) = spawn(cmd) else { return };
        let out = child.wait_with_output().await.unwrap();
        if out.status.success() {
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "9");
        }
    }
}
