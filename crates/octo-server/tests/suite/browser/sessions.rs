//! Sessions, commands and sub-agents in a browser: the saved list (a broken file named), opening
//! one, renaming and deleting it, `/` completion and `/compact`, a sub-agent's panel.

use super::{chromium, launch, login, send, Page};
use crate::suite::common::start;
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_sessions_commands_and_a_sub_agent_panel() {
    let Some(bin) = chromium() else { return };
    let s = start(vec![]).await;
    // Later prompts first: their requests carry the earlier ones too. The sub-agent's own
    // requests carry only its prompt.
    s.llm
        .script_anthropic_matching(
            "explore please",
            [
                Scripted::sse(
                    Reply::new()
                        .tool_use("t1", "task", json!({"subagent_type": "explore", "description": "look around", "prompt": "list the files"}))
                        .sse(),
                ),
                Scripted::sse(Reply::new().text("The sub-agent looked.").sse()),
            ],
        )
        .await;
    s.llm
        .script_anthropic_matching(
            "list the files",
            [
                Scripted::sse(Reply::new().tool_use("c1", "list_dir", json!({"path": "."})).sse()),
                Scripted::sse(Reply::new().text("Two files.").sse()),
            ],
        )
        .await;
    s.llm
        .script_anthropic_matching(
            "the first question",
            [Scripted::sse(Reply::new().text("The first answer.").sse())],
        )
        .await;
    // A session saved before the page opens, and a file that cannot be read.
    let id = s.session().await;
    let (status, _) =
        s.post(&format!("/api/sessions/{id}/prompt"), json!({"text": "the first question"})).await;
    assert_eq!(status, 202);
    wait_idle(&s, &id).await;
    std::fs::write(s.home.join("sessions/20990101-broken.jsonl"), "not json\n").unwrap();
    let del = s.req(reqwest::Method::DELETE, &format!("/api/sessions/{id}")).send().await.unwrap();
    assert!(del.status().is_success());

    let browser = launch(&bin);
    let mut page = Page::open(browser.port).await;
    login(&mut page, &s).await;
    page.wait(
        "the saved session",
        "[...document.querySelectorAll('#saved li')].some(e => e.textContent.includes('first question'))",
    )
    .await;
    page.wait("the broken file named", "[...document.querySelectorAll('#saved li.broken')].some(e => e.textContent.includes('20990101-broken'))").await;
    page.screenshot("sessions-list").await;
    page.eval("[...document.querySelectorAll('#saved li')].find(e => e.textContent.includes('first question')).click(); true").await;
    page.wait("its history", "document.querySelector('#log').innerText.includes('The first answer.')").await;
    // Rename it from the list (once the list marks it as the current one: under load the list
    // is drawn again after the history).
    page.wait(
        "the current session marked",
        "!!document.querySelector('#saved li.current .acts button[title=Rename]')",
    )
    .await;
    page.eval("window.prompt = () => 'Renamed talk'; document.querySelector('#saved li.current .acts button[title=Rename]').click(); true").await;
    page.wait(
        "the new title",
        "[...document.querySelectorAll('#saved li .t')].some(e => e.textContent === 'Renamed talk')",
    )
    .await;
    // `/` completes commands; `/compact` runs from the input and answers as a card.
    page.eval("const p = document.querySelector('#prompt'); p.value = '/comp'; p.dispatchEvent(new Event('input')); true").await;
    page.wait("the completion", "!document.querySelector('#complete').hidden && document.querySelector('#complete').textContent.includes('/compact')").await;
    page.screenshot("command-completion").await;
    send(&mut page, "/compact").await;
    page.wait(
        "the compact card",
        "[...document.querySelectorAll('.card.command')].some(e => e.textContent.includes('/compact'))",
    )
    .await;
    // A sub-agent's work under its task call.
    send(&mut page, "explore please").await;
    page.wait(
        "the sub-agent panel",
        "document.querySelector('.card.tool .subagent')?.textContent.includes('started: look around')",
    )
    .await;
    page.wait(
        "the sub-agent finished",
        "document.querySelector('.subagent')?.textContent.includes('finished')",
    )
    .await;
    page.wait("the answer", "document.querySelector('#log').innerText.includes('The sub-agent looked.')")
        .await;
    page.eval("document.querySelectorAll('details.subagent').forEach(d => d.open = true); true").await;
    page.screenshot("sub-agent-panel").await;
    // Delete it (confirmed): gone from the list and from disk.
    let saved = page
        .eval("document.querySelector('#saved li.current')?.dataset.saved")
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!saved.is_empty());
    page.eval("window.confirm = () => true; document.querySelector('#saved li.current .acts button[title=Delete]').click(); true").await;
    page.wait("the session gone", &format!("!document.querySelector('#saved li[data-saved=\"{saved}\"]')"))
        .await;
    assert!(!s.home.join(format!("sessions/{saved}.jsonl")).exists());
    assert!(page.errors.is_empty(), "the page threw: {:?}", page.errors);
}

async fn wait_idle(s: &crate::suite::common::Server, id: &str) {
    for _ in 0..200 {
        let (_, st) = s.get(&format!("/api/sessions/{id}")).await;
        if st["running"] == json!(false) && st["turns"].as_u64() == Some(1) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the session never finished its turn");
}
