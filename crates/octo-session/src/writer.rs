//! Appending to a session file: one locked writer per file, every record flushed and synced.

use crate::error::StoreError;
use crate::format::{now, Record};
use octo_agent::Message;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How long opening a session file waits for a writer of this same process to let it go.
pub const HANDOVER: std::time::Duration = std::time::Duration::from_secs(2);

/// The session files this process has a writer on.
fn held() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn held_here(path: &Path) -> bool {
    held().iter().any(|p| p == path)
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        // Unlocked before it is no longer listed, so a waiter that sees it gone can lock it.
        let _ = self.file.unlock();
        let mut held = held();
        if let Some(i) = held.iter().position(|p| *p == self.path) {
            held.swap_remove(i);
        }
    }
}

/// The one writer of a session file. It holds an exclusive advisory lock, so a second octo
/// process cannot interleave writes into the same file.
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    id: String,
}

impl SessionWriter {
    /// Opens `path` for appending and locks it; fails with `InUse` when another process holds it.
    /// A writer of this process that is being dropped (a session closed and resumed at once)
    /// is waited for, up to [`HANDOVER`].
    pub(crate) fn open(path: &Path, id: &str) -> Result<Self, StoreError> {
        let file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| io(path, e))?;
        let started = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if held_here(path) && started.elapsed() < HANDOVER => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StoreError::InUse { id: id.to_owned() })
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(path, e)),
            }
        }
        held().push(path.to_path_buf());
        let mut w = Self { file, path: path.to_path_buf(), id: id.to_owned() };
        w.seek_end()?;
        Ok(w)
    }

    /// Reads the whole file through the locked handle, so nothing can be appended between
    /// reading and the repair that follows.
    pub(crate) fn read_all(&mut self) -> Result<Vec<u8>, StoreError> {
        use std::io::{Read, Seek};
        self.file.seek(std::io::SeekFrom::Start(0)).map_err(|e| io(&self.path, e))?;
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes).map_err(|e| io(&self.path, e))?;
        Ok(bytes)
    }

    /// Cuts the file to `len` bytes (dropping a torn tail) and makes sure it ends with a newline,
    /// so the next record starts on a line of its own.
    pub(crate) fn repair_tail(&mut self, bytes: &[u8], len: u64) -> Result<(), StoreError> {
        if (bytes.len() as u64) > len {
            self.file.set_len(len).map_err(|e| io(&self.path, e))?;
        }
        self.seek_end()?;
        let kept = &bytes[..(len as usize).min(bytes.len())];
        if kept.last().is_some_and(|b| *b != b'\n') {
            self.write_synced(b"\n")?;
        }
        Ok(())
    }

    fn seek_end(&mut self) -> Result<(), StoreError> {
        use std::io::Seek;
        self.file.seek(std::io::SeekFrom::End(0)).map(|_| ()).map_err(|e| io(&self.path, e))
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends messages (one round) and syncs them to disk before returning.
    pub fn append(&mut self, messages: &[Message]) -> Result<(), StoreError> {
        let at = now();
        let mut buf = Vec::with_capacity(256 * messages.len());
        for m in messages {
            // Borrowing serialization: no copy of the message is made.
            #[derive(serde::Serialize)]
            struct Line<'a> {
                #[serde(rename = "type")]
                kind: &'static str,
                at: u64,
                message: &'a Message,
            }
            serde_json::to_writer(&mut buf, &Line { kind: "message", at, message: m }).map_err(|e| {
                StoreError::Io { path: self.path.display().to_string(), reason: e.to_string() }
            })?;
            buf.push(b'\n');
        }
        self.write_synced(&buf)
    }

    /// Records that a turn started on `message` (before any of it is committed), so a crash
    /// cannot lose what the user typed.
    pub fn pending(&mut self, message: &Message) -> Result<(), StoreError> {
        self.record(&Record::Pending { at: now(), message: message.clone() })
    }

    /// Records that the pending message's turn ended without a committed round.
    pub fn rolled_back(&mut self, reason: &str) -> Result<(), StoreError> {
        self.record(&Record::RolledBack { at: now(), reason: reason.to_owned() })
    }

    /// Appends another record (a title, a model change).
    pub fn record(&mut self, record: &Record) -> Result<(), StoreError> {
        let mut buf = serde_json::to_vec(record)
            .map_err(|e| StoreError::Io { path: self.path.display().to_string(), reason: e.to_string() })?;
        buf.push(b'\n');
        self.write_synced(&buf)
    }

    fn write_synced(&mut self, buf: &[u8]) -> Result<(), StoreError> {
        self.file.write_all(buf).map_err(|e| io(&self.path, e))?;
        self.file.flush().map_err(|e| io(&self.path, e))?;
        self.file.sync_data().map_err(|e| io(&self.path, e))
    }
}

pub(crate) fn io(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Io { path: path.display().to_string(), reason: e.to_string() }
}
