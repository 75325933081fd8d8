//! `make bench`: what `octo serve` adds. Fan-out latency (an event seen in the session, then by
//! an SSE client), memory per idle session, and 50 sessions streaming at once without a lost
//! event. Against the mock model, on loopback.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{rss_kb, start};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A streamed answer of `n` pieces.
fn answer(n: usize) -> Scripted {
    let mut r = Reply::new();
    for i in 0..n {
        r = r.text(format!("word{i} "));
    }
    Scripted::sse(r.sse())
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        // Fan-out latency: the session's own subscriber sees each event, then the SSE client.
        let b = start((0..30).map(|_| answer(200)).collect()).await;
        let id = b.session().await;
        let mut lat = Vec::new();
        for _ in 0..30 {
            let entry = b.state.hub.get(&id).unwrap();
            let mut direct = entry.session.subscribe();
            let from = entry.last_event();
            let seen = tokio::spawn(async move {
                let mut t = Vec::new();
                while let Ok(ev) = direct.recv().await {
                    t.push(Instant::now());
                    if matches!(ev, octo_app::AgentEvent::TurnEnd { .. }) {
                        return t;
                    }
                }
                t
            });
            let sse = {
                let b = &b;
                let id = id.clone();
                async move { b.follow(&id, from).await }
            };
            b.prompt(&id).await;
            let (client, direct) = tokio::join!(sse, seen);
            let direct = direct.unwrap();
            let client: Vec<Instant> = client.into_iter().filter(|(s, _)| *s > from).map(|(_, t)| t).collect();
            for (d, c) in direct.iter().zip(&client) {
                lat.push(c.saturating_duration_since(*d));
            }
        }
        lat.sort();
        let p = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e6;
        println!(
            "serve: fan-out latency, session to SSE client: median {:.0} µs, p99 {:.0} µs ({} events; budget p99 10000 µs)",
            p(0.5),
            p(0.99),
            lat.len()
        );

        // Memory per idle session.
        let idle = start(vec![]).await;
        let before = rss_kb();
        for _ in 0..100 {
            idle.session().await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let per = (rss_kb().saturating_sub(before)) as f64 / 100.0;
        println!("serve: memory per idle session: {per:.0} KB (RSS over 100 sessions)");

        // 50 sessions streaming at once: every client gets every event.
        let many = Arc::new(start((0..50).map(|_| answer(200)).collect()).await);
        let mut ids = Vec::new();
        for _ in 0..50 {
            ids.push(many.session().await);
        }
        let started = Instant::now();
        let mut tasks = Vec::new();
        for id in ids.clone() {
            let m = Arc::clone(&many);
            tasks.push(tokio::spawn(async move {
                let follow = m.follow(&id, 0);
                let (events, ()) = tokio::join!(follow, m.prompt(&id));
                let last = m.state.hub.get(&id).unwrap().last_event();
                let seqs: Vec<u64> = events.iter().map(|e| e.0).collect();
                (seqs == (1..=last).collect::<Vec<_>>(), seqs.len())
            }));
        }
        let (mut complete, mut total) = (0, 0);
        for t in tasks {
            let (ok, n) = t.await.unwrap();
            complete += usize::from(ok);
            total += n;
        }
        println!(
            "serve: 50 sessions streaming at once: {complete}/50 clients got every event ({total} events) in {:.0} ms (budget 50/50)",
            started.elapsed().as_secs_f64() * 1e3
        );
    });
}
