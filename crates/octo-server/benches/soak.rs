//! `cargo bench -p octo-server --bench soak` (a benchmark, not a timed test; issue 33): 1,000
//! turns through the mock model in one session, twice — an in-process session (as the REPL and
//! a one-shot drive it) and one `octo serve` session driven over HTTP and SSE — each turn a
//! shell call and an answer, a background shell running throughout, compaction whenever the
//! context fills (a 24,000-token window). Every 100 turns: the process's RSS, open file
//! descriptors and threads. Goal: RSS at turn 1,000 within 10 % (or 10 MiB) of turn 100, no
//! growth in descriptors or threads. The mock model keeps no record of the requests, so the
//! memory measured is octo's.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Mode, Session, SessionOptions};
use octo_testkit::anthropic::Reply;
use serde_json::json;

const TURNS: usize = 1_000;
const EVERY: usize = 100;

/// `SOAK_TURNS` shortens a run (a multiple of 100); `SOAK_TOOL=list_dir` calls a tool that
/// starts no process; `SOAK_ONLY=session|serve` runs one half — for looking into a finding.
fn turns() -> usize {
    std::env::var("SOAK_TURNS").ok().and_then(|t| t.parse().ok()).unwrap_or(TURNS)
}
/// A small window, so compaction comes round every few dozen turns.
const WINDOW: &str = "context_windows = { \"claude-sonnet-4-5\" = 24000 }";

/// What one reply of the script is: a tool call (name, input) or an answer.
#[derive(Clone)]
enum Step {
    Call(String, serde_json::Value),
    Say(String),
}

/// One turn's two replies: a shell call, then the answer. The first turn starts the background
/// shell that runs for the whole soak.
fn script() -> Vec<Step> {
    let list = std::env::var("SOAK_TOOL").is_ok_and(|t| t == "list_dir");
    let mut v = Vec::with_capacity(2 * turns());
    for i in 0..turns() {
        let call = if list {
            ("list_dir", json!({"path": "."}))
        } else if i == 0 {
            (
                "terminal",
                json!({"command": "sleep 3600", "run_in_background": true, "description": "a long job"}),
            )
        } else {
            ("terminal", json!({"command": format!("echo turn {i}"), "description": "say the turn"}))
        };
        v.push(Step::Call(call.0.to_owned(), call.1));
        v.push(Step::Say(format!("Turn {i} is done; the shell said what it should.")));
    }
    v
}

/// The mock model of the soak: the script in order, a summary for compaction's requests (told
/// apart by their system prompt), each reply's input tokens a quarter of the request's bytes (so
/// the context fills as it would and compaction comes round). Unlike the wiremock-based mock it
/// keeps no request — wiremock keeps every matched one, which over 1,000 growing requests is
/// most of a gigabyte — so the memory measured is octo's.
async fn model() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let script = std::sync::Arc::new((script(), AtomicUsize::new(0)));
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move |body: axum::body::Bytes| {
            let script = std::sync::Arc::clone(&script);
            async move {
                let tokens = body.len() as u64 / 4;
                let compacting = String::from_utf8_lossy(&body).contains("You compress coding-agent conversations");
                let reply = if compacting {
                    Reply::new().text("## Goals\nKeep answering.\n## Decisions\nNone.\n## Files touched\nNone.\n## Open tasks\nMore turns.\n## Errors and how they were handled\nNone.")
                } else {
                    let i = script.1.fetch_add(1, Ordering::SeqCst);
                    match script.0.get(i) {
                        Some(Step::Call(tool, input)) => Reply::new().tool_use(format!("c{i}"), tool, input.clone()),
                        Some(Step::Say(t)) => Reply::new().text(t),
                        None => Reply::new().text("The script has ended."),
                    }
                };
                ([("content-type", "text/event-stream")], reply.usage(tokens, 30, 0, 0).sse())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// RSS (KiB), open descriptors, threads of this process.
fn probe() -> (u64, usize, usize) {
    let count = |dir: &str| std::fs::read_dir(dir).map(Iterator::count).unwrap_or(0);
    (common::rss_kb(), count("/proc/self/fd"), count("/proc/self/task"))
}

fn report(what: &str, rows: &[(usize, (u64, usize, usize))], compactions: usize) {
    println!("{what}: {} turns, {compactions} compactions that folded turns into a summary", turns());
    println!("  turn    RSS MiB   fds  threads");
    for (turn, (rss, fds, threads)) in rows {
        println!("  {turn:>4}  {:>9.1}  {fds:>4}  {threads:>7}", *rss as f64 / 1024.0);
    }
    let (first, last) = (rows[0].1, rows[rows.len() - 1].1);
    // Descriptors and threads come and go with the work in flight (a command's pipes, pooled
    // connections, the runtime's blocking threads): growth is the last samples all above the
    // first ones, not one sample above another.
    let k = rows.len().div_ceil(3).max(1);
    let grew = |f: fn(&(u64, usize, usize)) -> usize| {
        let early = rows[..k].iter().map(|r| f(&r.1)).max().unwrap_or(0);
        let late = rows[rows.len() - k..].iter().map(|r| f(&r.1)).min().unwrap_or(0);
        late > early
    };
    let steady = !grew(|p| p.1) && !grew(|p| p.2);
    let grown = last.0.saturating_sub(first.0) as f64 / 1024.0;
    let within = grown <= 10.0 || (last.0 as f64) <= first.0 as f64 * 1.10;
    println!(
        "  RSS turn {} → {}: {grown:+.1} MiB ({}); descriptors {} → {}, threads {} → {} ({})",
        rows[0].0,
        rows[rows.len() - 1].0,
        if within { "within the goal" } else { "OVER the goal of 10 % or 10 MiB" },
        first.1,
        last.1,
        first.2,
        last.2,
        if steady { "no growth" } else { "GREW" }
    );
}

/// The in-process session: prompts and waits for each turn's end.
async fn in_process() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let base = model().await;
    std::fs::write(
        home.join("config.toml"),
        format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{base}\"\napi_key_env = \"MOCK_KEY\"\n{WINDOW}\n"),
    )
    .unwrap();
    let env = |k: &str| (k == "MOCK_KEY").then(|| "sk-mock".to_owned());
    let config = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
    let options = SessionOptions {
        workspace: Some(ws.clone()),
        mode: Some(Mode::Auto),
        save: std::env::var("SOAK_NO_SAVE").is_err(),
        ..SessionOptions::default()
    };
    let session = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    let (mut rows, mut compactions) = (Vec::new(), 0);
    for turn in 1..=turns() {
        let mut rx = session.subscribe();
        session.prompt(format!("turn {turn}")).unwrap();
        while let Ok(e) = rx.recv().await {
            match e {
                AgentEvent::CompactionEnd { messages_folded, .. } if messages_folded > 0 => compactions += 1,
                AgentEvent::TurnEnd { .. } => break,
                _ => {}
            }
        }
        if turn % EVERY == 0 {
            rows.push((turn, probe()));
        }
    }
    report("in-process session", &rows, compactions);
}

/// One `octo serve` session: each turn prompted over HTTP and followed on its event stream.
async fn served() {
    let base = model().await;
    let b = common::start_with(None, &base, "permission_mode = \"auto\"", WINDOW).await;
    let id = b.session().await;
    let (mut rows, mut compactions) = (Vec::new(), 0);
    for turn in 1..=turns() {
        let from = b.state.hub.get(&id).unwrap().last_event();
        let mut rx = b.state.hub.get(&id).unwrap().session.subscribe();
        let counted = tokio::spawn(async move {
            let mut n = 0;
            while let Ok(e) = rx.recv().await {
                match e {
                    AgentEvent::CompactionEnd { messages_folded, .. } if messages_folded > 0 => n += 1,
                    AgentEvent::TurnEnd { .. } => break,
                    _ => {}
                }
            }
            n
        });
        b.prompt(&id).await;
        let seen = b.follow(&id, from).await;
        assert!(!seen.is_empty(), "turn {turn}: no events over SSE");
        compactions += counted.await.unwrap();
        if turn % EVERY == 0 {
            rows.push((turn, probe()));
        }
    }
    report("octo serve session", &rows, compactions);
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let only = std::env::var("SOAK_ONLY").unwrap_or_default();
    if only != "serve" {
        rt.block_on(in_process());
    }
    if only != "session" {
        rt.block_on(served());
    }
}
