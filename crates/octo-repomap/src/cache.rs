//! The on-disk cache of a workspace's tags: one JSON file per workspace under octo's home,
//! an entry per file keyed by its modification time and size. A missing, unreadable, foreign
//! or older-format cache is an empty one (the map is rebuilt, nothing fails); it is written
//! whole to a temporary file and renamed, so a crash never leaves half a cache.

use crate::tags::{FileTags, Skip};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Bumped when the entries' meaning changes (a new query, a new field): older caches are
/// dropped.
const FORMAT: u32 = 1;

/// What is known of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Modification time, in nanoseconds since the epoch.
    pub mtime: u64,
    /// Size in bytes.
    pub size: u64,
    /// Its tags, or why it has none.
    pub outcome: Outcome,
}

/// A file's tags or the reason it was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Read.
    Tags(FileTags),
    /// Not read, for this reason.
    Skipped(Skip),
}

/// A file's identity for the cache: modification time and size.
pub fn stamp(meta: &std::fs::Metadata) -> (u64, u64) {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    (mtime, meta.len())
}

/// A workspace's cached entries, by path relative to the workspace (with `/`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Cache {
    format: u32,
    workspace: String,
    /// The entries.
    pub files: BTreeMap<String, Entry>,
    #[serde(skip)]
    path: Option<PathBuf>,
}

impl Cache {
    /// An empty cache that is never saved.
    pub fn in_memory() -> Self {
        Self { format: FORMAT, ..Default::default() }
    }

    /// The cache of `workspace` kept in `dir` (read now; empty when absent or unusable).
    pub fn load(dir: &Path, workspace: &Path) -> Self {
        let key = workspace.to_string_lossy().into_owned();
        let path = dir.join(format!("{:016x}.json", fnv1a(key.as_bytes())));
        let read = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Cache>(&bytes).ok())
            .filter(|c| c.format == FORMAT && c.workspace == key);
        let mut cache =
            read.unwrap_or_else(|| Cache { format: FORMAT, workspace: key, ..Default::default() });
        cache.path = Some(path);
        cache
    }

    /// Where the cache is kept, if anywhere.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Writes the cache to its file (a temporary file, then renamed over the old one).
    pub fn save(&self) -> std::io::Result<()> {
        let Some(path) = &self.path else { return Ok(()) };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// FNV-1a, 64 bits: a stable name for a workspace's cache file (std's hasher may change
/// between Rust releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry { mtime: 7, size: 3, outcome: Outcome::Skipped(Skip::Binary) }
    }

    #[test]
    fn saved_and_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Cache::load(dir.path(), Path::new("/w/one"));
        c.files.insert("a.rs".into(), entry());
        c.save().unwrap();
        let again = Cache::load(dir.path(), Path::new("/w/one"));
        assert_eq!(again.files.get("a.rs"), Some(&entry()));
        let other = Cache::load(dir.path(), Path::new("/w/two"));
        assert!(other.files.is_empty());
    }

    #[test]
    fn a_corrupt_cache_is_an_empty_one() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::load(dir.path(), Path::new("/w"));
        std::fs::write(c.path().unwrap(), b"{not json").unwrap();
        let again = Cache::load(dir.path(), Path::new("/w"));
        assert!(again.files.is_empty());
        again.save().unwrap();
        assert!(serde_json::from_slice::<serde_json::Value>(&std::fs::read(again.path().unwrap()).unwrap())
            .is_ok());
    }
}
