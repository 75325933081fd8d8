//! `make bench`: the repository map of this repository itself — a cold build (empty cache:
//! every file walked and parsed), a warm one (cache on disk, nothing changed: walk and stat
//! only) and a warm one after one file changed; medians of several runs, and the map's size.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used)]

use octo_repomap::{tokens, Limits, RepoMap, Request};
use std::path::Path;
use std::time::{Duration, Instant};

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let limits = Limits { budget: Duration::from_secs(120), ..Limits::default() };
    let request = Request::default();
    let mut cold = Vec::new();
    let mut last = None;
    for _ in 0..3 {
        let home = tempfile::tempdir().unwrap();
        let map = RepoMap::new(&root, Some(home.path().to_path_buf())).with_limits(limits.clone());
        let t = Instant::now();
        let built = map.build(&request);
        cold.push(t.elapsed());
        last = Some((home, built));
    }
    let (home, built) = last.unwrap();
    let mut warm = Vec::new();
    for _ in 0..5 {
        let map = RepoMap::new(&root, Some(home.path().to_path_buf())).with_limits(limits.clone());
        let t = Instant::now();
        let again = map.build(&request);
        warm.push(t.elapsed());
        assert_eq!(again.progress.parsed, 0, "a warm build reads nothing");
    }
    let map = RepoMap::new(&root, Some(home.path().to_path_buf())).with_limits(limits);
    map.build(&request);
    let mut touched = Vec::new();
    // One file's modification time moves (its content stays): it is read again.
    let touched_file =
        std::fs::File::options().append(true).open(root.join("crates/octo-repomap/src/lib.rs")).unwrap();
    for i in 0..5 {
        touched_file.set_modified(std::time::SystemTime::now() + Duration::from_secs(i + 1)).unwrap();
        let t = Instant::now();
        let again = map.build(&request);
        touched.push(t.elapsed());
        assert_eq!(again.progress.parsed, 1);
    }
    touched_file.set_modified(std::time::SystemTime::now()).unwrap();
    let focused = map.build(&Request { focus: vec!["crates/octo-lsp/src/manager.rs".into()], budget: None });
    println!(
        "repo map of this repository: {} source files; cold build median {:.0} ms, warm {:.0} ms, warm with one changed file {:.0} ms; map {} tokens (default budget), focused {} tokens",
        built.progress.found,
        median(cold),
        median(warm),
        median(touched),
        tokens(&built.text),
        tokens(&focused.text),
    );
}
