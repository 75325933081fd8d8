//! Bringing the cache up to date with the workspace within a time budget: the workspace is
//! walked as git sees it (ignored and hidden files skipped, links not followed), files whose
//! time and size match their entry are kept, the rest are parsed on every core until the
//! deadline. What is not parsed in time stays pending for the next build, which continues
//! where this one stopped. The walk must finish for the next build to get further, so it may
//! take up to [`WALK_ALLOWANCE`] budgets; the parse then gets what is left of the budget, and at
//! least a quarter of it.

use crate::cache::{stamp, Cache, Entry, Outcome};
use crate::lang::Lang;
use crate::tags::{extract, MAX_FILE_BYTES};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many budgets the walk alone may take (a tree too slow to walk in that is mapped in
/// part, every time, and says so).
pub const WALK_ALLOWANCE: u32 = 4;

/// Decides whether a file may be read (octo passes its secret and deny rules here).
pub type Filter = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// How a build is bounded.
#[derive(Clone)]
pub struct Limits {
    /// Wall time for walking and parsing.
    pub budget: Duration,
    /// Source files looked at, at most.
    pub max_files: usize,
    /// Files the filter refuses are never read.
    pub filter: Option<Filter>,
}

impl Default for Limits {
    fn default() -> Self {
        Self { budget: Duration::from_secs(5), max_files: 100_000, filter: None }
    }
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("budget", &self.budget)
            .field("max_files", &self.max_files)
            .field("filter", &self.filter.is_some())
            .finish()
    }
}

/// What a build did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Source files found.
    pub found: usize,
    /// Of those, parsed in this build.
    pub parsed: usize,
    /// Of those, not yet parsed (out of time).
    pub pending: usize,
    /// The walk stopped early (file limit, or [`WALK_ALLOWANCE`] budgets): files beyond it are
    /// unknown.
    pub walk_cut: bool,
}

impl Progress {
    /// Whether the map covers less than the whole workspace.
    pub fn is_partial(&self) -> bool {
        self.pending > 0 || self.walk_cut
    }
}

struct Todo {
    rel: String,
    abs: PathBuf,
    lang: Lang,
    stamp: (u64, u64),
}

/// Updates `cache` from `workspace` within `limits`; saves it when something changed.
pub fn refresh(workspace: &Path, cache: &mut Cache, limits: &Limits) -> Progress {
    let start = Instant::now();
    let walk_deadline = start + limits.budget * WALK_ALLOWANCE;
    let mut progress = Progress::default();
    let mut todo = Vec::new();
    let mut present = std::collections::HashSet::new();
    let walker =
        ignore::WalkBuilder::new(workspace).hidden(true).follow_links(false).require_git(false).build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(lang) = Lang::of(entry.path()) else { continue };
        if limits.filter.as_ref().is_some_and(|f| !f(entry.path())) {
            continue;
        }
        if progress.found >= limits.max_files || Instant::now() > walk_deadline {
            progress.walk_cut = true;
            break;
        }
        let Some(rel) = relative(workspace, entry.path()) else { continue };
        let Ok(meta) = entry.metadata() else { continue };
        progress.found += 1;
        let stamp = stamp(&meta);
        present.insert(rel.clone());
        let fresh = cache.files.get(&rel).is_some_and(|e| (e.mtime, e.size) == stamp);
        if !fresh {
            todo.push(Todo { rel, abs: entry.into_path(), lang, stamp });
        }
    }
    let mut changed = false;
    if !progress.walk_cut {
        let before = cache.files.len();
        cache.files.retain(|rel, _| present.contains(rel));
        changed = cache.files.len() != before;
    }
    let deadline = (start + limits.budget).max(Instant::now() + limits.budget / 4);
    let results = parse_all(&todo, deadline);
    progress.pending = todo.len() - results.len();
    for (i, outcome) in results {
        let t = &todo[i];
        cache.files.insert(t.rel.clone(), Entry { mtime: t.stamp.0, size: t.stamp.1, outcome });
        progress.parsed += 1;
        changed = true;
    }
    if changed {
        let _ = cache.save();
    }
    progress
}

/// `path` relative to `workspace`, with `/` between the parts.
fn relative(workspace: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(workspace).ok()?;
    let parts: Vec<&str> = rel.components().map(|c| c.as_os_str().to_str()).collect::<Option<_>>()?;
    Some(parts.join("/"))
}

/// Parses `todo` on every core until `deadline`: (index, outcome) of those finished.
fn parse_all(todo: &[Todo], deadline: Instant) -> Vec<(usize, Outcome)> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(todo.len()));
    let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).clamp(1, 8);
    std::thread::scope(|s| {
        for _ in 0..workers.min(todo.len().max(1)) {
            s.spawn(|| {
                let mut parser = tree_sitter::Parser::new();
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(t) = todo.get(i) else { break };
                    if Instant::now() > deadline {
                        break;
                    }
                    match parse_one(t, &mut parser, deadline) {
                        Some(outcome) => mine.push((i, outcome)),
                        None => continue,
                    }
                }
                if let Ok(mut all) = done.lock() {
                    all.extend(mine);
                }
            });
        }
    });
    done.into_inner().unwrap_or_default()
}

/// One file's outcome, or `None` when it ran out of time (it is tried again next build).
fn parse_one(t: &Todo, parser: &mut tree_sitter::Parser, deadline: Instant) -> Option<Outcome> {
    if t.stamp.1 > MAX_FILE_BYTES {
        return Some(Outcome::Skipped(crate::tags::Skip::TooLarge));
    }
    let Ok(bytes) = std::fs::read(&t.abs) else {
        return Some(Outcome::Skipped(crate::tags::Skip::Unreadable));
    };
    match extract(t.lang, &bytes, parser, deadline) {
        Ok(tags) => Some(Outcome::Tags(tags)),
        Err(skip) if skip.is_transient() => None,
        Err(skip) => Some(Outcome::Skipped(skip)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_use_slashes() {
        assert_eq!(relative(Path::new("/w"), Path::new("/w/a/b.rs")).as_deref(), Some("a/b.rs"));
        assert_eq!(relative(Path::new("/w"), Path::new("/x/b.rs")), None);
    }
}
