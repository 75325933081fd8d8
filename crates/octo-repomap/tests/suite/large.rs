//! A repository of 50,000 source files: the map is built within its time budget, says it is
//! partial, and the next builds continue where the last stopped.

use octo_repomap::{Limits, RepoMap, Request};
use std::time::{Duration, Instant};

#[test]
fn fifty_thousand_files_are_mapped_in_steps_within_the_budget() {
    let ws = tempfile::tempdir().unwrap();
    for d in 0..250 {
        let dir = ws.path().join(format!("m{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..200 {
            std::fs::write(dir.join(format!("f{f}.rs")), format!("pub fn f_{d}_{f}() {{ f_0_0(); }}\n"))
                .unwrap();
        }
    }
    // Far less than the whole takes (walking and parsing 50,000 files is seconds of work).
    let home = tempfile::tempdir().unwrap();
    let budget = Duration::from_millis(100);
    let limits = Limits { budget, ..Limits::default() };
    let map = RepoMap::new(ws.path(), Some(home.path().to_path_buf())).with_limits(limits);
    let started = Instant::now();
    let first = map.build(&Request::default());
    let took = started.elapsed();
    // The walk may take four budgets, the parse a quarter more; ranking and rendering come on top.
    assert!(took < budget * 5 + Duration::from_secs(5), "took {took:?}");
    assert!(first.progress.is_partial(), "{:?}", first.progress);
    assert!(first.text.contains("Partial map:"), "{}", first.text);
    assert!(first.progress.parsed > 0, "{:?}", first.progress);
    // The next build (a later session here, with time enough) reads only what is left.
    let limits = Limits { budget: Duration::from_secs(60), ..Limits::default() };
    let next = RepoMap::new(ws.path(), Some(home.path().to_path_buf())).with_limits(limits);
    let whole = next.build(&Request::default());
    assert!(!whole.progress.is_partial(), "{:?}", whole.progress);
    assert_eq!(whole.progress.found, 50_000);
    assert_eq!(
        whole.progress.parsed,
        first.progress.found.max(50_000) - first.progress.parsed,
        "{:?} then {:?}",
        first.progress,
        whole.progress
    );
    assert!(!whole.text.contains("Partial map:"), "{}", whole.text);
    assert!(whole.text.contains("pub fn f_0_0()"), "the definition every file uses leads: {}", whole.text);
}
