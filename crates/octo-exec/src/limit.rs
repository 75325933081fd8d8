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
