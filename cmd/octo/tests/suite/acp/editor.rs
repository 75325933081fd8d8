//! What the editor offers and answers beyond prompts: its buffers for reads and writes, and a
//! "reject always".

use super::*;
use agent_client_protocol::v1::schema::FileSystemCapabilities;

/// An editor that offers `fs/read_text_file`: `read_file` sees its unsaved buffer; a file it does
/// not hold is read from the disk.
#[tokio::test(flavor = "multi_thread")]
async fn reads_go_through_the_editors_buffers_when_it_offers_them() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use("t1", "read_file", json!({"path": "open.rs"}))
                .tool_use("t2", "read_file", json!({"path": "closed.rs"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Read both.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("open.rs", "fn saved() {}\n").unwrap();
    home.write("closed.rs", "fn on_disk() {}\n").unwrap();
    let h = &home;
    let caps = ClientCapabilities::new().fs(FileSystemCapabilities::new().read_text_file(true));
    let seen = drive_with(&home, None, caps, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        cx.send_request(PromptRequest::new(id, vec![text("read them")])).block_task().await?;
        Ok(())
    })
    .await;
    let results = llm.request_bodies().await[1]["messages"].to_string();
    assert!(
        results.contains("only in the editor") && !results.contains("fn saved()"),
        "the editor's buffer: {results}"
    );
    assert!(results.contains("fn on_disk()"), "a file the editor does not hold comes from the disk");
    assert_eq!(seen.lock().unwrap().reads.len(), 2);
}

/// An editor that offers `fs/write_text_file`: an edit of a file it holds is made to its buffer
/// (unsaved text included) and written there, not to the disk; a new file goes to the disk.
#[tokio::test(flavor = "multi_thread")]
async fn edits_land_in_the_editors_buffer_when_it_offers_writes() {
    let llm = MockLlm::start().await;
    llm.script_anthropic([
        Scripted::sse(
            Reply::new()
                .tool_use(
                    "t1",
                    "edit_file",
                    json!({"path": "open.rs", "old_string": "unsaved", "new_string": "edited"}),
                )
                .tool_use("t2", "write_file", json!({"path": "fresh.rs", "content": "fn fresh() {}\n"}))
                .sse(),
        ),
        Scripted::sse(Reply::new().text("Edited.").sse()),
    ])
    .await;
    let home = home_for(&llm);
    home.write("open.rs", "fn saved() {}\n").unwrap();
    let h = &home;
    let fs = FileSystemCapabilities::new().read_text_file(true).write_text_file(true);
    let caps = ClientCapabilities::new().fs(fs);
    let seen = drive_with(&home, Some(PermissionOptionKind::AllowOnce), caps, async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        cx.send_request(PromptRequest::new(id, vec![text("edit it")])).block_task().await?;
        Ok(())
    })
    .await;
    let s = seen.lock().unwrap();
    assert_eq!(s.writes.len(), 1, "only the existing file goes through the editor: {:?}", s.writes);
    let (path, content) = &s.writes[0];
    assert!(path.ends_with("open.rs"));
    assert_eq!(content, "fn edited() {} // only in the editor\n", "the edit is made to the buffer's text");
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("open.rs")).unwrap(),
        "fn saved() {}\n",
        "the disk is the editor's to save"
    );
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("fresh.rs")).unwrap(),
        "fn fresh() {}\n",
        "a new file is written to the disk"
    );
    assert!(answer(&s).contains("Edited."));
}

/// "Always reject" refuses the same command again without asking, for the rest of the session.
#[tokio::test(flavor = "multi_thread")]
async fn always_reject_is_not_asked_again() {
    let llm = MockLlm::start().await;
    let run = || Reply::new().tool_use("t1", "terminal", json!({"command": "touch made-by-command"})).sse();
    llm.script_anthropic_matching(
        "again",
        [Scripted::sse(run()), Scripted::sse(Reply::new().text("Still refused.").sse())],
    )
    .await;
    llm.script_anthropic_matching(
        "run it",
        [Scripted::sse(run()), Scripted::sse(Reply::new().text("Refused.").sse())],
    )
    .await;
    llm.script_anthropic([Scripted::sse(Reply::new().text("A title").sse())]).await;
    let home = home_for(&llm);
    let h = &home;
    let seen = drive(&home, Some(PermissionOptionKind::RejectAlways), async move |cx, _seen| {
        let id = new_session(&cx, h).await;
        cx.send_request(PromptRequest::new(id.clone(), vec![text("run it")])).block_task().await?;
        cx.send_request(PromptRequest::new(id, vec![text("again")])).block_task().await?;
        Ok(())
    })
    .await;
    assert!(!home.workspace().join("made-by-command").exists());
    let s = seen.lock().unwrap();
    assert_eq!(s.asked.len(), 1, "asked once, then refused without asking");
    assert!(s.asked[0].options.iter().any(|o| o.kind == PermissionOptionKind::RejectAlways));
    assert!(answer(&s).contains("Still refused."));
}
