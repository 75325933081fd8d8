//! Reading what a stopped call refers to in the calling process: its memory (paths, names,
//! buffers), its working directory and its descriptors.
//!
//! Everything is opened first and checked after (`SECCOMP_IOCTL_NOTIF_ID_VALID`): if the call is
//! still pending, the process that made it is still alive, so what was opened by its number was
//! its own and not a newcomer's that reused the number.

use nix::errno::Errno;
use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::FileExt;

/// The longest path the kernel takes (`PATH_MAX`, its NUL included).
pub(super) const PATH_MAX: usize = 4096;

/// The process (thread) whose call is pending.
pub(super) struct Tracee {
    /// The calling thread's id, as the notification gives it.
    pub(super) tid: u32,
    listener: RawFd,
    id: u64,
    mem: Option<File>,
    pidfd: Option<OwnedFd>,
}

impl Tracee {
    pub(super) fn new(tid: u32, listener: RawFd, id: u64) -> Self {
        Self { tid, listener, id, mem: None, pidfd: None }
    }

    /// `Ok` while the call is still pending (so the caller is alive and is who it was).
    #[allow(unsafe_code)]
    pub(super) fn check(&self) -> Result<(), Errno> {
        let mut id = self.id;
        // SAFETY: the ioctl reads the u64 the pointer refers to, which lives for the call.
        let rc = unsafe { libc::ioctl(self.listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &raw mut id) };
        if rc == 0 {
            Ok(())
        } else {
            Err(Errno::ENOENT)
        }
    }

    fn mem(&mut self) -> Result<&File, Errno> {
        if self.mem.is_none() {
            let f = File::open(format!("/proc/{}/mem", self.tid)).map_err(io_errno)?;
            self.check()?;
            self.mem = Some(f);
        }
        self.mem.as_ref().ok_or(Errno::EFAULT)
    }

    /// `len` bytes at `addr` in the caller's memory.
    pub(super) fn bytes(&mut self, addr: u64, len: usize) -> Result<Vec<u8>, Errno> {
        if addr == 0 {
            return Err(Errno::EFAULT);
        }
        let mut buf = vec![0u8; len];
        let mem = self.mem()?;
        let mut done = 0;
        while done < len {
            match mem.read_at(&mut buf[done..], addr + done as u64) {
                Ok(0) | Err(_) => return Err(Errno::EFAULT),
                Ok(n) => done += n,
            }
        }
        Ok(buf)
    }

    /// The NUL-terminated string at `addr` (without its NUL), of at most `max` bytes with it:
    /// `ENAMETOOLONG` beyond (as the kernel says of a path), `EFAULT` where it cannot be read.
    pub(super) fn string(&mut self, addr: u64, max: usize) -> Result<Vec<u8>, Errno> {
        if addr == 0 {
            return Err(Errno::EFAULT);
        }
        let mem = self.mem()?;
        let mut out = Vec::new();
        let mut at = addr;
        while out.len() < max {
            // Up to the end of the page, so a string ending before an unmapped page reads.
            let room = 4096 - (at % 4096) as usize;
            let mut chunk = vec![0u8; room.min(max - out.len())];
            let n = match mem.read_at(&mut chunk, at) {
                Ok(0) | Err(_) => return Err(Errno::EFAULT),
                Ok(n) => n,
            };
            if let Some(end) = chunk[..n].iter().position(|b| *b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
            at += n as u64;
        }
        Err(Errno::ENAMETOOLONG)
    }

    /// The caller's working directory (`AT_FDCWD`) or its descriptor `dirfd`, as a path handle
    /// to resolve a relative path from.
    pub(super) fn dir(&mut self, dirfd: i32) -> Result<OwnedFd, Errno> {
        let path = if dirfd == libc::AT_FDCWD {
            format!("/proc/{}/cwd", self.tid)
        } else if dirfd < 0 {
            return Err(Errno::EBADF);
        } else {
            format!("/proc/{}/fd/{dirfd}", self.tid)
        };
        let fd =
            open_path(&path, libc::O_PATH).map_err(|e| if e == Errno::ENOENT { Errno::EBADF } else { e })?;
        self.check()?;
        Ok(fd)
    }

    /// A copy of the caller's descriptor `n` (the same open file), through its pidfd.
    #[allow(unsafe_code)]
    pub(super) fn fd(&mut self, n: i32) -> Result<OwnedFd, Errno> {
        if n < 0 {
            return Err(Errno::EBADF);
        }
        if self.pidfd.is_none() {
            let tgid = thread_group(self.tid)?;
            // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) };
            let fd = RawFd::try_from(fd).map_err(|_| Errno::EBADF)?;
            if fd < 0 {
                return Err(Errno::last());
            }
            // SAFETY: the descriptor was just made and is owned by nobody else.
            self.pidfd = Some(unsafe { OwnedFd::from_raw_fd(fd) });
            self.check()?;
        }
        let pidfd = self.pidfd.as_ref().map(std::os::fd::AsRawFd::as_raw_fd).ok_or(Errno::EBADF)?;
        // SAFETY: pidfd_getfd takes a pidfd, a descriptor number and flags, and returns a new
        // descriptor or -1.
        let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd, n, 0) };
        let got = RawFd::try_from(got).map_err(|_| Errno::EBADF)?;
        if got < 0 {
            return Err(Errno::last());
        }
        // SAFETY: as above.
        Ok(unsafe { OwnedFd::from_raw_fd(got) })
    }
}

/// The process a thread belongs to (`Tgid` in its status).
fn thread_group(tid: u32) -> Result<i32, Errno> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(io_errno)?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or(Errno::ESRCH)
}

/// Opens `path` with `flags` (close-on-exec added).
#[allow(unsafe_code)]
pub(super) fn open_path(path: &str, flags: i32) -> Result<OwnedFd, Errno> {
    let c = std::ffi::CString::new(path).map_err(|_| Errno::EINVAL)?;
    open_at(libc::AT_FDCWD, &c, flags)
}

/// `openat(dir, path, flags | O_CLOEXEC)`.
#[allow(unsafe_code)]
pub(super) fn open_at(dir: RawFd, path: &std::ffi::CStr, flags: i32) -> Result<OwnedFd, Errno> {
    // SAFETY: the path is NUL-terminated and outlives the call.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: the descriptor was just made and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The errno of an I/O error (`EIO` when it has none).
pub(super) fn io_errno(e: std::io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::EIO, Errno::from_raw)
}
