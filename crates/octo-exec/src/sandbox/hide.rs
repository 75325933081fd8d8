//! Which secret places a command may not read, and the read rules that leave them out where
//! no mount namespace can hide them.
//!
//! A secret place (`~/.ssh`, `~/.aws/credentials`, octo's key file and saved sessions) is hidden
//! whole, unless it holds somewhere a command must reach — the workspace, or a writable root
//! such as this session's output folder inside octo's home. Then its entries are hidden instead,
//! all but the ones on the way there, folder by folder.
//!
//! Symbolic links are never taken as rules' targets: a rule on a link is a rule on what it
//! points to (a link `x -> /home/u` in a repository would make the whole home readable or
//! writable), and what a link points to has rules of its own where it really lies.

use std::path::{Path, PathBuf};

/// The secret places of `secrets` to hide, resolved and existing, with any that holds one of
/// `kept` split around it.
pub(super) fn places(secrets: &[PathBuf], kept: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for s in secrets {
        if s.symlink_metadata().is_err() {
            continue;
        }
        let r = real(s);
        if kept.iter().any(|k| k.starts_with(&r)) {
            if r.is_dir() {
                around(&r, kept, &mut out);
            }
        } else if !out.iter().any(|o| r.starts_with(o)) {
            out.retain(|o| !o.starts_with(&r));
            out.push(r);
        }
    }
    out
}

/// The secret places of `secrets` that do not exist, each with its existing part resolved (a
/// home reached through a link is named where it really is).
pub(super) fn missing(secrets: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for s in secrets.iter().filter(|s| s.symlink_metadata().is_err()) {
        let Some(base) = s.ancestors().skip(1).find(|a| a.symlink_metadata().is_ok()) else { continue };
        let Ok(rest) = s.strip_prefix(base) else { continue };
        let path = real(base).join(rest);
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The entries of `dir` that neither are nor hold one of `kept`, pushed to `out`; a folder
/// holding one is split in turn. Links are skipped.
fn around(dir: &Path, kept: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_symlink() || kept.contains(&path) {
            continue;
        }
        if kept.iter().any(|k| k.starts_with(&path)) {
            if kind.is_dir() {
                around(&path, kept, out);
            }
        } else if !out.contains(&path) {
            out.push(path);
        }
    }
}

/// Where Landlock may grant reading when `hidden` must stay unreadable: the whole tree when
/// nothing is hidden, else every entry from `/` down that neither is nor holds a hidden place
/// (a folder holding one split in turn; links skipped, their targets covered where they lie).
pub(super) fn readable(hidden: &[PathBuf]) -> Vec<PathBuf> {
    if hidden.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let mut out = Vec::new();
    split(Path::new("/"), hidden, &mut out);
    out
}

/// The entries of `dir` but those in `left_out`, a folder holding one of them split in turn;
/// links are skipped.
pub(super) fn split(dir: &Path, left_out: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_symlink() || left_out.contains(&path) {
            continue;
        }
        if left_out.iter().any(|k| k.starts_with(&path)) && kind.is_dir() {
            split(&path, left_out, out);
        } else {
            out.push(path);
        }
    }
}

/// The resolved path (the path itself when it cannot be resolved).
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_secret_holding_a_writable_root_is_hidden_around_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let octo = root.join(".octo");
        std::fs::create_dir_all(octo.join("output/s1")).unwrap();
        std::fs::create_dir_all(octo.join("output/s0")).unwrap();
        std::fs::write(octo.join("output/note"), "x").unwrap();
        std::fs::create_dir_all(root.join(".ssh")).unwrap();
        std::os::unix::fs::symlink(root.join(".ssh"), octo.join("output/link")).unwrap();
        let secrets = vec![octo.join("output"), root.join(".ssh"), root.join(".aws")];
        let mut got = places(&secrets, &[octo.join("output/s1")]);
        got.sort();
        assert_eq!(
            got,
            vec![root.join(".octo/output/note"), root.join(".octo/output/s0"), root.join(".ssh")]
        );
    }

    #[test]
    fn the_readable_tree_leaves_out_the_hidden_and_takes_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::write(root.join("home/.bashrc"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("home"), root.join("h")).unwrap();
        let mut out = Vec::new();
        split(&root, &[root.join("home/.ssh")], &mut out);
        assert_eq!(out, vec![root.join("home/.bashrc")]);
        assert_eq!(readable(&[]), vec![PathBuf::from("/")]);
    }
}
