//! Broken servers: the edit goes on within its bound, the failure is named once, nothing loops.

use super::*;

fn quick() -> Settings {
    Settings {
        wait: Duration::from_millis(800),
        init_timeout: Duration::from_millis(1500),
        ..Settings::default()
    }
}

#[tokio::test]
async fn a_server_that_exits_at_once_or_prints_garbage_is_named_once() {
    for (name, script) in [("exits", "exit 3"), ("garbage", "echo 'this is not the protocol'; sleep 5")] {
        let (dir, root) = workspace(&[("a.py", "x = 1\n")]);
        let lsp = lsp(&root, vec![scripted(dir.path(), name, script, &["py"])], quick(), false);
        let file = root.join("a.py");
        let first = lsp.after_edit(&file).await;
        let told = match first {
            Some(t) => t,
            None => {
                tokio::time::sleep(Duration::from_millis(500)).await;
                lsp.after_edit(&file).await.unwrap_or_default()
            }
        };
        assert!(told.contains(&format!("`{name}` failed")), "{name}: {told}");
        assert_eq!(lsp.after_edit(&file).await, None, "{name}: named once");
        assert!(lsp.status()[0].state.starts_with("failed"), "{name}: {:?}", lsp.status());
    }
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_times_out_and_is_not_retried_in_a_loop() {
    let (dir, root) = workspace(&[("a.py", "x = 1\n")]);
    let starts = dir.path().join("starts");
    let script = format!("echo start >> '{}'\nexec sleep 30", starts.display());
    let lsp = lsp(&root, vec![scripted(dir.path(), "silent", &script, &["py"])], quick(), false);
    let file = root.join("a.py");
    // The server sleeps 30 s: an edit that waited for it would hold the test past its limit.
    assert_eq!(lsp.after_edit(&file).await, None, "still starting: nothing said");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let told = lsp.after_edit(&file).await.unwrap_or_default();
    assert!(told.contains("no answer to `initialize`"), "{told}");
    for _ in 0..5 {
        let _ = lsp.after_edit(&file).await;
    }
    let n = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert!(n <= 2, "started {n} times in a few seconds");
    lsp.shutdown().await;
}

#[tokio::test]
async fn files_outside_the_workspace_or_too_large_are_never_sent() {
    let (dir, root) = workspace(&[("big.py", &"x = 1\n".repeat(1_000_000)), ("ok.py", "x = 1\n")]);
    let starts = dir.path().join("starts");
    let script = format!("echo start >> '{}'\nexec sleep 30", starts.display());
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("o.py"), "x = 1\n").unwrap();
    let lsp = lsp(&root, vec![scripted(dir.path(), "s", &script, &["py"])], quick(), false);
    assert_eq!(lsp.after_edit(&outside.path().join("o.py")).await, None);
    lsp.touch(&outside.path().join("o.py"));
    assert_eq!(lsp.after_edit(&root.join("big.py")).await, None);
    assert_eq!(lsp.after_edit(Path::new("../../etc/passwd.py")).await, None);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!starts.exists(), "no server was started for them");
    assert_eq!(lsp.status()[0].state, "idle");
    lsp.touch(Path::new("ok.py"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(starts.exists(), "a read of a file inside starts it");
    lsp.shutdown().await;
}
