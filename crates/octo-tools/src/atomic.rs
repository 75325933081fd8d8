//! Writing files atomically and describing changes as unified diffs (the previous content goes to
//! [`crate::trash`]).

use std::io::Write;
use std::path::Path;

/// Most diff lines returned to the model; the rest is counted.
const MAX_DIFF_LINES: usize = 400;

/// Writes `content` to `path` through a temporary file in the same directory and a rename, so the
/// file is either entirely old or entirely new, even if octo dies midway. Parent directories are
/// created; an existing file keeps its permissions.
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let existing = std::fs::metadata(path).ok();
    let mut tmp = tempfile::Builder::new().prefix(".octo-write-").tempfile_in(parent)?;
    tmp.write_all(content)?;
    tmp.as_file().sync_all()?;
    if let Some(meta) = existing {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A unified diff of `old` → `new` for `label`, cut after a few hundred lines.
pub fn unified_diff(label: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(3).header(label, label).to_string();
    let mut lines = text.lines();
    let mut out: String = lines.by_ref().take(MAX_DIFF_LINES).map(|l| format!("{l}\n")).collect();
    let rest = lines.count();
    if rest > 0 {
        out.push_str(&format!("[... {rest} more diff lines]\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_parents_and_keeps_permissions() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a/b/c.txt");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "one");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
            write_atomic(&p, b"two").unwrap();
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o751);
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files left behind");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_intact() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f.txt");
        std::fs::write(&p, "original").unwrap();
        // The target is a directory now: the rename fails after the temp file was written.
        let dir_target = tmp.path().join("d");
        std::fs::create_dir(&dir_target).unwrap();
        std::fs::write(dir_target.join("inside"), "x").unwrap();
        assert!(write_atomic(&dir_target, b"new").is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "original");
        let names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with(".octo-write-")), "temp file cleaned up: {names:?}");
    }

    #[test]
    fn diff_is_unified_and_capped() {
        let d = unified_diff("f.txt", "a\nb\nc\n", "a\nB\nc\n");
        assert!(d.contains("-b\n+B\n"), "{d}");
        let old: String = (0..2000).map(|i| format!("{i}\n")).collect();
        let d = unified_diff("f", &old, "");
        assert!(d.contains("more diff lines"));
    }
}
