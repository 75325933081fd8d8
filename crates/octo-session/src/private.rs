//! Files and directories only the user can read: sessions hold code, command output and
//! conversations.

use std::path::Path;

/// Creates `dir` and its missing parents, readable only by the user (0700 on Unix).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Writes `bytes` to `path`, creating it readable only by the user (0600 on Unix) or replacing
/// what it held.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)?.write_all(bytes)
}

/// Creates a new file for writing, readable only by the user (0600 on Unix); fails if it exists.
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// A new private file in `dir` under the first free name of `name(0)`, `name(1)`, … (at most
/// `tries`): nothing is ever overwritten. `None` when none is free or the directory fails.
pub fn create_first_free(
    dir: &Path,
    name: impl Fn(u32) -> String,
    tries: u32,
) -> Option<(std::path::PathBuf, std::fs::File)> {
    for n in 0..tries {
        let path = dir.join(name(n));
        match create_new(&path) {
            Ok(f) => return Some((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
    }
    None
}
