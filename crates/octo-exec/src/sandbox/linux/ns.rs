//! The user and mount namespace a command enters: the whole file system made read-only at the
//! mount level (so what Landlock has no right for — `chmod`, `chown`, timestamps, extended
//! attributes — cannot change anything outside the writable roots either), the writable roots
//! bound writable again, the daemons' socket folders and the secret places hidden, and the
//! protected folders inside the writable roots bound read-only.
//!
//! Everything is prepared in the parent ([`NsPlan::new`]); [`NsPlan::enter`] runs in the child
//! between fork and exec and makes only system calls on that data.

use crate::sandbox::policy::Policy;
use nix::errno::Errno;
use nix::mount::MsFlags;
use nix::sched::CloneFlags;
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Which namespaces a command can enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Namespaces {
    /// A user and a mount namespace (unprivileged, or as root to shed its powers).
    User,
    /// Only a mount namespace (root without user namespaces).
    MountOnly,
    /// None (why).
    None(String),
}

/// Mounts that stay writable at the mount level, though nothing in them is writable unless
/// Landlock allows it: device nodes and `/proc` (writes to `/proc/self/…` files, devices under
/// `/dev`), plus the pseudo-terminal and shared-memory folders.
const UNSEALED: &[&str] = &["/dev", "/dev/pts", "/dev/shm", "/proc"];

/// A directory bound over itself: its path and the flags its mount already has, which a
/// remount in a user namespace must keep.
type Bind = (CString, MsFlags);

/// Namespaces a command enters, prepared in the parent.
#[derive(Debug)]
pub(super) struct NsPlan {
    flags: CloneFlags,
    /// `setgroups` denial and the uid and gid maps, for a user namespace.
    maps: Option<(bool, Vec<u8>, Vec<u8>)>,
    /// Whether the whole tree is made read-only first.
    seal: bool,
    /// What is writable again after the seal, outermost first.
    unsealed: Vec<Bind>,
    /// Directories bound over themselves, in order, and whether they become read-only.
    mounts: Vec<(Bind, bool)>,
    /// Directories covered by an empty, read-only file system (daemon sockets hidden).
    hidden: Vec<CString>,
    /// Secret places hidden: folders under an empty file system, files under `/dev/null`
    /// (`true`: a folder), with the flags of `/dev/null`'s mount.
    secrets: Vec<(CString, bool)>,
    null_flags: MsFlags,
}

impl NsPlan {
    /// The plan for `policy`: `paths` are [`Policy::mounts`], `hide` [`Policy::hidden`].
    pub(super) fn new(
        kind: &Namespaces,
        policy: &Policy,
        paths: &[(PathBuf, bool)],
        hide: &[PathBuf],
    ) -> Self {
        let mounts = paths.iter().filter_map(|(p, ro)| Some((bind(p)?, *ro))).collect();
        let hidden = hide.iter().filter_map(|p| cstring(p)).collect();
        let unsealed = unsealed(policy).iter().filter_map(|p| bind(p)).collect();
        let secrets = policy.secret_places().iter().filter_map(|p| Some((cstring(p)?, p.is_dir()))).collect();
        let null_flags = locked_flags(Path::new("/dev/null"));
        let (flags, maps) = match kind {
            Namespaces::User => {
                let (uid, gid) = (nix::unistd::geteuid().as_raw(), nix::unistd::getegid().as_raw());
                // Each maps only itself, root too: a map of every id can only be written from
                // the parent namespace, which the child cannot ask for between fork and exec.
                // Root inside then has no capability outside (no module loading, no keystrokes
                // pushed into another terminal), at the price that files of other users are
                // not writable to it there.
                let (deny, uid_map, gid_map) = (true, format!("{uid} {uid} 1"), format!("{gid} {gid} 1"));
                (
                    CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS,
                    Some((deny, uid_map.into_bytes(), gid_map.into_bytes())),
                )
            }
            Namespaces::MountOnly | Namespaces::None(_) => (CloneFlags::CLONE_NEWNS, None),
        };
        Self { flags, maps, seal: true, unsealed, mounts, hidden, secrets, null_flags }
    }

    /// Runs in the child: only system calls on prepared data.
    pub(super) fn enter(&self) -> Result<(), Errno> {
        nix::sched::unshare(self.flags)?;
        if let Some((deny, uid_map, gid_map)) = &self.maps {
            if *deny {
                write_proc(c"/proc/self/setgroups", b"deny")?;
            }
            write_proc(c"/proc/self/uid_map", uid_map)?;
            write_proc(c"/proc/self/gid_map", gid_map)?;
        }
        let none: Option<&CStr> = None;
        nix::mount::mount(none, c"/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
        if self.seal {
            seal_root()?;
            // A bind copies the read-only flag of the mount it comes from; the remount clears
            // it again (it was set here, so the user namespace may).
            for (path, locked) in &self.unsealed {
                let path = path.as_c_str();
                nix::mount::mount(Some(path), path, none, MsFlags::MS_BIND | MsFlags::MS_REC, none)?;
                let flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | *locked;
                nix::mount::mount(none, path, none, flags, none)?;
            }
        }
        for dir in &self.hidden {
            empty_over(dir)?;
        }
        for (place, folder) in &self.secrets {
            if *folder {
                empty_over(place)?;
            } else {
                let place = place.as_c_str();
                nix::mount::mount(Some(c"/dev/null"), place, none, MsFlags::MS_BIND, none)?;
                let flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | self.null_flags;
                nix::mount::mount(none, place, none, flags, none)?;
            }
        }
        // A recursive bind copies the mounts below it: the workspace, bound first, stays writable
        // inside a read-only folder bound after it.
        for ((path, locked), read_only) in &self.mounts {
            let path = path.as_c_str();
            nix::mount::mount(Some(path), path, none, MsFlags::MS_BIND | MsFlags::MS_REC, none)?;
            if *read_only {
                let flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | *locked;
                nix::mount::mount(none, path, none, flags, none)?;
            }
        }
        // The working directory was entered before these mounts and still points below them:
        // enter it again by name, through the new mounts.
        reenter_cwd()
    }
}

/// Covers `dir` with an empty, read-only file system.
fn empty_over(dir: &CStr) -> Result<(), Errno> {
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_RDONLY;
    nix::mount::mount(Some(c"tmpfs"), dir, Some(c"tmpfs"), flags, Some(c"size=4k,mode=755"))
}

/// What stays writable at the mount level after the seal: the policy's writable directories
/// and [`UNSEALED`], resolved, existing, on a writable mount, outermost first.
fn unsealed(policy: &Policy) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = policy
        .writable()
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .chain(UNSEALED.iter().map(PathBuf::from))
        .filter(|p| p.exists() && !on_read_only_mount(p))
        .collect();
    // Outermost first; equal paths next to each other, so each is bound once.
    out.sort_by(|a, b| a.components().count().cmp(&b.components().count()).then_with(|| a.cmp(b)));
    out.dedup();
    out
}

/// Makes every mount read-only (`mount_setattr` with `AT_RECURSIVE`, Linux 5.12; Landlock needs
/// 5.13, so any kernel that gets here has it).
#[allow(unsafe_code)]
fn seal_root() -> Result<(), Errno> {
    let attr =
        libc::mount_attr { attr_set: libc::MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: the path is a NUL-terminated literal and `attr` a live, fully initialised struct
    // whose size is passed with it; the call reads both and writes neither.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            std::ptr::from_ref(&attr),
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::last())
    }
}

fn cstring(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

fn bind(p: &Path) -> Option<Bind> {
    Some((cstring(p)?, locked_flags(p)))
}

/// `chdir(getcwd())`, with the path in a buffer on the stack.
#[allow(unsafe_code)]
fn reenter_cwd() -> Result<(), Errno> {
    let mut buf = [0u8; 4096];
    // SAFETY: getcwd writes at most `buf.len()` bytes, NUL included, into the buffer it is
    // given, which lives for the whole call.
    let got = unsafe { libc::getcwd(buf.as_mut_ptr().cast(), buf.len()) };
    if got.is_null() {
        return Err(Errno::last());
    }
    let cwd = CStr::from_bytes_until_nul(&buf).map_err(|_| Errno::ENAMETOOLONG)?;
    nix::unistd::chdir(cwd)
}

fn write_proc(path: &CStr, data: &[u8]) -> Result<(), Errno> {
    use nix::fcntl::OFlag;
    let fd = nix::fcntl::open(path, OFlag::O_WRONLY | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty())?;
    match nix::unistd::write(&fd, data)? {
        n if n == data.len() => Ok(()),
        _ => Err(Errno::EIO),
    }
}

/// Whether `path` lies on a mount that is read-only already (it stays so: a user namespace may
/// not make it writable).
fn on_read_only_mount(path: &Path) -> bool {
    use nix::sys::statvfs::FsFlags;
    nix::sys::statvfs::statvfs(path).is_ok_and(|st| st.flags().contains(FsFlags::ST_RDONLY))
}

/// The flags of the mount `path` is on that a remount in a user namespace must keep.
fn locked_flags(path: &Path) -> MsFlags {
    use nix::sys::statvfs::FsFlags;
    let Ok(st) = nix::sys::statvfs::statvfs(path) else { return MsFlags::empty() };
    let f = st.flags();
    let mut out = MsFlags::empty();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if f.contains(fs) {
            out |= ms;
        }
    }
    out
}
