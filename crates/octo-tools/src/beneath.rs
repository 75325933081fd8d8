//! Writing a file beneath a directory so that no name on the way can lead elsewhere, even one
//! changed while the write runs: the folder is opened relative to a handle of the root with
//! symlinks that leave it refused during resolution (`openat2` with `RESOLVE_BENEATH`; where the
//! kernel lacks it, one component at a time with `O_NOFOLLOW`), and the temporary file is made,
//! written and renamed into place on that folder's handle — never by name. A command that swaps
//! a folder for a symlink to the outside between octo's check and its write meets a refusal, and
//! no temporary file is ever created outside the target's real folder.

use std::io;
use std::path::{Component, Path};

/// Why a write beneath the root was refused: a name on the way leads outside it.
pub const LEAVES_ROOT: &str = "a folder on the way is a link that leads outside the workspace";

/// Writes `content` to `rel` (relative, normalized: no `..`) beneath `root`, atomically, creating
/// missing folders; an existing file keeps its permissions. A symlinked component that leads
/// outside `root` (or, without `openat2`, any symlinked folder) fails with
/// [`io::ErrorKind::PermissionDenied`] and [`LEAVES_ROOT`].
pub fn write_beneath(root: &Path, rel: &Path, content: &[u8]) -> io::Result<()> {
    imp::write_beneath(root, rel, content)
}

/// Removes the file `rel` beneath `root` (missing: nothing to do), unlinking it on its folder's
/// handle: a folder on the way that became a link to the outside is refused as for a write.
pub fn remove_beneath(root: &Path, rel: &Path) -> io::Result<()> {
    imp::remove_beneath(root, rel)
}

/// The components of `rel` as names, refusing anything but plain names.
fn names(rel: &Path) -> io::Result<Vec<&std::ffi::OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a path beneath the root: {}", rel.display()),
            )),
        })
        .collect()
}

#[cfg(unix)]
mod imp {
    use super::{names, LEAVES_ROOT};
    use rustix::fd::OwnedFd;
    use rustix::fs::{AtFlags, Mode, OFlags};
    use rustix::io::Errno;
    use std::ffi::OsStr;
    use std::io::{self, Write};
    use std::path::Path;
    use std::sync::atomic::{AtomicU64, Ordering};

    const DIR: OFlags = OFlags::DIRECTORY.union(OFlags::RDONLY).union(OFlags::CLOEXEC);

    pub(super) fn write_beneath(root: &Path, rel: &Path, content: &[u8]) -> io::Result<()> {
        let parts = names(rel)?;
        let Some((name, folders)) = parts.split_last() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name"));
        };
        // The root itself is the user's (the workspace, a configured writable root): made when
        // missing, as a configured scratch folder may be.
        let root = match rustix::fs::open(root, DIR, Mode::empty()) {
            Err(Errno::NOENT) => {
                std::fs::create_dir_all(root)?;
                rustix::fs::open(root, DIR, Mode::empty())?
            }
            other => other?,
        };
        let folder = open_folder(&root, folders)?;
        put(&folder, name, content)
    }

    pub(super) fn remove_beneath(root: &Path, rel: &Path) -> io::Result<()> {
        let parts = names(rel)?;
        let Some((name, folders)) = parts.split_last() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name"));
        };
        let root = rustix::fs::open(root, DIR, Mode::empty())?;
        let folder =
            match if folders.is_empty() { rustix::io::dup(&root) } else { open_beneath(&root, folders) } {
                Err(Errno::NOENT) => return Ok(()),
                other => other.map_err(refused)?,
            };
        match rustix::fs::unlinkat(&folder, *name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The folder `folders` beneath `root`, created where missing. Each prefix is opened from
    /// the root itself, so a symlink may lead anywhere inside the root but never out of it.
    fn open_folder(root: &OwnedFd, folders: &[&OsStr]) -> io::Result<OwnedFd> {
        let mut dir = rustix::io::dup(root)?;
        for i in 1..=folders.len() {
            let prefix = &folders[..i];
            dir = match open_beneath(root, prefix) {
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&dir, prefix[i - 1], Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    open_beneath(root, prefix).map_err(refused)?
                }
                other => other.map_err(refused)?,
            };
        }
        Ok(dir)
    }

    /// The folder `names` beneath `root`: `openat2` refusing to leave it, else (no `openat2` in
    /// this kernel, or a seccomp filter refusing it) one name at a time following no symlink.
    fn open_beneath(root: &OwnedFd, names: &[&OsStr]) -> Result<OwnedFd, Errno> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::ResolveFlags;
            let path: std::path::PathBuf = names.iter().collect();
            let how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(root, &path, DIR, Mode::empty(), how) {
                Err(Errno::NOSYS | Errno::PERM) => {}
                other => return other,
            }
        }
        let mut dir = rustix::io::dup(root)?;
        for name in names {
            dir = rustix::fs::openat(&dir, *name, DIR | OFlags::NOFOLLOW, Mode::empty())?;
        }
        Ok(dir)
    }

    /// A refused step as the error the tools show.
    fn refused(e: Errno) -> io::Error {
        match e {
            Errno::XDEV | Errno::LOOP | Errno::NOTDIR => {
                io::Error::new(io::ErrorKind::PermissionDenied, LEAVES_ROOT)
            }
            other => other.into(),
        }
    }

    /// Writes `name` in `folder` through a temporary file made, written and renamed on the
    /// folder's handle.
    fn put(folder: &OwnedFd, name: &OsStr, content: &[u8]) -> io::Result<()> {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let existing = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW).ok();
        if existing.as_ref().is_some_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_dir()) {
            return Err(io::Error::new(io::ErrorKind::IsADirectory, "it is a folder"));
        }
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp =
            format!(".octo-write-{}-{}-{nonce:x}", std::process::id(), MADE.fetch_add(1, Ordering::Relaxed));
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(folder, tmp.as_str(), flags, Mode::from_raw_mode(0o666))?;
        let written = fill(fd, content, existing.map(|s| s.st_mode & 0o7777));
        let placed = written.and_then(|()| Ok(rustix::fs::renameat(folder, tmp.as_str(), folder, name)?));
        if placed.is_err() {
            let _ = rustix::fs::unlinkat(folder, tmp.as_str(), AtFlags::empty());
        }
        placed
    }

    /// The temporary file's content, synced, with the replaced file's permissions.
    fn fill(fd: OwnedFd, content: &[u8], mode: Option<u32>) -> io::Result<()> {
        if let Some(mode) = mode {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        }
        let mut file = std::fs::File::from(fd);
        file.write_all(content)?;
        file.sync_all()
    }
}

#[cfg(not(unix))]
mod imp {
    use std::io;
    use std::path::Path;

    pub(super) fn write_beneath(root: &Path, rel: &Path, content: &[u8]) -> io::Result<()> {
        super::names(rel)?;
        crate::atomic::write_atomic(&root.join(rel), content)
    }

    pub(super) fn remove_beneath(root: &Path, rel: &Path) -> io::Result<()> {
        super::names(rel)?;
        match std::fs::remove_file(root.join(rel)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn writes_creating_folders_and_keeping_permissions() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write_beneath(root, Path::new("a/b/c.txt"), b"one\n").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("a/b/c.txt")).unwrap(), "one\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join("a/b/c.txt"), std::fs::Permissions::from_mode(0o750)).unwrap();
        write_beneath(root, Path::new("a/b/c.txt"), b"two\n").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("a/b/c.txt")).unwrap(), "two\n");
        let mode = std::fs::metadata(root.join("a/b/c.txt")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        let left: Vec<_> =
            std::fs::read_dir(root.join("a/b")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["c.txt"], "no temporary file left");
    }

    #[test]
    fn a_link_inside_is_followed_and_a_link_outside_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        std::fs::create_dir_all(root.join("src/real")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        symlink("real", root.join("src/in")).unwrap();
        symlink("../real-too", root.join("src/up")).unwrap();
        std::fs::create_dir_all(root.join("real-too")).unwrap();
        symlink(&outside, root.join("src/out")).unwrap();
        symlink("../../outside", root.join("src/rel-out")).unwrap();
        write_beneath(&root, Path::new("src/in/a.txt"), b"in\n").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("src/real/a.txt")).unwrap(), "in\n");
        for link in ["src/out/a.txt", "src/rel-out/a.txt", "src/out/new/a.txt"] {
            let err = write_beneath(&root, Path::new(link), b"x\n").unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{link}: {err}");
            assert!(err.to_string().contains("outside the workspace"), "{err}");
        }
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing written outside");
        // A link sideways inside the root (up from `src`, still in the workspace) is followed
        // where the kernel resolves beneath the root.
        if write_beneath(&root, Path::new("src/up/b.txt"), b"up\n").is_ok() {
            assert_eq!(std::fs::read_to_string(root.join("real-too/b.txt")).unwrap(), "up\n");
        }
    }

    #[test]
    fn a_path_that_is_not_plain_names_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        for bad in ["../x", "/etc/x", ""] {
            assert!(write_beneath(tmp.path(), Path::new(bad), b"x").is_err(), "{bad}");
        }
    }
}
