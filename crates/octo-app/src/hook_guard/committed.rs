//! Which of a hook's files are not as last committed — changed since, or not tracked at all: a
//! change a model made in an earlier session (and the user did not commit) is not taken as the
//! starting point of this one.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Of `files` (existing, in `workspace`): those git does not track (all of them outside a
/// repository, or without git), and those it tracks that differ from `HEAD`. Git runs with the
/// repository's program hooks off and no filters, so nothing the workspace names runs.
pub(super) fn uncommitted(workspace: &Path, files: &[PathBuf]) -> (HashSet<PathBuf>, HashSet<PathBuf>) {
    let rel: Vec<String> = files
        .iter()
        .filter(|f| f.is_file())
        .filter_map(|f| f.strip_prefix(workspace).ok())
        .map(|r| r.display().to_string())
        .collect();
    if rel.is_empty() {
        return Default::default();
    }
    let all = || (rel.iter().map(|r| workspace.join(r)).collect::<HashSet<PathBuf>>(), HashSet::new());
    let mut args = vec!["ls-tree", "-z", "HEAD", "--"];
    args.extend(rel.iter().map(String::as_str));
    let Ok(tree) = crate::git_cli::run(workspace, &args) else { return all() };
    let committed: HashMap<&str, &str> = tree
        .split('\0')
        .filter_map(|record| {
            let (head, path) = record.split_once('\t')?;
            let mut parts = head.split(' ');
            let (_, kind, id) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "blob").then_some((path, id))
        })
        .collect();
    let (tracked, untracked): (Vec<&String>, Vec<&String>) =
        rel.iter().partition(|r| committed.contains_key(r.as_str()));
    let loose: HashSet<PathBuf> = untracked.iter().map(|r| workspace.join(r.as_str())).collect();
    if tracked.is_empty() {
        return (loose, HashSet::new());
    }
    let mut args = vec!["hash-object", "--no-filters", "--"];
    args.extend(tracked.iter().map(|s| s.as_str()));
    let Ok(now) = crate::git_cli::run(workspace, &args) else { return all() };
    let changed = tracked
        .iter()
        .zip(now.lines())
        .filter(|(r, id)| committed.get(r.as_str()) != Some(&id.trim()))
        .map(|(r, _)| workspace.join(r.as_str()))
        .collect();
    (loose, changed)
}
