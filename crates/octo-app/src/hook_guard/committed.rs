//! Which of a hook's files differ from the last commit: a change a model made in an earlier
//! session (and the user did not commit) is not taken as the starting point of this one.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The `files` (existing, in `workspace`) that git tracks and whose contents differ from `HEAD`'s
/// (empty outside a repository, or without git). Git runs with the repository's program hooks
/// off and no filters, so nothing the workspace names runs.
pub(super) fn uncommitted(workspace: &Path, files: &[PathBuf]) -> HashSet<PathBuf> {
    let rel: Vec<String> = files
        .iter()
        .filter(|f| f.is_file())
        .filter_map(|f| f.strip_prefix(workspace).ok())
        .map(|r| r.display().to_string())
        .collect();
    if rel.is_empty() {
        return HashSet::new();
    }
    let mut args = vec!["ls-tree", "-z", "HEAD", "--"];
    args.extend(rel.iter().map(String::as_str));
    let Ok(tree) = crate::git_cli::run(workspace, &args) else { return HashSet::new() };
    let committed: HashMap<&str, &str> = tree
        .split('\0')
        .filter_map(|record| {
            let (head, path) = record.split_once('\t')?;
            let mut parts = head.split(' ');
            let (_, kind, id) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "blob").then_some((path, id))
        })
        .collect();
    let tracked: Vec<&String> = rel.iter().filter(|r| committed.contains_key(r.as_str())).collect();
    if tracked.is_empty() {
        return HashSet::new();
    }
    let mut args = vec!["hash-object", "--no-filters", "--"];
    args.extend(tracked.iter().map(|s| s.as_str()));
    let Ok(now) = crate::git_cli::run(workspace, &args) else { return HashSet::new() };
    tracked
        .iter()
        .zip(now.lines())
        .filter(|(r, id)| committed.get(r.as_str()) != Some(&id.trim()))
        .map(|(r, _)| workspace.join(r.as_str()))
        .collect()
}
