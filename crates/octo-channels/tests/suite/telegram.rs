//! Telegram against a fake Bot API on loopback (wiremock, the documented payloads): a whole
//! conversation with an approval by button, the allow-list, a button from another user, a
//! rate limit, and splitting.

use octo_channels::telegram::Telegram;
use octo_channels::{Bridge, Platform};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The fake Bot API: updates the test queues, and every call the bot makes.
#[derive(Clone, Default)]
struct Fake {
    updates: Arc<Mutex<VecDeque<Value>>>,
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    next_update: Arc<Mutex<i64>>,
    limited_once: Arc<Mutex<bool>>,
    failing_polls: Arc<Mutex<usize>>,
    documents: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Fake {
    fn push_message(&self, chat: i64, user: i64, text: &str) {
        let mut n = self.next_update.lock().unwrap();
        *n += 1;
        self.updates.lock().unwrap().push_back(json!({"update_id": *n, "message": {
            "message_id": *n, "from": {"id": user, "is_bot": false, "first_name": "u"},
            "chat": {"id": chat, "type": "private"}, "date": 0, "text": text
        }}));
    }

    fn push_press(&self, chat: i64, user: i64, data: &str) {
        let mut n = self.next_update.lock().unwrap();
        *n += 1;
        self.updates.lock().unwrap().push_back(json!({"update_id": *n, "callback_query": {
            "id": format!("cb{}", *n), "from": {"id": user, "is_bot": false, "first_name": "u"},
            "message": {"message_id": 1, "chat": {"id": chat, "type": "private"}, "date": 0}, "data": data
        }}));
    }

    fn calls(&self, method: &str) -> Vec<Value> {
        self.calls.lock().unwrap().iter().filter(|(m, _)| m == method).map(|(_, b)| b.clone()).collect()
    }

    async fn wait(&self, what: &str, f: impl Fn(&Fake) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !f(self) {
            if Instant::now() > deadline {
                let calls: Vec<(String, Value)> =
                    self.calls.lock().unwrap().iter().filter(|(m, _)| m != "getUpdates").cloned().collect();
                panic!("never saw {what}; calls but polls: {calls:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Fake {
    /// The next `sendMessage` answers 429 with `retry_after: 1`.
    fn limit_next(&self) {
        *self.limited_once.lock().unwrap() = true;
    }
}

impl Respond for Fake {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let method = req.url.path().rsplit('/').next().unwrap_or("").to_owned();
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        self.calls.lock().unwrap().push((method.clone(), body.clone()));
        match method.as_str() {
            "sendDocument" => {
                self.documents.lock().unwrap().push(req.body.clone());
                ResponseTemplate::new(200).set_body_json(json!({"ok": true, "result": {"message_id": 1}}))
            }
            "getUpdates" if *self.failing_polls.lock().unwrap() > 0 => {
                *self.failing_polls.lock().unwrap() -= 1;
                ResponseTemplate::new(502).set_body_string("Bad Gateway")
            }
            "getUpdates" => {
                let offset = body["offset"].as_i64().unwrap_or(0);
                let mut q = self.updates.lock().unwrap();
                // Updates below the offset were seen: Telegram forgets them.
                q.retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
                let list: Vec<Value> = q.iter().cloned().collect();
                let delay = if list.is_empty() { Duration::from_millis(50) } else { Duration::ZERO };
                ResponseTemplate::new(200).set_body_json(json!({"ok": true, "result": list})).set_delay(delay)
            }
            "sendMessage" => {
                let mut limited = self.limited_once.lock().unwrap();
                if *limited {
                    *limited = false;
                    return ResponseTemplate::new(429).set_body_json(json!({
                        "ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1",
                        "parameters": {"retry_after": 1}
                    }));
                }
                let n = self.calls.lock().unwrap().len();
                ResponseTemplate::new(200).set_body_json(json!({"ok": true, "result": {"message_id": n, "chat": {"id": body["chat_id"]}, "date": 0}}))
            }
            _ => ResponseTemplate::new(200).set_body_json(json!({"ok": true, "result": true})),
        }
    }
}

struct Setup {
    _env: crate::suite::common::Env,
    ws: std::path::PathBuf,
    fake: Fake,
    _server: MockServer,
}

async fn setup(replies: Vec<Scripted>) -> Setup {
    setup_allowing(replies, &["42"]).await
}

/// The fake Bot API on a mock server.
async fn fake_api() -> (MockServer, Fake) {
    let server = MockServer::start().await;
    let fake = Fake::default();
    Mock::given(method("POST"))
        .and(path_regex("^/botTEST:TOKEN/.*"))
        .respond_with(fake.clone())
        .mount(&server)
        .await;
    (server, fake)
}

async fn setup_allowing(replies: Vec<Scripted>, allow: &[&str]) -> Setup {
    let env = crate::suite::common::env(replies).await;
    let (server, fake) = fake_api().await;
    let tg = Arc::new(Telegram::new(octo_app::http_client().unwrap(), "TEST:TOKEN", Some(&server.uri()), 0));
    let bridge =
        Bridge::new(tg as Arc<dyn Platform>, Arc::clone(&env.launcher), env.config("telegram", allow));
    tokio::spawn(bridge.run());
    Setup { ws: env.ws.clone(), _env: env, fake, _server: server }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_an_approval_by_button() {
    let write = Scripted::sse(
        Reply::new()
            .text("Writing.")
            .tool_use("toolu_1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
            .sse(),
    );
    let t = setup(vec![write, Scripted::sse(Reply::new().text("Done: hello.txt is written.").sse())]).await;
    t.fake.push_message(7, 42, "create hello.txt");
    // Auto mode is lowered to asking: the write needs the button.
    t.fake
        .wait("an approval with buttons", |f| {
            f.calls("sendMessage").iter().any(|b| b["reply_markup"].is_object())
        })
        .await;
    let msg = t.fake.calls("sendMessage").into_iter().find(|b| b["reply_markup"].is_object()).unwrap();
    assert!(msg["text"].as_str().unwrap().contains("hello.txt"), "{msg}");
    let allow = msg["reply_markup"]["inline_keyboard"][0][0]["callback_data"].as_str().unwrap().to_owned();
    // Another user's press is refused; the owner's is taken.
    t.fake.push_press(7, 99, &allow);
    t.fake
        .wait("the refusal of another user", |f| {
            f.calls("answerCallbackQuery")
                .iter()
                .any(|b| b["text"].as_str().unwrap_or("").contains("Only the person"))
        })
        .await;
    assert!(!t.ws.join("hello.txt").exists());
    t.fake.push_press(7, 42, &allow);
    t.fake.wait("the file", |_| t.ws.join("hello.txt").exists()).await;
    t.fake
        .wait("the final answer", |f| {
            f.calls("editMessageText")
                .iter()
                .chain(f.calls("sendMessage").iter())
                .any(|b| b["text"].as_str().unwrap_or("").contains("Done: hello.txt"))
        })
        .await;
    // The written file, on request.
    t.fake.push_message(7, 42, "/file hello.txt");
    t.fake.wait("the document", |f| !f.calls("sendDocument").is_empty()).await;
    assert!(String::from_utf8_lossy(&t.fake.documents.lock().unwrap()[0]).contains("hi\n"));
    // The same button again: nothing is waiting.
    t.fake.push_press(7, 42, &allow);
    t.fake
        .wait("an expired press", |f| {
            f.calls("answerCallbackQuery")
                .iter()
                .any(|b| b["text"].as_str().unwrap_or("").contains("no longer waiting"))
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_off_the_allow_list_get_one_refusal_and_nothing_else() {
    let t = setup(vec![]).await;
    t.fake.push_message(5, 13, "rm -rf everything");
    t.fake.push_message(5, 13, "please?");
    t.fake.push_message(5, 42, "/status");
    // The refusal and the owner's answer are sent independently: wait for both.
    let sent = |f: &Fake, what: &str| {
        f.calls("sendMessage").iter().any(|b| b["text"].as_str().unwrap_or("").contains(what))
    };
    t.fake
        .wait("the owner's status and a refusal", |f| sent(f, "No session yet") && sent(f, "answers only"))
        .await;
    let refusals = t
        .fake
        .calls("sendMessage")
        .iter()
        .filter(|b| b["text"].as_str().unwrap_or("").contains("answers only"))
        .count();
    assert_eq!(refusals, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_is_waited_out() {
    let t = setup(vec![]).await;
    t.fake.limit_next();
    let started = Instant::now();
    t.fake.push_message(5, 42, "/status");
    t.fake
        .wait("the message after the limit", |f| {
            f.calls("sendMessage")
                .iter()
                .filter(|b| b["text"].as_str().unwrap_or("").contains("No session yet"))
                .count()
                == 2
        })
        .await;
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_api_is_retried_and_nothing_is_lost() {
    let t = setup(vec![]).await;
    *t.fake.failing_polls.lock().unwrap() = 2;
    t.fake.push_message(5, 42, "/status");
    t.fake
        .wait("the status after two 502s", |f| {
            f.calls("sendMessage").iter().any(|b| b["text"].as_str().unwrap_or("").contains("No session yet"))
        })
        .await;
    assert_eq!(*t.fake.failing_polls.lock().unwrap(), 0);
    let answered = t
        .fake
        .calls("sendMessage")
        .iter()
        .filter(|b| b["text"].as_str().unwrap_or("").contains("No session"))
        .count();
    assert_eq!(answered, 1, "answered once, not lost and not repeated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_during_a_turn_is_queued_and_each_answer_shown_once() {
    let slow =
        Scripted::sse(Reply::new().text("First answer.").sse()).delay(std::time::Duration::from_millis(400));
    let t = setup(vec![slow, Scripted::sse(Reply::new().text("Second answer.").sse())]).await;
    t.fake.push_message(7, 42, "one");
    t.fake.push_message(7, 42, "two");
    let text_of = |b: &Value| b["text"].as_str().unwrap_or("").to_owned();
    let shown = |f: &Fake, needle: &str| {
        f.calls("sendMessage")
            .iter()
            .chain(f.calls("editMessageText").iter())
            .filter(|b| text_of(b) == needle)
            .count()
    };
    t.fake.wait("both answers", |f| shown(f, "First answer.") > 0 && shown(f, "Second answer.") > 0).await;
    assert!(t.fake.calls("sendMessage").iter().any(|b| text_of(b).starts_with("Queued")));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(shown(&t.fake, "First answer."), 1);
    assert_eq!(shown(&t.fake, "Second answer."), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_text_neither_breaks_the_bridge_nor_reaches_the_model() {
    let t = setup(vec![]).await;
    // A wide space before a group-style command, then an empty message.
    t.fake.push_message(5, 42, "\u{3000}/status@octo_bot");
    t.fake.push_message(5, 42, " \u{3000} ");
    t.fake.push_message(5, 42, "/help");
    t.fake
        .wait("all three answered", |f| {
            let texts: Vec<String> =
                f.calls("sendMessage").iter().map(|b| b["text"].as_str().unwrap_or("").to_owned()).collect();
            texts.iter().any(|t| t.contains("No session yet"))
                && texts.iter().any(|t| t.starts_with("Send a task"))
                && texts.iter().any(|t| t.starts_with("octo reads the text"))
        })
        .await;
    assert_eq!(t._env.turns().await, 0);
}

fn write(path: &str) -> Scripted {
    Scripted::sse(
        Reply::new().tool_use("toolu_1", "write_file", json!({"path": path, "content": "hi\n"})).sse(),
    )
}

/// The data of the Allow button of the approval that names `needle`.
fn allow_button(f: &Fake, needle: &str) -> Option<String> {
    f.calls("sendMessage")
        .into_iter()
        .find(|b| b["reply_markup"].is_object() && b["text"].as_str().unwrap_or("").contains(needle))
        .map(|b| b["reply_markup"]["inline_keyboard"][0][0]["callback_data"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_of_an_earlier_session_answers_nothing() {
    let done = Scripted::sse(Reply::new().text("Done.").sse());
    let t = setup(vec![write("one.txt"), write("two.txt"), done]).await;
    t.fake.push_message(7, 42, "write one");
    t.fake.wait("the first approval", |f| allow_button(f, "one.txt").is_some()).await;
    let old = allow_button(&t.fake, "one.txt").unwrap();
    t.fake.push_message(7, 42, "/new");
    t.fake.push_message(7, 42, "write two");
    t.fake.wait("the second approval", |f| allow_button(f, "two.txt").is_some()).await;
    let new = allow_button(&t.fake, "two.txt").unwrap();
    assert_ne!(old, new, "each session marks its own buttons");
    // The old button, with the same approval number, approves nothing in the new session.
    t.fake.push_press(7, 42, &old);
    t.fake
        .wait("the old press refused", |f| {
            f.calls("answerCallbackQuery")
                .iter()
                .any(|b| b["text"].as_str().unwrap_or("").contains("no longer"))
        })
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!t.ws.join("one.txt").exists() && !t.ws.join("two.txt").exists());
    t.fake.push_press(7, 42, &new);
    t.fake.wait("the second file", |_| t.ws.join("two.txt").exists()).await;
    assert!(!t.ws.join("one.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_group_only_the_owner_steers_the_session() {
    let t = setup_allowing(
        vec![write("one.txt"), Scripted::sse(Reply::new().text("Done.").sse())],
        &["42", "43"],
    )
    .await;
    t.fake.push_message(-100, 42, "write one");
    t.fake.wait("the approval", |f| allow_button(f, "one.txt").is_some()).await;
    let allow = allow_button(&t.fake, "one.txt").unwrap();
    // Another allowed member may not loosen the mode, stop, or start over.
    for cmd in ["/mode accept-edits", "/new", "/file one.txt"] {
        t.fake.push_message(-100, 43, cmd);
    }
    t.fake
        .wait("three refusals", |f| {
            f.calls("sendMessage")
                .iter()
                .filter(|b| b["text"].as_str().unwrap_or("").starts_with("Only the person"))
                .count()
                == 3
        })
        .await;
    t.fake.push_press(-100, 43, &allow);
    t.fake
        .wait("the press refused", |f| {
            f.calls("answerCallbackQuery")
                .iter()
                .any(|b| b["text"].as_str().unwrap_or("").contains("Only the person"))
        })
        .await;
    assert!(!t.ws.join("one.txt").exists());
    t.fake.push_press(-100, 42, &allow);
    t.fake.wait("the file", |_| t.ws.join("one.txt").exists()).await;
}

/// Every text the bot sent or edited, in order.
fn texts(f: &Fake) -> Vec<String> {
    f.calls
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == "sendMessage" || m == "editMessageText")
        .filter_map(|(_, b)| b["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_restarted_mid_stream_appears_once_in_the_chat() {
    // The first reply breaks off after part of its text (an overloaded error mid-stream); the
    // retry starts the answer over. The chat shows the answer once, not the broken part too.
    let broken = Reply::new().text("Hello wor").sse_truncated()
        + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n";
    let t = setup(vec![Scripted::sse(broken), Scripted::sse(Reply::new().text("Hello world.").sse())]).await;
    t.fake.push_message(7, 42, "say hello");
    t.fake.wait("the answer", |f| texts(f).iter().any(|t| t.contains("Hello world."))).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let all = texts(&t.fake);
    assert!(all.iter().all(|t| !t.contains("Hello worHello")), "the broken part was kept: {all:?}");
    let last = all.iter().rev().find(|t| t.contains("Hello")).unwrap();
    assert_eq!(last, "Hello world.", "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_mode_plan_run_through_the_shared_commands() {
    let t = setup(vec![Scripted::sse(Reply::new().text("Hi.").sse())]).await;
    t.fake.push_message(7, 42, "hello");
    t.fake.wait("the answer", |f| texts(f).iter().any(|t| t == "Hi.")).await;
    t.fake.push_message(7, 42, "/mode plan");
    t.fake.wait("the new mode", |f| texts(f).iter().any(|t| t == "permission mode: plan")).await;
    t.fake.push_message(7, 42, "/status");
    t.fake
        .wait("the status", |f| {
            texts(f).iter().any(|t| {
                t.contains("model: mock:claude-sonnet-4-5")
                    && t.contains("permission mode: plan")
                    && t.contains("usage: 1 turn ·")
            })
        })
        .await;
    t.fake.push_message(7, 42, "/mode sideways");
    t.fake.wait("the usage", |f| texts(f).iter().any(|t| t.contains("Usage: /mode"))).await;
    t.fake.push_message(7, 42, "/dream");
    t.fake
        .wait("what a chat does not offer", |f| {
            texts(f).iter().any(|t| t.contains("/dream is not available in a chat: "))
        })
        .await;
    // Help lists what the table offers a chat, and nothing else; an unknown word gets the
    // nearest name instead of going to the model.
    use octo_app::commands::{Capabilities, FrontEnd, COMMANDS};
    let chat = FrontEnd::new("a chat", Capabilities::START_OVER.and(Capabilities::STOP_BY_COMMAND));
    t.fake.push_message(7, 42, "/help");
    t.fake.wait("the help", |f| texts(f).iter().any(|t| t.contains("/file PATH"))).await;
    let help = texts(&t.fake).into_iter().find(|t| t.contains("/file PATH")).unwrap();
    for spec in COMMANDS {
        let line = format!("{} — {}", spec.usage, spec.about);
        assert_eq!(help.contains(&line), chat.offers(spec), "{}: {help}", spec.name);
    }
    t.fake.push_message(7, 42, "/stauts");
    t.fake.wait("the nearest name", |f| texts(f).iter().any(|t| t.contains("did you mean /status?"))).await;
}

/// The bridge dies after a poll handed a batch on and before the next poll acknowledged it: the
/// next start must not get the batch again (it would answer it as a new turn). Without the
/// offset file it would.
#[tokio::test]
async fn a_bridge_killed_mid_batch_does_not_replay_it_on_restart() {
    let (server, fake) = fake_api().await;
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("telegram-TEST.offset");
    let bot = || Telegram::new(octo_app::http_client().unwrap(), "TEST:TOKEN", Some(&server.uri()), 0);
    fake.push_message(42, 42, "do the thing");
    let first = bot().with_offset_file(kept.clone());
    assert_eq!(first.poll().await.unwrap().len(), 1);
    drop(first); // killed before handling the batch or polling again

    let forgetful = bot();
    assert_eq!(
        forgetful.poll().await.unwrap().len(),
        1,
        "Telegram still holds it: a memory-only offset replays it"
    );
    let restarted = bot().with_offset_file(kept.clone());
    assert!(restarted.poll().await.unwrap().is_empty(), "the kept offset acknowledges it");
    assert!(std::fs::read_to_string(&kept).unwrap().trim() == "2", "the next update to ask for");
}
