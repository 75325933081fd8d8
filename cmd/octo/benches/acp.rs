//! What `octo acp` adds to a prompt: the time from `session/prompt` to the first
//! `agent_message_chunk` at the editor, against the same session's own path — from sending the
//! prompt to its first text event, in-process, as the REPL sees it — both against a local mock
//! model answering at once. The difference is the protocol's cost (budget: under 1 ms).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, InitializeRequest, NewSessionRequest, PromptRequest,
    SessionNotification, SessionUpdate,
};
use agent_client_protocol::{on_receive_notification, v1, AcpAgent, AcpAgentConfig, Agent, Client};
use octo_testkit::anthropic::Reply;
use octo_testkit::{MockLlm, Scripted, TempHome};
use std::time::{Duration, Instant};

const RUNS: usize = 30;
const BUDGET_MS: f64 = 1.0;

fn home(llm: &MockLlm) -> TempHome {
    let home = TempHome::new().unwrap();
    std::fs::write(home.home().join("config.toml"), llm.config_toml()).unwrap();
    home
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

/// The session's own path: prompt sent → first text event, in-process.
async fn in_process(home: &TempHome) -> f64 {
    let env = |k: &str| (k == "MOCK_KEY").then(|| "sk-mock".to_owned());
    let launcher = octo_app::Launcher::new(
        octo_app::Home::new(home.home()),
        octo_app::credentials::KeyStore::None,
        std::sync::Arc::new(octo_app::credentials::MemoryStore::default()),
        std::sync::Arc::new(env),
    );
    let options = octo_app::SessionOptions { save: false, ..octo_app::SessionOptions::default() };
    let s = launcher
        .start(octo_app::Launch { workspace: Some(home.workspace()), options, ..octo_app::Launch::default() })
        .unwrap();
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let mut rx = s.subscribe();
        let t = Instant::now();
        s.prompt("hi").unwrap();
        loop {
            match rx.recv().await.unwrap() {
                octo_app::AgentEvent::TextDelta { .. } => times.push(t.elapsed()),
                octo_app::AgentEvent::TurnEnd { .. } => break,
                _ => {}
            }
        }
        s.settle().await;
    }
    median(times)
}

/// Over ACP: `session/prompt` sent → first `agent_message_chunk` received by the editor.
async fn over_acp(home: &TempHome) -> f64 {
    let config = AcpAgentConfig::new(env!("CARGO_BIN_EXE_octo"))
        .args(["--no-save", "acp"])
        .env("HOME", home.home().display().to_string())
        .env("OCTO_HOME", home.home().display().to_string())
        .env("OCTO_NO_KEYRING", "1")
        .env("MOCK_KEY", "sk-mock");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let ws = home.workspace();
    let mut times = Vec::new();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                if matches!(n.update, SessionUpdate::AgentMessageChunk(_)) {
                    let _ = tx.send(Instant::now());
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(AcpAgent::new(config), async |cx: v1::ConnectionTo<Agent>| {
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(ClientCapabilities::new()),
            )
            .block_task()
            .await?;
            let id = cx.send_request(NewSessionRequest::new(ws)).block_task().await?.session_id;
            for _ in 0..RUNS {
                while rx.try_recv().is_ok() {}
                let t = Instant::now();
                let prompt = cx
                    .send_request(PromptRequest::new(id.clone(), vec![ContentBlock::from("hi".to_owned())]));
                let first = rx.recv().await.unwrap();
                times.push(first - t);
                prompt.block_task().await?;
            }
            Ok(())
        })
        .await
        .unwrap();
    median(times)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let llm = MockLlm::start().await;
        llm.script_anthropic((0..4 * RUNS).map(|_| Scripted::sse(Reply::new().text("hello").sse()))).await;
        let home = home(&llm);
        let direct = in_process(&home).await;
        let acp = over_acp(&home).await;
        let added = acp - direct;
        println!("acp: prompt → first text, in-process session {direct:.2} ms, over ACP {acp:.2} ms (median of {RUNS})");
        println!("acp: the protocol adds {added:.2} ms (budget {BUDGET_MS} ms){}", if added <= BUDGET_MS { "" } else { " — over budget" });
    });
}
