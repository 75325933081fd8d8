//! Keeping the checkpoint stores small: checkpoints older than the age limit are dropped, then
//! the oldest ones while all stores together are over the size limit; git then drops the files
//! no checkpoint needs any more (after a day's grace, so a snapshot being taken is never hurt).

use super::error::CheckpointError;
use super::git::Git;
use std::path::{Path, PathBuf};

/// What pruning did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PruneReport {
    /// Checkpoints dropped.
    pub removed: usize,
    /// The stores' size before, in bytes.
    pub bytes_before: u64,
}

/// Drops checkpoints older than `max_age_secs`, then the oldest while the stores under `root`
/// take more than `max_bytes`.
pub fn prune(root: &Path, max_age_secs: u64, max_bytes: u64) -> Result<PruneReport, CheckpointError> {
    let stores: Vec<Git> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("HEAD").is_file())
        .map(|p| Git { git_dir: p.clone(), work_tree: p })
        .collect();
    let bytes_before: u64 = stores.iter().map(|g| dir_size(&g.git_dir.join("objects"))).sum();
    let cutoff = crate::now().saturating_sub(max_age_secs);
    // (time, store, ref), oldest first.
    let mut refs: Vec<(u64, usize, String)> = Vec::new();
    for (i, g) in stores.iter().enumerate() {
        let out =
            g.text(None, &["for-each-ref", "--format=%(committerdate:unix) %(refname)", "refs/octo/"], None)?;
        refs.extend(out.lines().filter_map(|l| {
            let (t, r) = l.split_once(' ')?;
            Some((t.parse().ok()?, i, r.to_owned()))
        }));
    }
    refs.sort();
    let mut drop: Vec<(usize, String)> =
        refs.iter().filter(|(t, _, _)| *t < cutoff).map(|(_, i, r)| (*i, r.clone())).collect();
    if bytes_before > max_bytes {
        // Over the size limit: the older half goes (the size is only known after git's cleanup).
        let half = refs.len().div_ceil(2);
        for (_, i, r) in refs.iter().take(half) {
            if !drop.iter().any(|(j, s)| j == i && s == r) {
                drop.push((*i, r.clone()));
            }
        }
    }
    let mut touched: Vec<usize> = Vec::new();
    for (i, r) in &drop {
        stores[*i].run(None, &["update-ref", "-d", r], None)?;
        if !touched.contains(i) {
            touched.push(*i);
        }
    }
    for i in touched {
        stores[i].run(None, &["gc", "--quiet", "--prune=1.day.ago"], None)?;
    }
    Ok(PruneReport { removed: drop.len(), bytes_before })
}

fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
