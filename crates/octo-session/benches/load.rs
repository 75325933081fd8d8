//! Loading and resuming a 10,000-message session, and the cost of appending one round (written
//! and fsynced).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use octo_agent::{ContentBlock, Message, Role};
use octo_session::SessionStore;
use serde_json::json;
use std::time::{Duration, Instant};

fn round(i: usize) -> [Message; 3] {
    [
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::text(format!(
                    "Let me look at file {i}; this is a typical short explanation of the next step."
                )),
                ContentBlock::ToolUse {
                    id: format!("toolu_{i}"),
                    name: "read_file".into(),
                    input: json!({"path": format!("src/mod_{i}.rs")}),
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result(format!("toolu_{i}"), "fn example() {}\n".repeat(20), false)],
        ),
        Message::user(format!("Now change function {i} please.")),
    ]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut w = store.create(dir.path(), "anthropic", "claude-sonnet-4-5", None).unwrap();
    let id = w.id().to_owned();
    let mut all = Vec::new();
    for i in 0..3334 {
        all.extend(round(i));
    }
    all.truncate(10_000);
    w.append(&all).unwrap();
    drop(w);
    let size = std::fs::metadata(dir.path().join(format!("{id}.jsonl"))).unwrap().len();

    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let l = store.load(&id).unwrap();
        best = best.min(t.elapsed());
        assert_eq!(l.messages.len(), 10_000);
    }
    println!("load 10,000 messages ({:.1} MB):   {:>7.1} ms", size as f64 / 1e6, best.as_secs_f64() * 1e3);

    let t = Instant::now();
    let (loaded, mut w) = store.resume(&id).unwrap();
    let resume = t.elapsed();
    println!("resume (load + lock for append):    {:>7.1} ms", resume.as_secs_f64() * 1e3);
    assert_eq!(loaded.messages.len(), 10_000);

    let rounds = 200;
    let t = Instant::now();
    for i in 0..rounds {
        w.append(&round(i)[..2]).unwrap();
    }
    let per = t.elapsed() / rounds as u32;
    println!("append one round (2 messages, fsync): {:>5.2} ms", per.as_secs_f64() * 1e3);

    let t = Instant::now();
    let n = store.list(None).unwrap().len();
    println!("list sessions ({n}):                  {:>7.1} ms", t.elapsed().as_secs_f64() * 1e3);
}
