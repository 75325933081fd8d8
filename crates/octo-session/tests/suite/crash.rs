//! A writer killed with SIGKILL in the middle of writing leaves a session that still loads.

#![cfg(unix)]

use octo_agent::{ContentBlock, Message, Role};
use octo_session::SessionStore;
use serde_json::json;
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "OCTO_SESSION_CRASH_DIR";

/// Not a test on its own: when the parent test starts this binary with `CHILD_ENV` set, it
/// becomes a writer that appends rounds until it is killed.
#[test]
fn crash_writer_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let store = SessionStore::new(&dir);
    let mut w = store.create(std::path::Path::new(&dir), "e", "m", None).unwrap();
    let payload = "y".repeat(20_000);
    for i in 0.. {
        let call = Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolUse {
                id: format!("t{i}"),
                name: "read_file".into(),
                input: json!({"path": i}),
            }],
        );
        let result = Message::new(
            Role::User,
            vec![ContentBlock::tool_result(format!("t{i}"), payload.clone(), false)],
        );
        w.append(&[call, result]).unwrap();
    }
}

#[test]
fn sigkill_mid_write_leaves_a_loadable_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["suite::crash::crash_writer_child", "--exact", "--nocapture"])
        .env(CHILD_ENV, dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let store = SessionStore::new(dir.path());
    loop {
        let big_enough = store.list(None).unwrap().first().is_some_and(|_| {
            std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .any(|e| e.metadata().map(|m| m.len() > 2_000_000).unwrap_or(false))
        });
        if big_enough || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let id = store.list(None).unwrap()[0].id.clone();
    let loaded = store.load(&id).unwrap();
    assert!(loaded.messages.len() >= 50, "{}", loaded.messages.len());
    // Rounds are written whole: every call that made it to disk has its result... except
    // possibly a torn final round, which loading drops.
    let n = loaded.messages.len() - loaded.messages.len() % 2;
    for pair in loaded.messages[..n].chunks(2) {
        let ids: Vec<&str> = pair[0].tool_uses().map(|t| t.id).collect();
        assert_eq!(ids, pair[1].tool_result_ids().collect::<Vec<_>>());
    }
    // And it can be resumed and written again.
    let (_, mut w) = store.resume(&id).unwrap();
    w.append(&[Message::user("after the crash")]).unwrap();
    assert_eq!(store.load(&id).unwrap().messages.last().unwrap().text(), "after the crash");
}
