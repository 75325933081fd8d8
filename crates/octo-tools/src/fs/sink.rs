//! Where the writing tools read a file's current text and put its new one: an editor's buffer
//! when octo runs inside an editor that takes writes (the change lands in the buffer, with the
//! editor's undo, unsaved edits included), otherwise the disk, atomically. Either way the
//! permission check has already passed and the old content goes to octo's trash first.

use crate::atomic::write_atomic;
use crate::beneath::write_beneath;
use crate::config::Buffers;
use crate::error::ToolError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the writing tools share: the trash, the extra writable roots, the editor's buffers.
#[derive(Debug, Clone, Default)]
pub(super) struct Sink {
    pub(super) trash_dir: Option<PathBuf>,
    pub(super) writable_roots: Vec<PathBuf>,
    pub(super) editor: Option<Arc<dyn Buffers>>,
}

impl Sink {
    pub(super) fn new(trash_dir: Option<PathBuf>, writable_roots: Vec<PathBuf>) -> Self {
        Self { trash_dir, writable_roots, editor: None }
    }

    /// The file's content as the user sees it: the editor's buffer, else the disk; `None`: it
    /// does not exist.
    pub(super) async fn current(&self, path: &Path) -> std::io::Result<Option<Vec<u8>>> {
        if let Some(text) = self.buffer(path).await {
            return Ok(Some(text.into_bytes()));
        }
        let p = path.to_path_buf();
        match tokio::task::spawn_blocking(move || std::fs::read(p)).await {
            Ok(Ok(bytes)) => Ok(Some(bytes)),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Ok(Err(e)) => Err(e),
            Err(e) => Err(std::io::Error::other(e)),
        }
    }

    async fn buffer(&self, path: &Path) -> Option<String> {
        match &self.editor {
            Some(b) => b.text(path).await,
            None => None,
        }
    }

    /// Replaces `path`'s content `old` (`None`: a new file) with `new`: the old content to the
    /// trash, then the editor's buffer for a file that exists (a new file, or a write the editor
    /// refuses, goes to the disk). On the disk, a path inside `workspace` or a writable root is
    /// written beneath that root's handle, so no link swapped in on the way can redirect it.
    pub(super) async fn store(
        &self,
        workspace: &Path,
        path: &Path,
        old: Option<Vec<u8>>,
        new: &str,
        call: &str,
        label: &str,
    ) -> Result<(), ToolError> {
        if let Some(trash) = self.trash_dir.clone().map(crate::trash::Trash::new) {
            let (p, n, c, o) = (path.to_path_buf(), new.as_bytes().to_vec(), call.to_owned(), old.clone());
            let kept = tokio::task::spawn_blocking(move || trash.record(&p, o.as_deref(), &n, &c))
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r);
            kept.map_err(|e| {
                ToolError::Io(format!("could not keep a copy of the old content in the trash: {e}"))
            })?;
        }
        if old.is_some() {
            if let Some(editor) = &self.editor {
                if editor.write(path, new).await {
                    return Ok(());
                }
            }
        }
        let (p, n) = (path.to_path_buf(), new.as_bytes().to_vec());
        let beneath = std::iter::once(workspace)
            .chain(self.writable_roots.iter().map(PathBuf::as_path))
            .map(crate::path::normalize)
            .find_map(|root| p.strip_prefix(&root).ok().map(|rel| (rel.to_path_buf(), root)));
        tokio::task::spawn_blocking(move || match beneath {
            Some((rel, root)) => write_beneath(&root, &rel, &n),
            // Outside every root (the user said yes to this very path): by name.
            None => write_atomic(&p, &n),
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|r| r)
        .map_err(|e| ToolError::Io(format!("could not write {label}: {e}")))
    }
}
