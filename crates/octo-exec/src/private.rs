//! Files and directories only the user can read: command output can hold secrets.

use std::fs::File;
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

/// Creates a file that must not exist yet (so a planted symlink is never followed), readable by
/// its owner only (0600 on Unix).
pub fn new_file(path: &Path) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}
