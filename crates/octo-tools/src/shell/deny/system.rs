//! Commands that destroy the system beneath the files: formatting a file system and writing
//! onto a block device (`dd of=`, `tee`, `cp`, … or a redirection).

use crate::shell::syntax::{self, Word};
use std::path::Path;

/// Why program `name` run with `args` in `cwd` is refused: it formats a file system or writes
/// onto a device.
pub(super) fn destroys_system(name: &str, args: &[Word], cwd: &Path) -> Option<String> {
    match name {
        n if formats(n) => Some(format!("`{n}` formats a file system")),
        "dd" => dd_onto_device(args, cwd),
        "tee" | "cp" | "mv" | "install" | "shred" | "truncate" => writes_onto_device(name, args, cwd),
        _ => None,
    }
}

/// Whether a redirection to `path` would write onto a device (not `/dev/null` and its kin).
pub(super) fn is_device(path: &Path) -> bool {
    let p = path.to_str().unwrap_or("");
    p.starts_with("/dev/")
        && !matches!(
            p,
            "/dev/null"
                | "/dev/zero"
                | "/dev/stdout"
                | "/dev/stderr"
                | "/dev/stdin"
                | "/dev/tty"
                | "/dev/random"
                | "/dev/urandom"
        )
        && !p.starts_with("/dev/fd/")
        && !p.starts_with("/dev/shm/")
        && !p.starts_with("/dev/pts/")
}

fn formats(name: &str) -> bool {
    name == "mkfs" || name.starts_with("mkfs.") || name == "mke2fs" || name == "wipefs"
}

fn dd_onto_device(args: &[Word], cwd: &Path) -> Option<String> {
    args.iter().find_map(|a| a.text.strip_prefix("of=")).and_then(|of| {
        let path = syntax::resolve(cwd, of);
        is_device(&path).then(|| format!("`dd` writing onto the device {}", path.display()))
    })
}

fn writes_onto_device(name: &str, args: &[Word], cwd: &Path) -> Option<String> {
    args.iter()
        .filter(|a| !a.dynamic && !a.text.starts_with('-'))
        .map(|a| syntax::resolve(cwd, &a.text))
        .find(|p| is_device(p))
        .map(|p| format!("`{name}` writing onto the device {}", p.display()))
}
