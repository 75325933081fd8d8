//! The guard: a seccomp supervisor for where only Landlock confines (no user or mount
//! namespace). Landlock has no right for a file's mode, owner, times, extended attributes or
//! inode flags, nor for connecting to a named Unix socket; without a read-only mount around the
//! rest of the file system, a command could `chmod` a folder outside, `touch` a file in the
//! home, or talk to the Docker daemon. Under the guard those calls stop in the kernel
//! (`SECCOMP_RET_USER_NOTIF`) and octo, unconfined, looks at them:
//!
//! - the file is found as the kernel would find it (from the caller's working directory or
//!   descriptor) and held open; where that handle lies is checked against the writable roots;
//! - inside, octo makes the change itself, through the handle, and returns the result — so a
//!   path swapped after the check cannot redirect it (a plain "continue" would re-read the path);
//! - outside, the call fails with `EPERM` (`EACCES` for a socket), and the file is untouched;
//! - whatever cannot be read or checked fails closed.
//!
//! With the network off, Unix datagram sockets are refused outright (one can send to any named
//! socket without connecting) and abstract sockets are left to Landlock's scope (ABI 6) or
//! refused. The guard needs Linux 5.9 (`pidfd_getfd`, a pollable listener) and permission to read
//! the command's memory (same user, not made undumpable); the probe checks both once.

mod filter;
mod handoff;
mod ops;
mod place;
mod remote;
mod serve;

pub(super) use handoff::ChildSide;
pub(super) use place::Roots;
pub(super) use serve::Rules;
use std::sync::Arc;

/// Starts a supervisor for one command under `rules`; the child's side to install in it.
pub(super) fn prepare(rules: Rules) -> std::io::Result<ChildSide> {
    let prog = Arc::new(filter::program(rules.sockets));
    let (ours, child) = handoff::pair(prog)?;
    serve::start(ours, Arc::new(rules))?;
    Ok(child)
}

/// Whether the guard works here: a child installs it and asks for two changes, one the rules
/// allow (its own socket's mode) and one they refuse (the mode of `/`); `Err` says why not.
#[allow(unsafe_code)]
pub(super) fn probe() -> Result<(), String> {
    let rules =
        Rules { roots: Roots::new(&[], std::path::Path::new("/")), sockets: false, abstract_scoped: false };
    let child = prepare(rules).map_err(|e| format!("the supervisor could not start: {e}"))?;
    super::probe::try_child(move || {
        child.enter()?;
        // SAFETY: two plain system calls on a descriptor this child holds and a literal path.
        unsafe {
            if libc::fchmod(child.raw_sock(), 0o600) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::chmod(c"/".as_ptr(), 0o755) == 0 || *libc::__errno_location() != libc::EPERM {
                return Err(std::io::Error::from_raw_os_error(libc::EPROTO));
            }
        }
        Ok(())
    })
    .map_err(|e| format!("the seccomp supervisor does not work here ({e})"))
}
