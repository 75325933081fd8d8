//! The conversation in a browser: Markdown, approvals with what they approve, reloads, two tabs,
//! rewind.

use super::{chromium, launch, login, send, Page};
use crate::suite::common::start;
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::json;

/// An answer with the Markdown users expect, and some the model must not get away with.
const ANSWER: &str = "Done: **beta** is now `gamma`, see [the docs](https://example.com/docs).\n\n\
| file | change |\n|---|---|\n| notes.txt | beta → gamma |\n\n\
```rust\nlet word = \"gamma\";\n```\n\n\
<script>window.__pwned = 1</script> <img src=x onerror=\"window.__pwned = 2\"> [click](javascript:window.__pwned=3)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_renders_as_markdown_and_an_edit_is_approved_from_its_diff_then_rewound() {
    let Some(bin) = chromium() else { return };
    let edit = Scripted::sse(
        Reply::new()
            .text("Let me fix the notes.")
            .tool_use(
                "toolu_1",
                "edit_file",
                json!({"path": "notes.txt", "old_string": "beta", "new_string": "gamma"}),
            )
            .sse(),
    );
    let s = start(vec![]).await;
    s.llm
        .script_anthropic_matching("Replace beta", [edit, Scripted::sse(Reply::new().text(ANSWER).sse())])
        .await;
    std::fs::write(s.ws.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let browser = launch(&bin);
    let mut page = Page::open(browser.port).await;
    login(&mut page, &s).await;
    page.wait("a session", "!!document.querySelector('#meter').textContent").await;
    send(&mut page, "Replace beta with gamma in notes.txt").await;
    page.wait(
        "the prompt card",
        "[...document.querySelectorAll('.msg.user')].some(e => e.textContent.includes('Replace beta'))",
    )
    .await;
    page.wait(
        "the streamed answer",
        "document.querySelector('#log').innerText.includes('Let me fix the notes.')",
    )
    .await;
    // The approval shows the diff before anything is answered.
    page.wait(
        "the diff in the approval card",
        "[...document.querySelectorAll('.approval .diff .add')].some(e => e.textContent.includes('gamma')) && [...document.querySelectorAll('.approval .diff .del')].some(e => e.textContent.includes('beta'))",
    )
    .await;
    page.screenshot("approval-with-diff").await;
    page.eval("document.querySelector('.approval button[data-d=allow]').click(); true").await;
    page.wait(
        "the answered card",
        "document.querySelector('.approval.resolved .answered')?.textContent.includes('allowed')",
    )
    .await;
    page.wait("the table", "!!document.querySelector('.msg.assistant table th') && document.querySelector('.msg.assistant td')?.textContent === 'notes.txt'").await;
    page.wait(
        "highlighted code",
        "!!document.querySelector('.msg.assistant pre code.language-rust span[class^=hl-]')",
    )
    .await;
    page.wait("the final text", "document.querySelector('#log').innerText.includes('see the docs')").await;
    let link = page.eval("(() => { const a = [...document.querySelectorAll('.msg.assistant a')].find(a => a.textContent === 'the docs'); return a && a.href + ' ' + a.target + ' ' + a.rel; })()").await;
    let link = link.as_str().unwrap_or_default().to_owned();
    assert!(link.starts_with("https://example.com/docs _blank") && link.contains("noopener"), "{link}");
    assert_eq!(
        page.eval("document.querySelectorAll('.msg.assistant pre .copy').length > 0").await,
        json!(true),
        "copy buttons on code"
    );
    // Nothing the model wrote ran or became markup.
    assert_eq!(page.eval("window.__pwned === undefined").await, json!(true));
    assert_eq!(page.eval("document.querySelectorAll('#log script, #log img').length").await, json!(0));
    assert_eq!(page.eval("[...document.querySelectorAll('#log a')].some(a => (a.getAttribute('href') || '').startsWith('javascript'))").await, json!(false));
    assert_eq!(std::fs::read_to_string(s.ws.join("notes.txt")).unwrap(), "alpha\ngamma\n");
    page.screenshot("answer-desktop").await;
    page.width(Some(390)).await;
    page.wait("the phone layout", "document.querySelector('#sidebar').getBoundingClientRect().right <= 0")
        .await;
    assert_eq!(
        page.eval("document.documentElement.scrollWidth <= 390").await,
        json!(true),
        "nothing wider than the phone"
    );
    page.screenshot("answer-390px").await;
    page.width(None).await;
    // Rewind the turn: the file goes back, the conversation too.
    page.wait("the rewind button", "!!document.querySelector('.msg.user .rewind')").await;
    page.eval("document.querySelector('.msg.user .rewind').click(); true").await;
    page.wait("the rewind menu", "document.querySelector('.rewind-menu')?.textContent.includes('notes.txt')")
        .await;
    page.screenshot("rewind-menu").await;
    page.eval("[...document.querySelectorAll('.rewind-menu button')].find(b => b.textContent.startsWith('Code and')).click(); true").await;
    page.wait("the rewind report", "document.querySelector('#log').innerText.includes('went back 1 turn')")
        .await;
    assert_eq!(std::fs::read_to_string(s.ws.join("notes.txt")).unwrap(), "alpha\nbeta\n");
    assert_eq!(
        page.eval("document.querySelectorAll('.msg.user').length").await,
        json!(0),
        "the turn is gone from the conversation"
    );
    assert!(page.errors.is_empty(), "the page threw: {:?}", page.errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_mid_turn_shows_the_same_cards_and_the_pending_approval_two_tabs_answer_once() {
    let Some(bin) = chromium() else { return };
    let s = start(vec![]).await;
    s.llm
        .script_anthropic_matching(
            "run the greeting",
            [
                Scripted::sse(
                    Reply::new()
                        .text("I will run it.")
                        .tool_use("toolu_1", "terminal", json!({"command": "echo hi > greeting.txt"}))
                        .sse(),
                ),
                Scripted::sse(Reply::new().text("It ran.").sse()),
            ],
        )
        .await;
    let browser = launch(&bin);
    let mut page = Page::open(browser.port).await;
    login(&mut page, &s).await;
    page.wait("a session", "!!document.querySelector('#meter').textContent").await;
    send(&mut page, "run the greeting").await;
    page.wait("the approval", "!!document.querySelector('.approval button[data-d=allow]')").await;
    page.wait(
        "the command in it",
        "document.querySelector('.approval pre').textContent.includes('echo hi > greeting.txt')",
    )
    .await;
    // Reload while the turn waits: the same cards, and the approval can still be answered.
    page.call("Page.reload", json!({})).await;
    page.wait(
        "the prompt again",
        "[...document.querySelectorAll('.msg.user')].some(e => e.textContent.includes('run the greeting'))",
    )
    .await;
    page.wait("the text so far", "document.querySelector('#log').innerText.includes('I will run it.')").await;
    page.wait(
        "the pending approval again",
        "!!document.querySelector('.approval:not(.resolved) button[data-d=allow]')",
    )
    .await;
    page.screenshot("reload-pending-approval").await;
    // A second tab answers; the first sees it answered, and a second answer is refused.
    let url = page.eval("location.href").await.as_str().unwrap_or_default().to_owned();
    let mut other = Page::tab(browser.port, &url).await;
    other
        .wait(
            "the approval in the second tab",
            "!!document.querySelector('.approval:not(.resolved) button[data-d=allow]')",
        )
        .await;
    other.eval("document.querySelector('.approval button[data-d=allow]').click(); true").await;
    page.wait(
        "the first tab told",
        "document.querySelector('.approval.resolved .answered')?.textContent.includes('allowed')",
    )
    .await;
    let live: serde_json::Value = s.get("/api/sessions").await.1;
    let id = live[0]["id"].as_str().unwrap().to_owned();
    let approval =
        page.eval("document.querySelector('.approval').dataset.id").await.as_str().unwrap().to_owned();
    let (status, body) =
        s.post(&format!("/api/sessions/{id}/approvals/{approval}"), json!({"decision": "deny"})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"].as_str().unwrap().contains("already answered"), "{body}");
    page.wait("the end", "document.querySelector('#log').innerText.includes('It ran.')").await;
    assert!(s.ws.join("greeting.txt").exists());
    // After the turn, a reload draws the tool call by its summary, not its JSON.
    page.call("Page.reload", json!({})).await;
    page.wait("the tool card", "[...document.querySelectorAll('.card.tool summary')].some(e => e.textContent.includes('echo hi > greeting.txt'))").await;
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('.card.tool summary')].some(e => e.textContent.includes('{'))"
        )
        .await,
        json!(false)
    );
    assert!(
        page.errors.is_empty() && other.errors.is_empty(),
        "the page threw: {:?} {:?}",
        page.errors,
        other.errors
    );
}

/// A reply that broke off mid-stream (an overloaded error after part of its text) and started
/// again is shown once: the page replaces the broken bubble, live and after a reload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_restarted_mid_stream_is_shown_once() {
    let Some(bin) = chromium() else { return };
    let broken = Reply::new().text("Hello wor").sse_truncated()
        + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n";
    let s = start(vec![]).await;
    s.llm
        .script_anthropic_matching(
            "say hello",
            [Scripted::sse(broken), Scripted::sse(Reply::new().text("Hello world.").sse())],
        )
        .await;
    let browser = launch(&bin);
    let mut page = Page::open(browser.port).await;
    login(&mut page, &s).await;
    page.wait("a session", "!!document.querySelector('#meter').textContent").await;
    send(&mut page, "say hello").await;
    page.wait("the retry notice", "document.querySelector('#log').innerText.includes('the reply broke off')")
        .await;
    page.wait("the turn's end", "document.querySelector('#stop').disabled && document.querySelector('#log').innerText.includes('Hello world.')")
        .await;
    // Each answer's text, without its copy button's label.
    let answers = r"[...document.querySelectorAll('.msg.assistant')].map(e => e.innerText.replace(/\s*Copy\s*$/, '').trim()).join('|')";
    assert_eq!(page.eval(answers).await, json!("Hello world."), "one bubble, the new reply alone");
    page.screenshot("restarted-reply").await;
    page.call("Page.reload", json!({})).await;
    page.wait("the history", "document.querySelector('#log').innerText.includes('Hello world.')").await;
    assert_eq!(page.eval(answers).await, json!("Hello world."), "after a reload too");
    assert!(page.errors.is_empty(), "the page threw: {:?}", page.errors);
}
