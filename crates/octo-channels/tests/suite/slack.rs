//! Slack against a fake Socket Mode gateway and a fake Web API on loopback, driven by the
//! documented envelopes.

use crate::suite::common::{env, wait, Gateway, Rest};
use octo_channels::slack::Slack;
use octo_channels::{Bridge, Platform};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;
use wiremock::ResponseTemplate;

/// The Web API: the bot, Socket Mode URLs, messages (the first chat.postMessage whose text holds
/// `limited` answers 429 with `Retry-After: 1`; the first whose text holds `flaky` is posted
/// but answered 500, and the conversation's history then holds it), file uploads.
async fn web_api(
    gateway: &Gateway,
    limited: Option<&'static str>,
    flaky: Option<&'static str>,
) -> (wiremock::MockServer, Rest) {
    let url = gateway.url.clone();
    let posts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let posted = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let upload = Arc::new(std::sync::Mutex::new(String::new()));
    let (server, rest) = Rest::start({
        let upload = Arc::clone(&upload);
        move |c, n| {
            let method = c.path.rsplit('/').next().unwrap_or("");
            let ok = |extra: Value| {
                let mut v = json!({"ok": true});
                v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
                ResponseTemplate::new(200).set_body_json(v)
            };
            match method {
                "auth.test" => ok(json!({"user_id": "UBOT", "user": "octo", "team": "Acme"})),
                "apps.connections.open" => ok(json!({"url": url})),
                "conversations.history" | "conversations.replies" => {
                    ok(json!({"messages": posted.lock().unwrap().clone()}))
                }
                "chat.postMessage"
                    if flaky.is_some_and(|f| c.body["text"].as_str().unwrap_or("").contains(f)) =>
                {
                    let mut posted = posted.lock().unwrap();
                    if posted.is_empty() {
                        posted.push(json!({"type": "message", "user": "UBOT", "bot_id": "B1",
                            "text": c.body["text"], "ts": "77.000100"}));
                        return ResponseTemplate::new(500).set_body_string("upstream went away");
                    }
                    ok(json!({"channel": c.body["channel"], "ts": format!("{n}.000100")}))
                }
                "chat.postMessage" => {
                    let hit = limited.is_some_and(|l| c.body["text"].as_str().unwrap_or("").contains(l));
                    if hit && posts.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        return ResponseTemplate::new(429)
                            .insert_header("retry-after", "1")
                            .set_body_json(json!({"ok": false, "error": "ratelimited"}));
                    }
                    ok(json!({"channel": c.body["channel"], "ts": format!("{n}.000100")}))
                }
                "files.getUploadURLExternal" => ok(
                    json!({"upload_url": format!("{}/upload/F1", upload.lock().unwrap()), "file_id": "F1"}),
                ),
                "F1" => ResponseTemplate::new(200).set_body_string("OK - 3"),
                _ => ok(json!({})),
            }
        }
    })
    .await;
    *upload.lock().unwrap() = server.uri();
    (server, rest)
}

fn hello(_: usize) -> Vec<Message> {
    vec![Message::text(json!({"type": "hello", "num_connections": 1}).to_string())]
}

fn dm(envelope: &str, event_id: &str, user: &str, text: &str) -> Value {
    json!({"envelope_id": envelope, "type": "events_api", "accepts_response_payload": false, "retry_attempt": 0,
        "payload": {"type": "event_callback", "event_id": event_id, "event": {
            "type": "message", "channel_type": "im", "channel": "D1", "user": user, "text": text, "ts": "1.0"}}})
}

fn press(envelope: &str, user: &str, value: &str, ts: &str) -> Value {
    json!({"envelope_id": envelope, "type": "interactive", "payload": {
        "type": "block_actions", "user": {"id": user}, "channel": {"id": "D1"},
        "container": {"type": "message", "channel_id": "D1", "message_ts": "5.000100"},
        "actions": [{"type": "button", "action_id": "octo-0", "value": value, "action_ts": ts}]}})
}

async fn start(
    e: &crate::suite::common::Env,
    limited: Option<&'static str>,
) -> (Gateway, wiremock::MockServer, Rest) {
    start_with(e, limited, None).await
}

async fn start_with(
    e: &crate::suite::common::Env,
    limited: Option<&'static str>,
    flaky: Option<&'static str>,
) -> (Gateway, wiremock::MockServer, Rest) {
    let gateway = Gateway::start(hello).await;
    let (server, rest) = web_api(&gateway, limited, flaky).await;
    let app =
        Arc::new(Slack::new(octo_app::http_client().unwrap(), "xoxb-bot", "xapp-app", Some(&server.uri())));
    assert_eq!(app.check().await.unwrap(), "@octo on Slack (Acme)");
    let bridge = Bridge::new(app as Arc<dyn Platform>, Arc::clone(&e.launcher), e.config("slack", &["U42"]));
    tokio::spawn(bridge.run());
    wait("the socket", || gateway.connections() == 1).await;
    (gateway, server, rest)
}

fn acked(gateway: &Gateway, envelope: &str) -> bool {
    gateway.texts().iter().any(|f| f["envelope_id"] == envelope)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_a_button_survives_a_socket_drop() {
    let write = Scripted::sse(
        Reply::new()
            .text("Writing.")
            .tool_use("toolu_1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
            .sse(),
    );
    let done = Scripted::sse(Reply::new().text("Done <!channel>: hello.txt is written.").sse());
    let e = env(vec![write, done]).await;
    let (gateway, _server, rest) = start(&e, None).await;
    gateway.send_json(dm("env-1", "Ev1", "U42", "create hello.txt"));
    wait("the acknowledgement", || acked(&gateway, "env-1")).await;
    wait("an approval with buttons", || {
        rest.calls("chat.postMessage").iter().any(|c| c.body["blocks"].is_array())
    })
    .await;
    let approval = rest.calls("chat.postMessage").into_iter().find(|c| c.body["blocks"].is_array()).unwrap();
    assert!(approval.body["blocks"][0]["text"]["text"].as_str().unwrap().contains("hello.txt"));
    let allow = approval.body["blocks"][1]["elements"][0]["value"].as_str().unwrap().to_owned();

    // The socket drops mid-turn: a new one is opened, and Slack's retry of the event is dropped.
    gateway.drop_connection();
    wait("a new socket", || gateway.connections() == 2).await;
    assert_eq!(rest.calls("apps.connections.open").len(), 3, "check, first socket, second socket");
    let mut retry = dm("env-2", "Ev1", "U42", "create hello.txt");
    retry["retry_attempt"] = json!(1);
    gateway.send_json(retry);
    wait("the retry acknowledged", || acked(&gateway, "env-2")).await;

    gateway.send_json(press("env-3", "U77", &allow, "10.1"));
    wait("the refusal", || rest.saw("chat.postEphemeral", "Only the person")).await;
    assert_eq!(rest.calls("chat.postEphemeral")[0].body["user"], "U77");
    assert!(!e.ws.join("hello.txt").exists());
    gateway.send_json(press("env-4", "U42", &allow, "10.2"));
    wait("the file", || e.ws.join("hello.txt").exists()).await;
    wait("the final answer", || rest.saw("chat.", "hello.txt is written")).await;
    // What the model wrote cannot ping the channel.
    assert!(rest.saw("chat.", "Done &lt;!channel&gt;"));
    assert!(!rest.saw("chat.", "Done <!channel>"));
    assert_eq!(e.turns().await, 2, "the retried event started no second turn");

    // The written file, on request; nothing outside the workspace.
    gateway.send_json(dm("env-5", "Ev5", "U42", "/file hello.txt"));
    wait("the upload", || !rest.calls("files.completeUploadExternal").is_empty()).await;
    let slot = rest.calls("files.getUploadURLExternal").remove(0);
    assert!(String::from_utf8_lossy(&slot.raw).contains("filename=hello.txt"));
    assert!(rest.calls("/upload/F1").iter().any(|c| String::from_utf8_lossy(&c.raw).contains("hi\n")));
    assert_eq!(rest.calls("files.completeUploadExternal")[0].body["channel_id"], "D1");
    std::fs::write(e._tmp.root().join("secret.txt"), "no").unwrap();
    gateway.send_json(dm("env-6", "Ev6", "U42", "/file ../secret.txt"));
    wait("the refusal", || rest.saw("chat.postMessage", "outside the workspace")).await;
    assert_eq!(rest.calls("files.getUploadURLExternal").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_get_one_refusal_and_a_rate_limit_is_waited_out() {
    let e = env(vec![]).await;
    let (gateway, _server, rest) = start(&e, Some("No session yet")).await;
    gateway.send_json(dm("e1", "E1", "U13", "hello"));
    gateway.send_json(dm("e2", "E2", "U13", "hello?"));
    let started = Instant::now();
    gateway.send_json(dm("e3", "E3", "U42", "/status"));
    wait("the status after the limit", || {
        rest.calls("chat.postMessage")
            .iter()
            .filter(|c| c.body["text"].as_str().unwrap_or("").contains("No session yet"))
            .count()
            == 2
    })
    .await;
    assert!(started.elapsed() >= Duration::from_millis(900), "Retry-After was honoured");
    let refusals = rest
        .calls("chat.postMessage")
        .iter()
        .filter(|c| c.body["text"].as_str().unwrap_or("").contains("answers only"))
        .count();
    assert_eq!(refusals, 1);
    // An app mention in a channel is answered with the mention removed.
    gateway.send_json(
        json!({"envelope_id": "e4", "type": "events_api", "payload": {"event_id": "E4", "event": {
        "type": "app_mention", "channel": "C1", "user": "U42", "text": "<@UBOT> /help"}}}),
    );
    wait("the help", || rest.saw("chat.postMessage", "/file PATH")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_named() {
    let (server, _rest) = Rest::start(|_, _| {
        ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": "invalid_auth"}))
    })
    .await;
    let app = Slack::new(octo_app::http_client().unwrap(), "xoxb-bad", "xapp-bad", Some(&server.uri()));
    let err = app.check().await.unwrap_err();
    assert!(matches!(err, octo_channels::PlatformError::Unauthorized(_)), "{err}");
    assert!(err.to_string().contains("invalid_auth"), "{err}");
}

fn mention(envelope: &str, event_id: &str, ts: &str, thread: Option<&str>, text: &str) -> Value {
    let mut event = json!({"type": "app_mention", "channel": "C1", "user": "U42", "text": text, "ts": ts});
    if let Some(t) = thread {
        event["thread_ts"] = json!(t);
    }
    json!({"envelope_id": envelope, "type": "events_api", "payload": {"event_id": event_id, "event": event}})
}

/// A mention in a channel starts a thread, answered in it; each thread is a session of its own,
/// and a mention inside a thread continues that thread's session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_threads_are_sessions_of_their_own() {
    let e = env(vec![
        Scripted::sse(Reply::new().text("Hello from the first thread.").sse()),
        Scripted::sse(Reply::new().text("Still the first thread.").sse()),
    ])
    .await;
    let (gateway, _server, rest) = start(&e, None).await;
    gateway.send_json(mention("t1", "T1", "7.000100", None, "<@UBOT> hi"));
    wait("the answer", || rest.saw("chat.", "first thread")).await;
    let in_thread = |ts: &str, needle: &str| {
        rest.calls("chat.postMessage").iter().any(|c| {
            c.body["thread_ts"] == ts
                && c.body["channel"] == "C1"
                && c.body["text"].as_str().unwrap_or("").contains(needle)
        }) || rest.calls("chat.update").iter().any(|c| c.body["text"].as_str().unwrap_or("").contains(needle))
    };
    assert!(
        rest.calls("chat.postMessage").iter().all(|c| c.body["thread_ts"] == "7.000100"),
        "answered under the mention"
    );
    // Another thread has no session yet; the first thread's own reply continues its session.
    gateway.send_json(mention("t2", "T2", "8.000100", None, "<@UBOT> /status"));
    wait("the other thread's status", || in_thread("8.000100", "No session yet")).await;
    gateway.send_json(mention("t3", "T3", "9.000100", Some("7.000100"), "<@UBOT> and now?"));
    wait("the thread's second answer", || rest.saw("chat.", "Still the first thread")).await;
    assert_eq!(e.turns().await, 2, "one session, two turns, in the first thread");
}

/// Slack's `chat.postMessage` takes no idempotency key: a post answered 500 after it was made is
/// found in the conversation, not posted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_that_arrived_before_its_5xx_is_not_posted_again() {
    let e = env(vec![]).await;
    let (gateway, _server, rest) = start_with(&e, None, Some("No session yet")).await;
    gateway.send_json(dm("e1", "E1", "U42", "/status"));
    wait("the history read", || !rest.calls("conversations.history").is_empty()).await;
    gateway.send_json(dm("e2", "E2", "U42", "/help"));
    wait("the next answer", || rest.saw("chat.postMessage", "/file PATH")).await;
    let status_posts = rest
        .calls("chat.postMessage")
        .iter()
        .filter(|c| c.body["text"].as_str().unwrap_or("").contains("No session yet"))
        .count();
    assert_eq!(status_posts, 1, "the first post arrived: it is not sent again");
}
