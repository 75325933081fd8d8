//! A repository of 50,000 source files: the map is built within its time budget, says it is
//! partial, and the next builds continue where the last stopped.

use super::fixture::write;
use octo_repomap::{Limits, RepoMap, Request};
use std::time::{Duration, Instant};

#[test]
fn fifty_thousand_files_are_mapped_in_steps_within_the_budget() {
    let ws = tempfile::tempdir().unwrap();
    for d in 0..250 {
        let files: Vec<(String, String)> = (0..200)
            .map(|f| (format!("m{d}/f{f}.rs"), format!("pub fn f_{d}_{f}() {{ f_0_0(); }}\n")))
            .collect();
        let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        write(ws.path(), &refs);
    }
    let budget = Duration::from_millis(1_500);
    let map = RepoMap::new(ws.path(), None).with_limits(Limits { budget, ..Limits::default() });
    let started = Instant::now();
    let first = map.build(&Request::default());
    let took = started.elapsed();
    // The budget bounds the walk and the parse; ranking and rendering come on top.
    assert!(took < budget + Duration::from_secs(5), "took {took:?}");
    assert!(first.progress.is_partial(), "{:?}", first.progress);
    assert!(first.text.contains("Partial map:"), "{}", first.text);
    let second = map.build(&Request::default());
    let read_first = first.progress.found - first.progress.pending;
    let read_second = second.progress.found - second.progress.pending;
    assert!(
        read_second > read_first || !second.progress.is_partial(),
        "{:?} then {:?}",
        first.progress,
        second.progress
    );
}
