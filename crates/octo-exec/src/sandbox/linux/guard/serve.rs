//! The supervisor's loop: one thread per confined command, receiving its children's listeners
//! and answering each stopped call — made on the caller's behalf where the rules allow it,
//! refused where they do not, and refused when anything about it cannot be read (fail closed).

use super::filter::{FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETFLAGS};
use super::ops::{apply, connect, cstring, Change};
use super::place::{locate, open_fd, where_is, Found, Place, Roots};
use super::remote::{Tracee, PATH_MAX};
use nix::errno::Errno;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// What a command's supervisor allows.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// Where metadata may change and sockets may be reached.
    pub(crate) roots: Roots,
    /// Whether `connect` is checked (the network is off).
    pub(crate) sockets: bool,
    /// Whether Landlock keeps abstract sockets to the command's own (ABI 6); else they are
    /// refused.
    pub(crate) abstract_scoped: bool,
}

/// The answer to one stopped call.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Answer {
    /// Let the kernel run it as asked (nothing in it can reach outside).
    Continue,
    /// Done here: this is its return value.
    Value(i64),
    /// Refused or failed with this error.
    Fail(Errno),
}

/// Starts the thread that supervises what arrives on `handoff`.
pub(super) fn start(handoff: OwnedFd, rules: Arc<Rules>) -> std::io::Result<()> {
    std::thread::Builder::new().name("octo-sandbox-guard".into()).spawn(move || run(&handoff, &rules))?;
    Ok(())
}

/// Until the command is dropped and every process holding a listener is gone.
fn run(handoff: &OwnedFd, rules: &Rules) {
    let mut open_handoff = true;
    let mut listeners: Vec<OwnedFd> = Vec::new();
    loop {
        let mut fds: Vec<libc::pollfd> = Vec::new();
        if open_handoff {
            fds.push(libc::pollfd { fd: handoff.as_raw_fd(), events: libc::POLLIN, revents: 0 });
        }
        fds.extend(listeners.iter().map(|l| libc::pollfd {
            fd: l.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
        if fds.is_empty() {
            return;
        }
        if !wait(&mut fds) {
            return;
        }
        let mut gone: Vec<RawFd> = Vec::new();
        for p in &fds {
            if p.revents == 0 {
                continue;
            }
            if open_handoff && p.fd == handoff.as_raw_fd() {
                match super::handoff::recv_fd(p.fd) {
                    Ok(Some(listener)) => {
                        sync_wake_up(&listener);
                        listeners.push(listener);
                    }
                    Ok(None) | Err(_) => open_handoff = false,
                }
            } else if p.revents & libc::POLLIN != 0 {
                if !answer_one(p.fd, rules) {
                    gone.push(p.fd);
                }
            } else {
                gone.push(p.fd);
            }
        }
        listeners.retain(|l| !gone.contains(&l.as_raw_fd()));
    }
}

/// Asks the kernel to hand the CPU straight between the stopped caller and this thread
/// (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6): each round trip then costs a switch on one
/// CPU instead of a wake-up on another. Older kernels refuse the flag; nothing else changes.
#[allow(unsafe_code)]
fn sync_wake_up(listener: &OwnedFd) {
    const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
    // SAFETY: the ioctl takes its flags by value.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
        )
    };
}

#[allow(unsafe_code)]
fn wait(fds: &mut [libc::pollfd]) -> bool {
    loop {
        // SAFETY: `fds` is a live slice of pollfd whose length is passed with it.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if rc >= 0 {
            return true;
        }
        if Errno::last() != Errno::EINTR {
            return false;
        }
    }
}

/// Receives one stopped call on `listener` and answers it; `false` when the listener is done.
#[allow(unsafe_code)]
fn answer_one(listener: RawFd, rules: &Rules) -> bool {
    // The kernel insists on a zeroed request.
    // SAFETY: `seccomp_notif` is plain data for which zeroes are valid.
    let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: the ioctl writes one seccomp_notif into the live, properly sized struct.
    if unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &raw mut req) } != 0 {
        // The caller died before it could be read (ENOENT), or a signal came: try again; any
        // other error ends this listener.
        return matches!(Errno::last(), Errno::ENOENT | Errno::EINTR);
    }
    let mut t = Tracee::new(req.pid, listener, req.id);
    let answer = decide(&mut t, i64::from(req.data.nr), req.data.args, rules).unwrap_or_else(Answer::Fail);
    let mut resp = libc::seccomp_notif_resp { id: req.id, val: 0, error: 0, flags: 0 };
    match answer {
        Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        Answer::Value(v) => resp.val = v,
        Answer::Fail(e) => resp.error = -(e as i32),
    }
    // SAFETY: the ioctl reads the live response struct. A caller killed meanwhile (ENOENT) is
    // not an error of the listener's.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &raw mut resp) };
    true
}

/// Where a call's file is named: a path (relative to a descriptor or the working directory) or
/// a descriptor.
enum Target {
    Path { dirfd: i32, path: u64, follow: bool, empty_ok: bool },
    Fd(i32),
}

fn fd_arg(a: u64) -> i32 {
    a as i32
}

/// What the stopped call would do, read from the caller, and the answer to it.
pub(super) fn decide(t: &mut Tracee, nr: i64, a: [u64; 6], rules: &Rules) -> Result<Answer, Errno> {
    if rules.sockets && nr == libc::SYS_connect {
        return decide_connect(t, a, rules);
    }
    let here = libc::AT_FDCWD;
    let path = |dirfd: i32, p: u64, follow: bool| Target::Path { dirfd, path: p, follow, empty_ok: false };
    let at_flags = |f: u64, dirfd: i32, p: u64| Target::Path {
        dirfd,
        path: p,
        follow: f & libc::AT_SYMLINK_NOFOLLOW as u64 == 0,
        empty_ok: f & libc::AT_EMPTY_PATH as u64 != 0,
    };
    let mode = |m: u64| Change::Mode(m as libc::mode_t);
    let owner = |u: u64, g: u64| Change::Owner(u as u32, g as u32);
    let (target, change) = match nr {
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chmod => (path(here, a[0], true), mode(a[1])),
        libc::SYS_fchmodat => (path(fd_arg(a[0]), a[1], true), mode(a[2])),
        libc::SYS_fchmod => (Target::Fd(fd_arg(a[0])), mode(a[1])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chown => (path(here, a[0], true), owner(a[1], a[2])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_lchown => (path(here, a[0], false), owner(a[1], a[2])),
        libc::SYS_fchown => (Target::Fd(fd_arg(a[0])), owner(a[1], a[2])),
        libc::SYS_fchownat => (at_flags(a[4], fd_arg(a[0]), a[1]), owner(a[2], a[3])),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utime => (path(here, a[0], true), Change::Times(utimbuf(t, a[1])?)),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utimes => (path(here, a[0], true), Change::Times(timevals(t, a[1])?)),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_futimesat if a[1] == 0 => (Target::Fd(fd_arg(a[0])), Change::Times(timevals(t, a[2])?)),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_futimesat => (path(fd_arg(a[0]), a[1], true), Change::Times(timevals(t, a[2])?)),
        libc::SYS_utimensat if a[1] == 0 => {
            if a[3] & libc::AT_SYMLINK_NOFOLLOW as u64 != 0 {
                return Err(Errno::EINVAL);
            }
            (Target::Fd(fd_arg(a[0])), Change::Times(timespecs(t, a[2])?))
        }
        libc::SYS_utimensat => (at_flags(a[3], fd_arg(a[0]), a[1]), Change::Times(timespecs(t, a[2])?)),
        libc::SYS_setxattr | libc::SYS_lsetxattr | libc::SYS_fsetxattr => {
            let change = set_attr(t, a[1], a[2], a[3], a[4])?;
            let target = match nr {
                libc::SYS_setxattr => path(here, a[0], true),
                libc::SYS_lsetxattr => path(here, a[0], false),
                _ => Target::Fd(fd_arg(a[0])),
            };
            (target, change)
        }
        libc::SYS_removexattr | libc::SYS_lremovexattr | libc::SYS_fremovexattr => {
            let change = Change::RemoveAttr(cstring(t.string(a[1], 256)?)?);
            let target = match nr {
                libc::SYS_removexattr => path(here, a[0], true),
                libc::SYS_lremovexattr => path(here, a[0], false),
                _ => Target::Fd(fd_arg(a[0])),
            };
            (target, change)
        }
        libc::SYS_ioctl => {
            let request = a[1] as u32;
            let len = match request {
                FS_IOC_SETFLAGS | FS_IOC32_SETFLAGS => 4,
                FS_IOC_FSSETXATTR => 28,
                _ => return Ok(Answer::Continue),
            };
            (Target::Fd(fd_arg(a[0])), Change::Flags(request, t.bytes(a[2], len)?))
        }
        // Not one the filter sends: let it be.
        _ => return Ok(Answer::Continue),
    };
    let found = find(t, &target)?;
    if !rules.roots.allow(&found) {
        return Err(Errno::EPERM);
    }
    t.check()?;
    apply(&found.place, &change).map(Answer::Value)
}

fn find(t: &mut Tracee, target: &Target) -> Result<Found, Errno> {
    match *target {
        Target::Fd(n) => open_fd(t, n),
        Target::Path { dirfd, path, follow, empty_ok } => {
            let p = t.string(path, PATH_MAX)?;
            match (p.is_empty(), empty_ok) {
                (true, true) if dirfd == libc::AT_FDCWD => {
                    let fd = t.dir(dirfd)?;
                    let at = where_is(&fd)?;
                    Ok(Found { place: Place::Object(fd), at })
                }
                (true, true) => open_fd(t, dirfd),
                _ => locate(t, dirfd, &p, follow),
            }
        }
    }
}

/// `connect`: a named Unix socket inside the roots is connected here, through the handle that
/// was checked (so a symlink swapped meanwhile cannot redirect it); one outside is refused, as
/// is an abstract one where Landlock cannot keep those to the command's own.
fn decide_connect(t: &mut Tracee, a: [u64; 6], rules: &Rules) -> Result<Answer, Errno> {
    let len = a[2] as usize;
    let family = std::mem::size_of::<libc::sa_family_t>();
    if len <= family || len > std::mem::size_of::<libc::sockaddr_un>() {
        return Ok(Answer::Continue);
    }
    let addr = t.bytes(a[1], len)?;
    if u16::from_ne_bytes([addr[0], addr[1]]) != libc::AF_UNIX as u16 {
        return Ok(Answer::Continue);
    }
    let name = &addr[family..];
    if name[0] == 0 {
        return if rules.abstract_scoped { Ok(Answer::Continue) } else { Err(Errno::EACCES) };
    }
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    let found = locate(t, libc::AT_FDCWD, &name[..end], true)?;
    if !rules.roots.allow(&found) {
        return Err(Errno::EACCES);
    }
    let Place::Object(target) = &found.place else { return Err(Errno::EACCES) };
    let sock = t.fd(fd_arg(a[0]))?;
    t.check()?;
    connect(&sock, target).map(Answer::Value)
}

fn set_attr(t: &mut Tracee, name: u64, value: u64, size: u64, flags: u64) -> Result<Change, Errno> {
    const XATTR_SIZE_MAX: u64 = 65536;
    if size > XATTR_SIZE_MAX {
        return Err(Errno::E2BIG);
    }
    let name = cstring(t.string(name, 256)?)?;
    let value = if size == 0 { Vec::new() } else { t.bytes(value, size as usize)? };
    Ok(Change::SetAttr(name, value, flags as i32))
}

fn two_i64(t: &mut Tracee, addr: u64) -> Result<[i64; 4], Errno> {
    let b = t.bytes(addr, 32)?;
    let mut out = [0i64; 4];
    for (i, v) in out.iter_mut().enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i * 8..i * 8 + 8]);
        *v = i64::from_ne_bytes(w);
    }
    Ok(out)
}

fn spec(sec: i64, nsec: i64) -> libc::timespec {
    libc::timespec { tv_sec: sec as libc::time_t, tv_nsec: nsec as _ }
}

/// `utimensat`'s two timespecs (`None`: now).
fn timespecs(t: &mut Tracee, addr: u64) -> Result<Option<[libc::timespec; 2]>, Errno> {
    if addr == 0 {
        return Ok(None);
    }
    let v = two_i64(t, addr)?;
    Ok(Some([spec(v[0], v[1]), spec(v[2], v[3])]))
}

/// `utimes`' two timevals, as timespecs.
#[cfg(target_arch = "x86_64")]
fn timevals(t: &mut Tracee, addr: u64) -> Result<Option<[libc::timespec; 2]>, Errno> {
    if addr == 0 {
        return Ok(None);
    }
    let v = two_i64(t, addr)?;
    if [v[1], v[3]].iter().any(|us| !(0..1_000_000).contains(us)) {
        return Err(Errno::EINVAL);
    }
    Ok(Some([spec(v[0], v[1] * 1000), spec(v[2], v[3] * 1000)]))
}

/// `utime`'s `utimbuf` (access, modification seconds), as timespecs.
#[cfg(target_arch = "x86_64")]
fn utimbuf(t: &mut Tracee, addr: u64) -> Result<Option<[libc::timespec; 2]>, Errno> {
    if addr == 0 {
        return Ok(None);
    }
    let b = t.bytes(addr, 16)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    let atime = i64::from_ne_bytes(w);
    w.copy_from_slice(&b[8..]);
    Ok(Some([spec(atime, 0), spec(i64::from_ne_bytes(w), 0)]))
}
