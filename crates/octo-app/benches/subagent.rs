//! `make bench`: what starting a sub-agent, and running a PreToolUse hook, cost octo itself. Three kinds of turn against a local
//! mock model: one answer (one request), a plain tool call (two requests), a `task` call whose
//! child answers at once (three requests). The child's overhead is what the task turn costs
//! beyond the tool turn and one more request.
// A benchmark panics on a broken setup, like a test.
#![allow(clippy::unwrap_used)]

use octo_app::config::{Config, Overrides};
use octo_app::credentials::MemoryStore;
use octo_app::{AgentEvent, Session, SessionOptions};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted};
use serde_json::json;
use std::time::{Duration, Instant};

fn env(k: &str) -> Option<String> {
    (k == "MOCK_KEY").then(|| "sk-mock".to_owned())
}

async fn median(runs: usize, extra: &str, replies: impl Fn() -> Vec<Scripted>) -> Duration {
    let tmp = tempfile::tempdir().unwrap();
    let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let llm = MockLlm::start().await;
    llm.script_anthropic((0..runs + 2).flat_map(|_| replies())).await;
    std::fs::write(
        home.join("config.toml"),
        format!("default = \"mock:claude-sonnet-4-5\"\n[endpoints.mock]\nprotocol = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"MOCK_KEY\"\n{extra}", llm.uri()),
    )
    .unwrap();
    let config = Config::load(&home, &ws, &env, &Overrides::default()).unwrap();
    let options = SessionOptions { workspace: Some(ws.clone()), ..SessionOptions::default() };
    let session = Session::start(config, options, &MemoryStore::default(), &env).unwrap();
    let mut times = Vec::new();
    for i in 0..runs + 2 {
        let mut rx = session.subscribe();
        let t = Instant::now();
        session.prompt("go").unwrap();
        while let Ok(e) = rx.recv().await {
            if matches!(e, AgentEvent::TurnEnd { .. }) {
                break;
            }
        }
        // The first two warm up the connection pool.
        if i >= 2 {
            times.push(t.elapsed());
        }
        session.conversation().clear().unwrap();
    }
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let runs = 40;
    let answer = || Scripted::sse(Reply::new().text("Done.").sse());
    let one = rt.block_on(median(runs, "", || vec![answer()]));
    let tool = rt.block_on(median(runs, "", || {
        vec![Scripted::sse(Reply::new().tool_use("t", "list_dir", json!({"path": "."})).sse()), answer()]
    }));
    let task = rt.block_on(median(runs, "", || {
        vec![
            Scripted::sse(
                Reply::new()
                    .tool_use(
                        "t",
                        "task",
                        json!({"subagent_type": "explore", "description": "x", "prompt": "look"}),
                    )
                    .sse(),
            ),
            answer(),
            answer(),
        ]
    }));
    // A PreToolUse hook that does nothing (`true`), against the same tool turn without it.
    let hooked = rt.block_on(median(runs, "[[hooks.PreToolUse]]\ncommand = \"true\"\n", || {
        vec![Scripted::sse(Reply::new().tool_use("t", "list_dir", json!({"path": "."})).sse()), answer()]
    }));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "hooks: a tool call turn {:.2} ms with a PreToolUse hook that does nothing (`true`), {:.2} ms without ({:+.2} ms per call)",
        ms(hooked),
        ms(tool),
        ms(hooked) - ms(tool)
    );
    println!(
        "sub-agent: one answer {:.2} ms, tool call turn {:.2} ms, task turn {:.2} ms; a child costs octo {:+.2} ms beyond its model request",
        ms(one),
        ms(tool),
        ms(task),
        ms(task) - ms(tool) - ms(one)
    );
}
