//! Recursive deletes (`rm -r`, `find -delete`) of the root, the home directory, an ancestor of it
//! or a top-level system directory, and `rm -r` on a target only known at run time.

use super::words::{basename, glob_base};
use crate::shell::syntax::{self, Simple, Word};
use std::path::Path;

/// Why `rm ARGS` (run in `cwd`) is refused: a recursive delete of something octo must not lose.
pub(super) fn dangerous_rm(args: &[Word], cwd: &Path, home: &Path) -> Option<String> {
    if !is_recursive_rm(args) {
        return None;
    }
    let mut end = false;
    args.iter()
        .filter(|a| {
            if !end && a.text == "--" {
                end = true;
                return false;
            }
            end || !a.text.starts_with('-') || a.text == "-"
        })
        .find_map(|a| dangerous_target(a, cwd, home))
        .map(|what| format!("`rm -r` on {what}"))
}

/// Why `find ARGS` (run in `cwd`) is refused: it deletes what it finds under a start point octo
/// must not lose.
pub(super) fn dangerous_find(args: &[Word], cwd: &Path, home: &Path) -> Option<String> {
    let starts: Vec<&Word> =
        args.iter().take_while(|a| !(a.text.starts_with('-') || a.text == "(" || a.text == "!")).collect();
    let expr: Vec<&str> = args.iter().skip(starts.len()).map(|a| a.text.as_str()).collect();
    let deletes = expr.contains(&"-delete")
        || expr.windows(2).any(|w| {
            matches!(w[0], "-exec" | "-execdir" | "-ok" | "-okdir")
                && matches!(basename(w[1]), "rm" | "shred" | "unlink")
        });
    if !deletes {
        return None;
    }
    let starts = if starts.is_empty() {
        vec![".".to_owned()]
    } else {
        starts.iter().map(|w| w.text.clone()).collect()
    };
    starts.iter().find_map(|s| {
        let w = Word { text: s.clone(), dynamic: false, glob: s.contains(['*', '?', '[']), vars: Vec::new() };
        dangerous_target(&w, cwd, home).map(|what| format!("`find … -delete` on {what}"))
    })
}

/// Whether `rm ARGS` in command `c` is recursive with a target only known when it runs: a
/// computed path, or a relative one after `cd` to a computed directory.
pub(super) fn unknown_target(c: &Simple, args: &[Word]) -> bool {
    if !is_recursive_rm(args) {
        return false;
    }
    let computed = args.iter().any(|a| a.dynamic && !a.text.starts_with('-'));
    let unknown_dir =
        !c.cwd_known && args.iter().any(|a| !a.text.starts_with('-') && !a.text.starts_with('/'));
    computed || unknown_dir
}

fn is_recursive_rm(args: &[Word]) -> bool {
    let mut end = false;
    args.iter().any(|a| {
        let t = a.text.as_str();
        if end || a.dynamic {
            return false;
        }
        if t == "--" {
            end = true;
            return false;
        }
        // GNU accepts any unambiguous prefix: `--recur`, `--rec`.
        (t.starts_with("--") && t.len() >= 3 && "--recursive".starts_with(t))
            || (t.starts_with('-') && !t.starts_with("--") && (t.contains('r') || t.contains('R')))
    })
}

/// What a target would destroy, when it is the root, the home directory (or an ancestor of it),
/// or a top-level system directory; a glob counts as the directory it expands in.
fn dangerous_target(w: &Word, cwd: &Path, home: &Path) -> Option<String> {
    if w.dynamic {
        return None;
    }
    let (base, glob) = if w.glob {
        let fixed = glob_base(&w.text);
        (if fixed.is_empty() && w.text.starts_with('/') { "/".to_owned() } else { fixed }, true)
    } else {
        (w.text.clone(), false)
    };
    let mut paths = vec![syntax::resolve(cwd, &base)];
    if !glob && w.text.ends_with('/') {
        // `rm -rf link/` deletes what the link points to.
        paths.push(crate::path::real_path(&paths[0]));
    }
    for p in paths {
        let every = if glob { "everything in " } else { "" };
        if p == Path::new("/") {
            return Some(format!("{every}the root of the file system"));
        }
        if home.starts_with(&p) && p.components().count() > 1 {
            return Some(if p == home {
                format!("{every}the home directory")
            } else {
                format!("{every}{} (which holds the home directory)", p.display())
            });
        }
        if p.parent() == Some(Path::new("/")) && is_system_dir(&p) {
            return Some(format!("{every}the system directory {}", p.display()));
        }
    }
    None
}

fn is_system_dir(p: &Path) -> bool {
    matches!(
        p.to_str().unwrap_or(""),
        "/bin"
            | "/boot"
            | "/dev"
            | "/etc"
            | "/home"
            | "/lib"
            | "/lib64"
            | "/opt"
            | "/proc"
            | "/root"
            | "/sbin"
            | "/sys"
            | "/usr"
            | "/var"
            | "/Users"
            | "/System"
            | "/Library"
            | "/Applications"
    )
}
