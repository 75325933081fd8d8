//! One scope's folder: entries (`<name>.md`), the index (`MEMORY.md`), and a lock file so two
//! octo processes saving at once lose nothing. Every write is atomic (a temporary file renamed
//! into place).

use crate::entry::{valid_name, Entry};
use crate::index;
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The largest entry or index read (a bigger one is skipped with a notice).
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// At most this many entries are read per scope.
const MAX_ENTRIES: usize = 2000;

/// Why a memory operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The request itself is wrong (a bad name, a secret).
    #[error("{0}")]
    Invalid(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io { path: path.display().to_string(), source }
}

/// What a save did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The entry replaced one of the same name.
    pub updated: bool,
    /// The index was updated (false: it is in a shape octo does not edit).
    pub indexed: bool,
}

/// A scope's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
    label: String,
}

impl Store {
    /// The scope in `dir`, called `label` in messages (`user`, `workspace`).
    pub fn new(dir: impl Into<PathBuf>, label: impl Into<String>) -> Self {
        Self { dir: dir.into(), label: label.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What messages call it.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// `MEMORY.md`.
    pub fn index_path(&self) -> PathBuf {
        self.dir.join("MEMORY.md")
    }

    /// The index text, if there is one and it can be read (for showing it).
    pub fn index(&self) -> Option<String> {
        self.read_index().ok().flatten()
    }

    /// The index text: `None` when there is none; an error when it exists but cannot be read
    /// (too big, not UTF-8, a symlink, no permission) — then nothing may rewrite it.
    pub fn read_index(&self) -> Result<Option<String>, MemoryError> {
        match read_capped(&self.index_path()) {
            Ok(t) => Ok(Some(t)),
            Err(MemoryError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// How many notes wait in the index's Scratch Notes (what `/remember` adds).
    pub fn scratch_count(&self) -> usize {
        self.index().map_or(0, |t| crate::index::scratch_notes(&t).len())
    }

    /// Every entry, sorted by name, and notices naming files skipped and why.
    pub fn entries(&self) -> (Vec<Entry>, Vec<String>) {
        let mut out = Vec::new();
        let mut notices = Vec::new();
        let Ok(rd) = std::fs::read_dir(&self.dir) else { return (out, notices) };
        let mut paths: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md") && !p.ends_with("MEMORY.md"))
            .collect();
        paths.sort();
        if paths.len() > MAX_ENTRIES {
            notices.push(format!(
                "the {} memory has {} entries; only the first {MAX_ENTRIES} are read",
                self.label,
                paths.len()
            ));
            paths.truncate(MAX_ENTRIES);
        }
        for p in paths {
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            match read_capped(&p)
                .map_err(|e| e.to_string())
                .and_then(|t| Entry::parse(&t, &stem).map_err(|e| e.to_string()))
            {
                Ok(e) => out.push(e),
                Err(why) => notices.push(format!("skipped the memory entry {}: {why}", p.display())),
            }
        }
        (out, notices)
    }

    /// The entry called `name`.
    pub fn get(&self, name: &str) -> Option<Entry> {
        if !valid_name(name) {
            return None;
        }
        read_capped(&self.dir.join(format!("{name}.md"))).ok().and_then(|t| Entry::parse(&t, name).ok())
    }

    /// Creates or replaces an entry and its index line.
    pub fn save(&self, entry: &Entry) -> Result<Saved, MemoryError> {
        if !valid_name(&entry.name) {
            return Err(MemoryError::Invalid(format!(
                "`{}` cannot name a memory: use 1 to 64 lowercase letters, digits, `-` and `_`",
                entry.name
            )));
        }
        let _lock = self.lock()?;
        let path = self.dir.join(format!("{}.md", entry.name));
        let updated = path.exists();
        write_atomic(&path, &entry.render())?;
        let current = self.read_index()?.unwrap_or_else(index::empty);
        let line = index::entry_line(&entry.name, &entry.description);
        let indexed = match index::upsert(&current, entry.kind.section(), &entry.name, &line) {
            Some(text) => {
                write_atomic(&self.index_path(), &text)?;
                true
            }
            None => false,
        };
        Ok(Saved { updated, indexed })
    }

    /// Deletes an entry and its index line; `false` when there was none.
    pub fn delete(&self, name: &str) -> Result<bool, MemoryError> {
        if !valid_name(name) {
            return Ok(false);
        }
        let _lock = self.lock()?;
        let path = self.dir.join(format!("{name}.md"));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io(&path)(e)),
        }
        if let Some(text) = self.read_index()?.as_deref().and_then(|t| index::remove(t, name)) {
            write_atomic(&self.index_path(), &text)?;
        }
        Ok(true)
    }

    /// Adds a line to Scratch Notes (creating the index when there is none).
    pub fn note(&self, line: &str) -> Result<(), MemoryError> {
        let _lock = self.lock()?;
        let current = self.read_index()?.unwrap_or_else(index::empty);
        write_atomic(&self.index_path(), &index::append_scratch(&current, line))
    }

    /// Replaces the index (a dream), if it is still `expected` (nobody changed it meanwhile).
    pub fn replace_index(&self, expected: Option<&str>, text: &str) -> Result<(), MemoryError> {
        let _lock = self.lock()?;
        if self.read_index()?.as_deref() != expected {
            return Err(MemoryError::Invalid(format!(
                "the {} memory index changed while the dream ran; nothing was written, dream again",
                self.label
            )));
        }
        write_atomic(&self.index_path(), text)
    }

    /// Holds the scope's lock until dropped.
    fn lock(&self) -> Result<std::fs::File, MemoryError> {
        create_private_dir(&self.dir)?;
        let path = self.dir.join(".lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        f.lock().map_err(io(&path))?;
        Ok(f)
    }
}

/// Reads a regular file of at most 256 KB (a longer one, or a symbolic link — which could point
/// anywhere, a secret included — is an error saying so).
fn read_capped(path: &Path) -> Result<String, MemoryError> {
    let meta = std::fs::symlink_metadata(path).map_err(io(path))?;
    if !meta.is_file() {
        return Err(MemoryError::Invalid(format!(
            "{} is not a regular file (memory files may not be symbolic links)",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(MemoryError::Invalid(format!(
            "it is {} KB; a memory file may be at most {} KB",
            meta.len() / 1024,
            MAX_FILE_BYTES / 1024
        )));
    }
    let bytes = std::fs::read(path).map_err(io(path))?;
    String::from_utf8(bytes).map_err(|_| MemoryError::Invalid("it is not UTF-8 text".into()))
}

fn create_private_dir(dir: &Path) -> Result<(), MemoryError> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(io(dir))
}

/// Writes `text` to `path` through a temporary file in the same folder, renamed into place. On
/// Unix the folder is opened once and the temporary file is made (refusing a link at its name),
/// written and renamed on that handle: a folder swapped for a link meanwhile cannot put either
/// file elsewhere.
fn write_atomic(path: &Path, text: &str) -> Result<(), MemoryError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = format!(".{name}.tmp-{}", std::process::id());
    #[cfg(unix)]
    {
        use rustix::fs::{AtFlags, Mode, OFlags};
        let folder =
            rustix::fs::open(dir, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| MemoryError::Io { path: dir.display().to_string(), source: e.into() })?;
        let failed =
            |e: rustix::io::Errno| MemoryError::Io { path: path.display().to_string(), source: e.into() };
        // A fresh file: never one someone placed there (a link at the name is removed, not followed).
        let _ = rustix::fs::unlinkat(&folder, tmp.as_str(), AtFlags::empty());
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd =
            rustix::fs::openat(&folder, tmp.as_str(), flags, Mode::from_raw_mode(0o600)).map_err(failed)?;
        let mut f = std::fs::File::from(fd);
        let written = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
        drop(f);
        let placed = written.map_err(io(path)).and_then(|()| {
            rustix::fs::renameat(&folder, tmp.as_str(), &folder, name.as_str()).map_err(failed)
        });
        if placed.is_err() {
            let _ = rustix::fs::unlinkat(&folder, tmp.as_str(), AtFlags::empty());
        }
        placed
    }
    #[cfg(not(unix))]
    {
        let tmp = dir.join(tmp);
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(io(&tmp))?;
        f.write_all(text.as_bytes()).and_then(|()| f.sync_all()).map_err(io(&tmp))?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(io(path))
    }
}
