//! The two scopes of a session — the user's and the workspace's — and what is read from them:
//! the prompt's memory section within its budget, and search.

use crate::entry::Entry;
use crate::index;
use crate::store::Store;
use std::path::{Path, PathBuf};

/// The default size of the memory section of the prompt, in bytes (both indexes).
pub const PROMPT_BUDGET: usize = 6 * 1024;

/// Which scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's, in every workspace.
    User,
    /// This workspace's.
    Workspace,
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "user" => Ok(Self::User),
            "workspace" | "project" => Ok(Self::Workspace),
            other => Err(format!("`{other}` is not a memory scope; use user or workspace")),
        }
    }
}

/// The user's memory and a workspace's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// `~/.octo/memory`.
    pub user: Store,
    /// Under `~/.octo/memory/workspaces/`, keyed by the workspace root — or the workspace's own
    /// `.octo/memory` once the user chose that (`/memory --here`).
    pub workspace: Store,
}

impl Memory {
    /// The scopes for `workspace`, with the user's memory in `root` (`~/.octo/memory`). The
    /// workspace's own `.octo/memory` is used only once the user chose it for this workspace
    /// ([`opt_in_here`]) and it is a real folder: a repository cannot make its files octo's
    /// memory by shipping them.
    pub fn for_workspace(root: &Path, workspace: &Path) -> Self {
        let here = in_repository(workspace);
        let real_dir = std::fs::symlink_metadata(&here).is_ok_and(|m| m.is_dir());
        let ws_dir = if real_dir && opted_in(root, workspace) {
            here
        } else {
            root.join("workspaces").join(workspace_key(workspace))
        };
        Self { user: Store::new(root, "user"), workspace: Store::new(ws_dir, "workspace") }
    }

    /// The store of `scope`.
    pub fn store(&self, scope: Scope) -> &Store {
        match scope {
            Scope::User => &self.user,
            Scope::Workspace => &self.workspace,
        }
    }

    /// The memory section of the system prompt: both indexes (the user's first) within `budget`
    /// bytes, the newest lines winning when they do not fit; `None` when both are empty. Notices
    /// say what was left out.
    pub fn prompt(&self, budget: usize) -> (Option<String>, Vec<String>) {
        let mut notices = Vec::new();
        let texts: Vec<(&Store, String)> = [&self.user, &self.workspace]
            .into_iter()
            .filter_map(|s| s.index().filter(|t| !t.trim().is_empty()).map(|t| (s, t)))
            .collect();
        if texts.is_empty() {
            return (None, notices);
        }
        let total: usize = texts.iter().map(|(_, t)| t.len()).sum();
        let mut out = String::new();
        let mut left = budget;
        for (i, (store, text)) in texts.iter().enumerate() {
            // The user's index may use up to half when the workspace has one too.
            let share = if i + 1 < texts.len() && total > budget { left / 2 } else { left };
            // Entries are read (for their ages) only when lines must be left out.
            let entries = if text.len() > share.min(left) { store.entries().0 } else { Vec::new() };
            let age = |line: &str| line_age(line, &entries);
            let (fitted, dropped) = index::fit(text, share.min(left), &age);
            if dropped > 0 {
                notices.push(format!(
                    "the {} memory index ({}) is over its share of the prompt's {budget}-byte memory budget: {dropped} older line(s) left out of the prompt (/dream consolidates it)",
                    store.label(),
                    store.index_path().display()
                ));
            }
            left = left.saturating_sub(fitted.len());
            out.push_str(&format!("## {} memory\n{}\n", title(store.label()), fitted.trim_end()));
        }
        (Some(out), notices)
    }

    /// Entries and index lines matching every word of `query` (case-insensitive) in both scopes,
    /// best first, at most `limit`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut hits = Vec::new();
        for store in [&self.workspace, &self.user] {
            let (entries, _) = store.entries();
            for e in entries {
                let head = format!("{} {}", e.name, e.description).to_lowercase();
                let body = e.body.to_lowercase();
                if words.iter().all(|w| head.contains(w) || body.contains(w)) {
                    let score = words.iter().filter(|w| head.contains(w.as_str())).count();
                    hits.push(Hit {
                        scope: store.label().to_owned(),
                        entry: Some(e),
                        line: None,
                        score: score + 1,
                    });
                }
            }
            if let Some(text) = store.index() {
                for line in
                    text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.contains("]("))
                {
                    let l = line.to_lowercase();
                    if !words.is_empty() && words.iter().all(|w| l.contains(w)) {
                        hits.push(Hit {
                            scope: store.label().to_owned(),
                            entry: None,
                            line: Some(line.to_owned()),
                            score: 0,
                        });
                    }
                }
            }
        }
        hits.sort_by_key(|h| std::cmp::Reverse(h.score));
        hits.truncate(limit);
        hits
    }
}

/// One search result: an entry, or a line of an index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// `user` or `workspace`.
    pub scope: String,
    /// The entry, when the hit is one.
    pub entry: Option<Entry>,
    /// The index line, when the hit is one.
    pub line: Option<String>,
    score: usize,
}

fn title(label: &str) -> String {
    let mut c = label.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// How new an index line is: its entry's `updated`, or the date a note starts with.
fn line_age(line: &str, entries: &[Entry]) -> String {
    if let Some(e) = entries.iter().find(|e| line.contains(&format!("]({}.md)", e.name))) {
        return e.updated.clone();
    }
    let t = line.trim_start_matches(['-', '*', ' ']);
    match t.get(..10) {
        Some(d)
            if d.len() == 10
                && d.as_bytes()[4] == b'-'
                && d.as_bytes()[..4].iter().all(u8::is_ascii_digit) =>
        {
            t.get(..16).filter(|x| x.as_bytes().get(10) == Some(&b' ')).unwrap_or(d).to_owned()
        }
        _ => String::new(),
    }
}

fn here_file(root: &Path) -> PathBuf {
    root.join("here.json")
}

fn canonical(workspace: &Path) -> String {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf()).display().to_string()
}

fn opted_in(root: &Path, workspace: &Path) -> bool {
    std::fs::read_to_string(here_file(root))
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<String>>(&t).ok())
        .is_some_and(|l| l.contains(&canonical(workspace)))
}

/// Records that the user wants `workspace`'s memory in its own `.octo/memory` (`/memory --here`).
pub fn opt_in_here(root: &Path, workspace: &Path) -> std::io::Result<()> {
    let path = here_file(root);
    let mut list: Vec<String> =
        std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    let ws = canonical(workspace);
    if !list.contains(&ws) {
        list.push(ws);
    }
    std::fs::create_dir_all(root)?;
    let tmp = root.join(format!(".here.json.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::fs::write(&tmp, serde_json::to_string_pretty(&list).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, &path)
}

/// Where a workspace keeps its memory when the user asks for it in the repository.
pub fn in_repository(workspace: &Path) -> PathBuf {
    workspace.join(".octo").join("memory")
}

/// A stable folder name for a workspace: its last component and a hash of its whole path.
pub fn workspace_key(workspace: &Path) -> String {
    let path = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let text = path.to_string_lossy();
    // FNV-1a: stable across Rust versions, unlike the standard hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let last: String = path
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                .take(40)
                .collect()
        })
        .unwrap_or_else(|| "root".to_owned());
    format!("{last}-{:08x}", h >> 32)
}
