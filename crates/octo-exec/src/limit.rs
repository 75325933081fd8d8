//! A ceiling on the processes a command may start (`RLIMIT_NPROC`), so a fork bomb the
//! hard-deny list does not recognise runs out of room instead of taking the machine: the user's
//! processes at the time of the spawn plus [`ROOM`], as the command's soft and hard limit (it
//! cannot raise them). The kernel does not apply the limit to root, which has other defences
//! (the sandbox's user namespace takes no capabilities outside).

/// New processes a command (and everything it starts) may add to the user's count.
pub const ROOM: u64 = 2048;

/// How many processes the user running octo has now (entries of `/proc` it owns).
#[cfg(target_os = "linux")]
pub fn user_processes() -> u64 {
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::getuid().as_raw();
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
                .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
                .count() as u64
        })
        .unwrap_or(0)
}

/// Sets the command's process ceiling, between fork and exec (a single system call).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn cap_processes(cmd: &mut std::process::Command) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    use std::os::unix::process::CommandExt;
    if nix::unistd::getuid().is_root() {
        return;
    }
    let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NPROC) else { return };
    let limit = (user_processes() + ROOM).min(hard);
    // SAFETY: the closure runs in the forked child before exec and makes one system call on a
    // value computed by the parent; it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            let _ = setrlimit(Resource::RLIMIT_NPROC, limit, limit);
            Ok(())
        });
    }
}

/// How many processes are in process group `group` now, with everything below them whatever
/// groups they moved to (0 where that cannot be counted).
pub fn group_size(group: u32) -> usize {
    #[cfg(target_os = "linux")]
    {
        crate::reaper::tree(group).len()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = group;
        0
    }
}

/// Processes in one command's group past which octo stops it ([`past_room`]): half the ceiling,
/// so that the watch fires before the ceiling (shared with the user's other processes) is hit.
pub const CROWD: usize = (ROOM / 2) as usize;

/// Resolves when process group `group` and what it started hold more than [`CROWD`] processes
/// (looked at twice a second; root included); never where that cannot be counted. The ceiling keeps a user's fork bomb from
/// taking the machine but leaves it spinning until the command's timeout, and root has no
/// ceiling at all: race this against the command and kill the group when it wins.
///
/// Before it resolves, the whole tree is stopped and killed ([`crate::reaper::kill_tree`]):
/// what left the group (`setpgid`, `setsid`) dies with it.
pub async fn past_room(group: u32) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if group_size(group) > CROWD {
            crate::reaper::kill_tree(group);
            return;
        }
    }
}

/// Whether [`past_room`] can count a command's processes here (`/proc` on Linux).
pub fn countable() -> bool {
    cfg!(target_os = "linux") && std::fs::metadata(format!("/proc/{}/stat", std::process::id())).is_ok()
}
