//! Checkpoints of a 10,000-file workspace with the system git: the first snapshot, a snapshot
//! when nothing changed (budget 50 ms), and a whole turn's checkpoint — before, 100 files
//! changed, after, recorded (budget 300 ms) — with the store's size as it grows.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use octo_session::checkpoint::{CheckpointStore, TurnRecord};
use std::time::{Duration, Instant};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn dir_size(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let m = e.metadata().unwrap();
        total += if m.is_dir() { dir_size(&e.path()) } else { m.len() };
    }
    total
}

fn main() {
    if std::process::Command::new("git").arg("--version").output().is_err() {
        println!("checkpoints: skipped (no git)");
        return;
    }
    let (home, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in 0..100 {
        let dir = ws.path().join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(
                dir.join(format!("f{f}.rs")),
                format!("pub fn f{d}_{f}() -> u32 {{ {f} }}\n").repeat(20),
            )
            .unwrap();
        }
    }
    let store = CheckpointStore::open(home.path(), ws.path()).unwrap();
    let t = Instant::now();
    store.snapshot("bench").unwrap();
    println!("checkpoint: first snapshot of 10,000 files       {:>8.1} ms", ms(t.elapsed()));

    let mut unchanged = Duration::MAX;
    for _ in 0..10 {
        let t = Instant::now();
        store.snapshot("bench").unwrap();
        unchanged = unchanged.min(t.elapsed());
    }
    println!("checkpoint: unchanged 10,000 files               {:>8.1} ms  (budget 50 ms)", ms(unchanged));

    let mut turn = Duration::MAX;
    let before_size = dir_size(store.dir());
    for round in 0..5 {
        let t = Instant::now();
        let before = store.snapshot("bench").unwrap();
        let setup = t.elapsed();
        for f in 0..100 {
            let p = ws.path().join(format!("src/m{}/f{f}.rs", f % 100));
            std::fs::write(&p, format!("// round {round}\npub fn changed() {{}}\n")).unwrap();
        }
        let t = Instant::now();
        let after = store.snapshot("bench").unwrap();
        let rec = TurnRecord {
            session: "bench",
            position: round,
            prompt: "change 100 files",
            before: &before,
            after: &after,
            by: &[],
        };
        let c = store.record(&rec).unwrap().unwrap();
        assert_eq!(c.changed.len(), 100);
        turn = turn.min(setup + t.elapsed());
    }
    println!("checkpoint: a turn changing 100 files            {:>8.1} ms  (budget 300 ms)", ms(turn));
    println!(
        "checkpoint: store {:.1} MB for the workspace, +{:.1} KB per 100-file turn",
        before_size as f64 / 1e6,
        (dir_size(store.dir()) - before_size) as f64 / 5.0 / 1e3
    );
}
