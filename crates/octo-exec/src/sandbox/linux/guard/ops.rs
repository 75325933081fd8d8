//! The changes the supervisor makes on a caller's behalf, through the handle it checked (see
//! `place.rs`): with the caller's own user and groups (octo's, in the fallback, where no user
//! namespace sets them apart), so the kernel's own permission checks still apply.

use super::place::{entry_path, handle_path, Place};
use nix::errno::Errno;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

/// A change to a file's metadata, with its arguments read from the caller.
pub(super) enum Change {
    /// `chmod`.
    Mode(libc::mode_t),
    /// `chown`: user and group (`u32::MAX`: unchanged).
    Owner(u32, u32),
    /// `utimensat`: access and modification times (`None`: now).
    Times(Option<[libc::timespec; 2]>),
    /// `setxattr`: name, value, flags.
    SetAttr(CString, Vec<u8>, i32),
    /// `removexattr`: name.
    RemoveAttr(CString),
    /// An inode-flags `ioctl`: request and its argument's bytes.
    Flags(u32, Vec<u8>),
}

fn check(rc: libc::c_int) -> Result<i64, Errno> {
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(i64::from(rc))
    }
}

fn check_long(rc: libc::ssize_t) -> Result<i64, Errno> {
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(rc as i64)
    }
}

/// Makes `change` to `place`; the call's return value or its error.
#[allow(unsafe_code)]
pub(super) fn apply(place: &Place, change: &Change) -> Result<i64, Errno> {
    // SAFETY (every block below): each call gets NUL-terminated paths and buffers owned here,
    // alive for the call, with their true lengths; descriptors are handles this function's
    // caller owns.
    match (change, place) {
        (Change::Mode(mode), Place::Object(fd)) => {
            check(unsafe { libc::chmod(handle_path(fd).as_ptr(), *mode) })
        }
        (Change::Mode(mode), Place::Entry(dir, name)) => {
            let fd = super::remote::open_at(dir.as_raw_fd(), name, libc::O_PATH | libc::O_NOFOLLOW)?;
            if is_symlink(&fd) {
                return Err(Errno::EOPNOTSUPP);
            }
            check(unsafe { libc::chmod(handle_path(&fd).as_ptr(), *mode) })
        }
        (Change::Mode(mode), Place::Open(fd)) => check(unsafe { libc::fchmod(fd.as_raw_fd(), *mode) }),
        (Change::Owner(u, g), Place::Object(fd)) => {
            check(unsafe { libc::fchownat(fd.as_raw_fd(), c"".as_ptr(), *u, *g, libc::AT_EMPTY_PATH) })
        }
        (Change::Owner(u, g), Place::Entry(dir, name)) => check(unsafe {
            libc::fchownat(dir.as_raw_fd(), name.as_ptr(), *u, *g, libc::AT_SYMLINK_NOFOLLOW)
        }),
        (Change::Owner(u, g), Place::Open(fd)) => check(unsafe { libc::fchown(fd.as_raw_fd(), *u, *g) }),
        (Change::Times(times), place) => {
            let ptr = times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
            match place {
                Place::Object(fd) => {
                    check(unsafe { libc::utimensat(libc::AT_FDCWD, handle_path(fd).as_ptr(), ptr, 0) })
                }
                Place::Entry(dir, name) => check(unsafe {
                    libc::utimensat(dir.as_raw_fd(), name.as_ptr(), ptr, libc::AT_SYMLINK_NOFOLLOW)
                }),
                Place::Open(fd) => check(unsafe { libc::futimens(fd.as_raw_fd(), ptr) }),
            }
        }
        (Change::SetAttr(name, value, flags), place) => {
            let (v, n) = (value.as_ptr().cast(), value.len());
            match place {
                Place::Object(fd) => {
                    check(unsafe { libc::setxattr(handle_path(fd).as_ptr(), name.as_ptr(), v, n, *flags) })
                }
                Place::Entry(dir, entry) => check(unsafe {
                    libc::lsetxattr(entry_path(dir, entry).as_ptr(), name.as_ptr(), v, n, *flags)
                }),
                Place::Open(fd) => {
                    check(unsafe { libc::fsetxattr(fd.as_raw_fd(), name.as_ptr(), v, n, *flags) })
                }
            }
        }
        (Change::RemoveAttr(name), place) => match place {
            Place::Object(fd) => check(unsafe { libc::removexattr(handle_path(fd).as_ptr(), name.as_ptr()) }),
            Place::Entry(dir, entry) => {
                check(unsafe { libc::lremovexattr(entry_path(dir, entry).as_ptr(), name.as_ptr()) })
            }
            Place::Open(fd) => check(unsafe { libc::fremovexattr(fd.as_raw_fd(), name.as_ptr()) }),
        },
        (Change::Flags(request, arg), Place::Open(fd)) => {
            let mut buf = arg.clone();
            check_long(
                unsafe { libc::ioctl(fd.as_raw_fd(), (*request).into(), buf.as_mut_ptr()) } as libc::ssize_t
            )
        }
        (Change::Flags(..), _) => Err(Errno::EBADF),
    }
}

fn is_symlink(fd: &OwnedFd) -> bool {
    nix::sys::stat::fstat(fd).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// Connects the caller's socket (a copy of its descriptor) to the socket file `target` holds.
#[allow(unsafe_code)]
pub(super) fn connect(sock: &OwnedFd, target: &OwnedFd) -> Result<i64, Errno> {
    let path = handle_path(target);
    // SAFETY: `sockaddr_un` is plain data for which zeroes are valid.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_bytes();
    if bytes.len() >= addr.sun_path.len() {
        return Err(Errno::ENAMETOOLONG);
    }
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    // SAFETY: `addr` is a live, initialised sockaddr_un and `len` does not exceed its size.
    check(unsafe { libc::connect(sock.as_raw_fd(), (&raw const addr).cast(), len as libc::socklen_t) })
}

/// A name read from the caller as a C string.
pub(super) fn cstring(bytes: Vec<u8>) -> Result<CString, Errno> {
    CString::new(bytes).map_err(|_| Errno::EINVAL)
}
