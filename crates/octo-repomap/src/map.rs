//! A workspace's map: the cache (loaded on first use, kept in memory, saved after each
//! build), the files the conversation has touched, and a request's focus turned into files
//! and symbols before ranking and rendering.

use crate::cache::{Cache, Outcome};
use crate::rank::{rank, Focus};
use crate::render::render;
use crate::scan::{refresh, Limits, Progress};
use std::collections::VecDeque;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// Files of the conversation remembered for the ranking.
const MAX_SEEN: usize = 50;

/// Words of a prompt looked up as paths, at most.
const MAX_PROMPT_CANDIDATES: usize = 200;

/// The default token budget of a map.
pub const DEFAULT_BUDGET: usize = 1_024;

/// The largest budget a request may ask for.
pub const MAX_BUDGET: usize = 8_192;

/// The smallest budget a request may ask for.
pub const MIN_BUDGET: usize = 100;

/// What one map is asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Paths (files or directories, relative to the workspace) and symbol names to centre on.
    pub focus: Vec<String>,
    /// Tokens the map may take (clamped to [`MIN_BUDGET`]..=[`MAX_BUDGET`]).
    pub budget: Option<usize>,
}

/// A built map.
#[derive(Debug, Clone)]
pub struct Built {
    /// The map as the model sees it.
    pub text: String,
    /// What the build read.
    pub progress: Progress,
}

/// A workspace's repository map.
#[derive(Debug)]
pub struct RepoMap {
    workspace: PathBuf,
    cache_dir: Option<PathBuf>,
    limits: Limits,
    seen: Mutex<VecDeque<String>>,
    /// Files the latest prompt names.
    named: Mutex<Vec<String>>,
    cache: Mutex<Option<Cache>>,
}

impl RepoMap {
    /// The map of `workspace`, cached in `cache_dir` (in memory only when `None`).
    pub fn new(workspace: &Path, cache_dir: Option<PathBuf>) -> Self {
        let workspace = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        Self {
            workspace,
            cache_dir,
            limits: Limits::default(),
            seen: Mutex::default(),
            named: Mutex::default(),
            cache: Mutex::new(None),
        }
    }

    /// The same map with other limits (time budget, file count, a filter).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The workspace mapped.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Remembers that the conversation touched `path` (ignored outside the workspace).
    pub fn note_seen(&self, path: &Path) {
        let Some(rel) = self.relative(path) else { return };
        if let Ok(mut seen) = self.seen.lock() {
            seen.retain(|s| *s != rel);
            seen.push_back(rel);
            while seen.len() > MAX_SEEN {
                seen.pop_front();
            }
        }
    }

    /// Remembers the workspace's files `prompt` names (`src/app.rs`, `` `lib/util.py` ``): the
    /// next maps centre on them as on a request's focus. Each prompt replaces the last one's.
    pub fn note_prompt(&self, prompt: &str) {
        let mut named: Vec<String> = Vec::new();
        let words = prompt.split(|c: char| c.is_whitespace() || "`'\"()[]{}<>,;".contains(c));
        // A pasted log must not cost thousands of file lookups: the first candidates only.
        let candidates = words
            .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
            .filter(|w| w.len() <= 300 && (w.contains('/') || w.contains('.')))
            .take(MAX_PROMPT_CANDIDATES);
        for word in candidates {
            if word.is_empty() {
                continue;
            }
            let Some(rel) = self.relative(Path::new(word)) else { continue };
            if !rel.is_empty() && !named.contains(&rel) && self.workspace.join(&rel).exists() {
                named.push(rel);
            }
            if named.len() >= MAX_SEEN {
                break;
            }
        }
        if let Ok(mut n) = self.named.lock() {
            *n = named;
        }
    }

    /// Brings the cache up to date and renders the map for `request` (blocking: call it off the
    /// async threads).
    pub fn build(&self, request: &Request) -> Built {
        let mut guard = match self.cache.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let cache = guard.get_or_insert_with(|| match &self.cache_dir {
            Some(dir) => Cache::load(dir, &self.workspace),
            None => Cache::in_memory(),
        });
        let progress = refresh(&self.workspace, cache, &self.limits);
        let focus = self.focus(cache, request);
        let files: Vec<(&str, &crate::tags::FileTags)> = cache
            .files
            .iter()
            .filter_map(|(rel, e)| match &e.outcome {
                Outcome::Tags(t) => Some((rel.as_str(), t)),
                Outcome::Skipped(_) => None,
            })
            .collect();
        let ranked = rank(&files, &focus);
        let budget = request.budget.unwrap_or(DEFAULT_BUDGET).clamp(MIN_BUDGET, MAX_BUDGET);
        Built { text: render(&ranked, budget, &progress, files.len()), progress }
    }

    /// The request's focus: entries naming a mapped file or a directory of them are files, the
    /// rest symbols; the files the prompt names are focus files too, the conversation's files
    /// the weaker focus.
    fn focus(&self, cache: &Cache, request: &Request) -> Focus {
        let mut focus = Focus::default();
        for item in request.focus.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            let as_path = self.relative(Path::new(item));
            match as_path {
                Some(rel) if cache.files.contains_key(&rel) => {
                    focus.files.insert(rel);
                }
                Some(rel) if !rel.is_empty() && cache.files.keys().any(|k| in_dir(k, &rel)) => {
                    focus.files.extend(cache.files.keys().filter(|k| in_dir(k, &rel)).cloned());
                }
                _ => {
                    focus.symbols.insert(item.to_owned());
                }
            }
        }
        if let Ok(named) = self.named.lock() {
            for rel in named.iter() {
                if cache.files.contains_key(rel) {
                    focus.files.insert(rel.clone());
                } else {
                    focus.files.extend(cache.files.keys().filter(|k| in_dir(k, rel)).cloned());
                }
            }
        }
        if let Ok(seen) = self.seen.lock() {
            focus.seen.extend(seen.iter().cloned());
        }
        focus
    }

    /// `path` (absolute, or relative to the workspace) as a relative path with `/`, if it lies
    /// inside the workspace; `..` is resolved lexically.
    fn relative(&self, path: &Path) -> Option<String> {
        let abs = if path.is_absolute() { path.to_path_buf() } else { self.workspace.join(path) };
        let rel = abs.strip_prefix(&self.workspace).ok()?;
        let mut parts: Vec<&str> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(p) => parts.push(p.to_str()?),
                Component::ParentDir => {
                    parts.pop()?;
                }
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        Some(parts.join("/"))
    }
}

/// Whether `file` lies under the directory `dir` (both relative, with `/`).
fn in_dir(file: &str, dir: &str) -> bool {
    file.strip_prefix(dir.trim_end_matches('/')).is_some_and(|rest| rest.starts_with('/'))
}
