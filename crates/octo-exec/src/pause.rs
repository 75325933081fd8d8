//! Holding a session's commands still for a moment: every process that carries the session's
//! tag (or that octo adopted from its commands) is stopped (`SIGSTOP`) until the returned
//! [`Paused`] is dropped, which continues them (`SIGCONT`). What runs meanwhile — a user's hook
//! reading the files octo just checked — cannot be raced by a command the model left running.

/// The processes stopped by [`pause_tagged`]; dropping it lets them run on.
#[derive(Debug, Default)]
pub struct Paused(Vec<i32>);

impl Paused {
    /// How many processes are held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        for pid in &self.0 {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid), nix::sys::signal::Signal::SIGCONT);
        }
    }
}

/// Stops the live processes of the session tagged `tag` ([`crate::reaper::kill_tagged`]'s
/// set), looking again until no new one shows up (one may fork while the others are stopped).
pub fn pause_tagged(tag: &str) -> Paused {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        let needle = format!("{}={tag}", crate::reaper::TAG_VAR);
        let mut held: Vec<i32> = Vec::new();
        for _ in 0..5 {
            let new: Vec<i32> = crate::reaper::session_processes(me, &needle, tag)
                .into_iter()
                .filter_map(|p| i32::try_from(p).ok())
                .filter(|p| !held.contains(p))
                .collect();
            if new.is_empty() {
                break;
            }
            for pid in new {
                let stopped = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGSTOP,
                );
                if stopped.is_ok() {
                    held.push(pid);
                }
            }
        }
        Paused(held)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tag;
        Paused::default()
    }
}
