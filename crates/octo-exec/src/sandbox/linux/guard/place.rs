//! Where a stopped call's file is, found the way the kernel would find it, and held open so
//! that what is checked is exactly what is changed.
//!
//! A path is opened here (`O_PATH`) from the caller's working directory or descriptor; the
//! handle's own path (`/proc/self/fd/N`) is what the rules judge, and the change is then made
//! through the handle. Swapping a symlink or a folder between the check and the change cannot
//! redirect it: the handle already names one file.

use super::remote::{open_at, Tracee};
use nix::errno::Errno;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A file a call would change.
pub(super) enum Place {
    /// The file itself (a path resolved to its end, symlinks followed), as a path handle.
    Object(OwnedFd),
    /// An entry of a folder, not followed if it is a symlink (the `l…` calls,
    /// `AT_SYMLINK_NOFOLLOW`): the folder's handle and the entry's name.
    Entry(OwnedFd, CString),
    /// A copy of one of the caller's open descriptors.
    Open(OwnedFd),
}

/// A [`Place`] and where it lies, for the rules.
pub(super) struct Found {
    pub(super) place: Place,
    pub(super) at: PathBuf,
}

/// `/proc/self/fd/N` for a handle of octo's: a path the kernel follows to exactly that file.
pub(super) fn handle_path(fd: &OwnedFd) -> CString {
    CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default()
}

/// `/proc/self/fd/N/name`: the entry `name` of the folder handle `dir`, not followed by the
/// `l…` calls.
pub(super) fn entry_path(dir: &OwnedFd, name: &CStr) -> CString {
    let mut bytes = handle_path(dir).into_bytes();
    bytes.push(b'/');
    bytes.extend_from_slice(name.to_bytes());
    CString::new(bytes).unwrap_or_default()
}

/// Where the handle `fd` lies (its `/proc/self/fd` link).
pub(super) fn where_is(fd: &OwnedFd) -> Result<PathBuf, Errno> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(super::remote::io_errno)
}

/// The caller's descriptor `n`.
pub(super) fn open_fd(t: &mut Tracee, n: i32) -> Result<Found, Errno> {
    let fd = t.fd(n)?;
    let at = where_is(&fd)?;
    Ok(Found { place: Place::Open(fd), at })
}

/// `path`, relative to the caller's `dirfd` (or working directory), followed to its end or (not
/// `follow`) its last entry left as it is.
pub(super) fn locate(t: &mut Tracee, dirfd: i32, path: &[u8], follow: bool) -> Result<Found, Errno> {
    if path.is_empty() {
        return Err(Errno::ENOENT);
    }
    // `/proc/self` would be octo's own here: the caller's is its number's.
    let path = own_proc(path, t.tid);
    if !follow {
        if let Some((dir, name)) = split_entry(&path) {
            let parent = open_from(t, dirfd, &dir, libc::O_PATH | libc::O_DIRECTORY)?;
            let at = where_is(&parent)?.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
            return Ok(Found { place: Place::Entry(parent, name), at });
        }
    }
    let fd = open_from(t, dirfd, &path, libc::O_PATH)?;
    let at = where_is(&fd)?;
    Ok(Found { place: Place::Object(fd), at })
}

fn open_from(t: &mut Tracee, dirfd: i32, path: &[u8], flags: i32) -> Result<OwnedFd, Errno> {
    let c = CString::new(path).map_err(|_| Errno::EINVAL)?;
    if path.starts_with(b"/") {
        open_at(libc::AT_FDCWD, &c, flags)
    } else {
        let base = t.dir(dirfd)?;
        open_at(base.as_raw_fd(), &c, flags)
    }
}

/// `/proc/self/…` and `/proc/thread-self/…` as `/proc/<tid>/…`.
fn own_proc(path: &[u8], tid: u32) -> Vec<u8> {
    for prefix in [&b"/proc/self"[..], b"/proc/thread-self"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            if rest.is_empty() || rest.starts_with(b"/") {
                let mut out = format!("/proc/{tid}").into_bytes();
                out.extend_from_slice(rest);
                return out;
            }
        }
    }
    path.to_vec()
}

/// The folder and last entry of `path`, when its last entry is a plain name (not `.`, `..`, nor
/// followed by a slash, which makes the kernel follow it anyway).
fn split_entry(path: &[u8]) -> Option<(Vec<u8>, CString)> {
    if path.ends_with(b"/") {
        return None;
    }
    let (dir, name) = match path.iter().rposition(|b| *b == b'/') {
        Some(0) => (b"/".to_vec(), &path[1..]),
        Some(i) => (path[..i].to_vec(), &path[i + 1..]),
        None => (b".".to_vec(), path),
    };
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    Some((dir, CString::new(name).ok()?))
}

/// Where commands may change files' metadata and reach sockets: inside a writable root (its
/// entries, not the root itself, unless the root lies in the workspace).
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    roots: Vec<PathBuf>,
    workspace: PathBuf,
}

impl Roots {
    /// `roots` and `workspace` are resolved here.
    pub(crate) fn new(roots: &[PathBuf], workspace: &Path) -> Self {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        Self { roots: roots.iter().map(|r| real(r)).collect(), workspace: real(workspace) }
    }

    /// Whether `found` may be changed.
    pub(super) fn allow(&self, found: &Found) -> bool {
        let bytes = found.at.as_os_str().as_bytes();
        // Pipes, sockets and other descriptors without a path ("pipe:[123]"), memfds.
        if !bytes.starts_with(b"/") || bytes.starts_with(b"/memfd:") {
            return true;
        }
        if let (true, Place::Open(fd) | Place::Object(fd)) = (bytes.ends_with(b" (deleted)"), &found.place) {
            // A removed file no name leads to any more: changing it changes nothing anyone
            // finds. One whose name merely ends so is judged by that name.
            if nix::sys::stat::fstat(fd).is_ok_and(|st| st.st_nlink == 0) {
                return true;
            }
        }
        self.inside(&found.at)
    }

    /// Whether `at` lies inside a root.
    pub(super) fn inside(&self, at: &Path) -> bool {
        self.roots.iter().any(|r| at.starts_with(r) && (at != r || r.starts_with(&self.workspace)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_split_as_the_kernel_reads_them() {
        let s = |p: &str| split_entry(p.as_bytes()).map(|(d, n)| (String::from_utf8(d).unwrap(), n));
        assert_eq!(s("a/b/c"), Some(("a/b".into(), c"c".to_owned())));
        assert_eq!(s("/etc"), Some(("/".into(), c"etc".to_owned())));
        assert_eq!(s("name"), Some((".".into(), c"name".to_owned())));
        assert_eq!(s("dir/"), None);
        assert_eq!(s("a/.."), None);
        assert_eq!(s("."), None);
        assert_eq!(own_proc(b"/proc/self/fd/3", 42), b"/proc/42/fd/3");
        assert_eq!(own_proc(b"/proc/selfish", 42), b"/proc/selfish");
    }

    #[test]
    fn a_root_itself_is_left_alone_unless_it_lies_in_the_workspace() {
        let roots =
            Roots { roots: vec!["/ws/src".into(), "/tmp".into(), "/ws".into()], workspace: "/ws".into() };
        assert!(roots.inside(Path::new("/ws/src")));
        assert!(roots.inside(Path::new("/ws")));
        assert!(roots.inside(Path::new("/tmp/x")));
        assert!(!roots.inside(Path::new("/tmp")));
        assert!(!roots.inside(Path::new("/home/u")));
        assert!(!roots.inside(Path::new("/wsx")));
    }
}
