//! Getting the supervisor's listener out of the child: the child installs the filter between
//! fork and exec, which gives it the listener's descriptor, and sends that descriptor to octo over
//! a Unix socket pair (`SCM_RIGHTS`) before it execs. The listener is close-on-exec, so the
//! command itself never holds it (a command holding its own listener could answer for itself).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// The child's side: the filter and the socket to send the listener over.
#[derive(Debug)]
pub(crate) struct ChildSide {
    sock: OwnedFd,
    prog: Arc<Vec<libc::sock_filter>>,
}

/// A connected pair of Unix stream sockets, both close-on-exec: (octo's, the child's).
#[allow(unsafe_code)]
pub(super) fn pair(prog: Arc<Vec<libc::sock_filter>>) -> io::Result<(OwnedFd, ChildSide)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a live two-element array the call fills.
    let rc = unsafe {
        libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just made by socketpair and are owned by nobody else.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((ours, ChildSide { sock: theirs, prog }))
}

impl ChildSide {
    /// Runs in the forked child, before exec: installs the filter and sends its listener to
    /// octo. System calls only, on data prepared before the fork.
    #[allow(unsafe_code)]
    pub(crate) fn enter(&self) -> io::Result<()> {
        let prog = libc::sock_fprog {
            len: u16::try_from(self.prog.len()).map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
            filter: self.prog.as_ptr().cast_mut(),
        };
        // Once octo has read a stopped call, only a fatal signal may interrupt the wait for its
        // answer (Linux 5.19): an interrupted call would be made again after octo made it.
        const WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
        let install = |flags: libc::c_ulong| {
            // SAFETY: a plain seccomp call; `prog` points at the live program for the call.
            unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    flags,
                    std::ptr::from_ref(&prog),
                )
            }
        };
        // SAFETY: a plain prctl call.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut listener = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | WAIT_KILLABLE_RECV);
        if listener < 0 {
            // An older kernel, which does not know the flag.
            listener = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
        }
        let listener = RawFd::try_from(listener).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
        if listener < 0 {
            return Err(io::Error::last_os_error());
        }
        let sent = send_fd(self.sock.as_raw_fd(), listener);
        // SAFETY: the listener was made above and is closed once, here.
        unsafe { libc::close(listener) };
        sent
    }

    /// The child's socket (the probe makes a change on it, which the supervisor must allow).
    pub(super) fn raw_sock(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

/// Room for one descriptor's control message, aligned as `cmsghdr` needs (CMSG_SPACE of one
/// int is 24 bytes on 64-bit targets).
type Control = [u64; 4];

/// A message of one byte (`iov`) with `control_len` bytes of `control`, all on the caller's
/// stack.
#[allow(unsafe_code)]
fn message(iov: &mut libc::iovec, control: &mut Control, control_len: usize) -> libc::msghdr {
    // SAFETY: `msghdr` is plain data for which all zeroes is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = std::ptr::from_mut(iov);
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control_len.min(std::mem::size_of::<Control>()) as _;
    msg
}

/// Sends `fd` over `sock`, with its control message on the stack (no allocation: this runs
/// between fork and exec).
#[allow(unsafe_code)]
fn send_fd(sock: RawFd, fd: RawFd) -> io::Result<()> {
    let mut control: Control = [0; 4];
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: the header's pointers refer to the stack buffers above, which outlive the
    // sendmsg call, and its control length fits the buffer.
    unsafe {
        let msg =
            message(&mut iov, &mut control, libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize);
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if cmsg.is_null() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        if libc::sendmsg(sock, &raw const msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one descriptor from `sock`: `Ok(None)` at end of stream (every child side closed).
#[allow(unsafe_code)]
pub(super) fn recv_fd(sock: RawFd) -> io::Result<Option<OwnedFd>> {
    let mut control: Control = [0; 4];
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: as in `send_fd`; the kernel writes at most `msg_controllen` bytes of control data
    // into the buffer, and a descriptor it passes is ours to own.
    unsafe {
        let mut msg = message(&mut iov, &mut control, std::mem::size_of::<Control>());
        let n = libc::recvmsg(sock, &raw mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if cmsg.is_null() || (*cmsg).cmsg_level != libc::SOL_SOCKET || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return Err(io::Error::other("a message without a descriptor on the guard's socket"));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(Some(OwnedFd::from_raw_fd(fd)))
    }
}
