//! The store of one workspace: opening (creating) it, where a session's index lives, and the
//! files that keep the user's ignores and every file's bytes as they are.

use super::error::{io_err, CheckpointError};
use super::git::Git;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Files larger than this are not checkpointed (and are named).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The checkpoint store of one workspace.
#[derive(Debug)]
pub struct CheckpointStore {
    pub(super) git: Git,
    pub(super) max_file_bytes: u64,
    /// One snapshot at a time per process (a session's index is written by each).
    pub(super) lock: Mutex<()>,
}

impl CheckpointStore {
    /// Opens (creating it if needed) the store of `workspace` under `root`
    /// (`~/.octo/checkpoints`).
    pub fn open(root: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        let workspace = std::fs::canonicalize(workspace).map_err(|e| io_err(workspace, &e))?;
        if read_only(&workspace) {
            return Err(CheckpointError::ReadOnly { path: workspace.display().to_string() });
        }
        let git_dir = root.join(workspace_id(&workspace));
        let git = Git { git_dir: git_dir.clone(), work_tree: workspace.clone() };
        let fresh = !git_dir.join("HEAD").exists();
        if fresh {
            crate::private::create_dir(&git_dir).map_err(|e| io_err(&git_dir, &e))?;
            git.init()?;
            git.run(None, &["config", "core.bare", "false"], None)?;
            let _ = crate::private::write(
                &git_dir.join("workspace"),
                format!("{}\n", workspace.display()).as_bytes(),
            );
        } else {
            // A store that git cannot read is named, never repaired by deleting things.
            if let Err(e) = git.run(None, &["rev-parse", "--git-dir"], None) {
                return Err(match e {
                    CheckpointError::NoGit => CheckpointError::NoGit,
                    other => CheckpointError::Corrupt {
                        path: git_dir.display().to_string(),
                        reason: other.to_string(),
                    },
                });
            }
        }
        write_info(&git_dir, &workspace)?;
        Ok(Self { git, max_file_bytes: DEFAULT_MAX_FILE_BYTES, lock: Mutex::new(()) })
    }

    /// Files larger than `bytes` are skipped (and named).
    #[must_use]
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// The workspace.
    pub fn workspace(&self) -> &Path {
        &self.git.work_tree
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.git.git_dir
    }

    pub(super) fn index(&self, session: &str) -> PathBuf {
        self.git.git_dir.join("octo-index").join(ref_safe(session))
    }
}

/// A name for the workspace's store: its folder name and a hash of its full path.
pub fn workspace_id(workspace: &Path) -> String {
    let text = workspace.to_string_lossy();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let name: String = workspace
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                .take(40)
                .collect()
        })
        .unwrap_or_default();
    let name = name.trim_start_matches('.');
    if name.is_empty() {
        format!("{h:016x}")
    } else {
        format!("{name}-{h:016x}")
    }
}

/// A session id as a piece of a ref name.
pub(super) fn ref_safe(session: &str) -> String {
    let s: String = session
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() {
        "_".to_owned()
    } else {
        s
    }
}

/// What the store ignores besides `.gitignore` (`.octo/ignore`), and attributes that keep every
/// file's bytes as they are (no line-ending or filter conversion on the way in or out).
fn write_info(git_dir: &Path, workspace: &Path) -> Result<(), CheckpointError> {
    let info = git_dir.join("info");
    crate::private::create_dir(&info).map_err(|e| io_err(&info, &e))?;
    let mut exclude = String::from("# written by octo from .octo/ignore\n");
    if let Ok(text) = std::fs::read_to_string(workspace.join(".octo").join("ignore")) {
        exclude.push_str(&text);
        exclude.push('\n');
    }
    write_if_changed(&info.join("exclude"), &exclude)?;
    write_if_changed(&info.join("attributes"), "* -text -eol -filter -ident -working-tree-encoding\n")
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), CheckpointError> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    crate::private::write(path, text.as_bytes()).map_err(|e| io_err(path, &e))
}

/// Whether `dir` is on a read-only file system.
fn read_only(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        nix::sys::statvfs::statvfs(dir)
            .is_ok_and(|s| s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
}
