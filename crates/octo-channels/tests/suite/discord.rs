//! Discord against a fake gateway (hello, identify, resume) and a fake REST API on loopback,
//! driven by the documented payloads.

use crate::suite::common::{env, long_answer, wait, well_split, Gateway, Rest};
use octo_channels::discord::Discord;
use octo_channels::{Bridge, Platform};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wiremock::ResponseTemplate;

fn hello(_: usize) -> Vec<tokio_tungstenite::tungstenite::Message> {
    vec![tokio_tungstenite::tungstenite::Message::text(
        json!({"op": 10, "d": {"heartbeat_interval": 45000}}).to_string(),
    )]
}

/// A fake REST API: the gateway's address, the bot, messages (the first `limited` posts answer
/// 429 with a retry-after of 0.3 s; with `slow_buttons`, a message with buttons is answered two
/// seconds after it was received, which the test sees at once).
async fn rest(gateway: &Gateway, limited: usize, slow_buttons: bool) -> (wiremock::MockServer, Rest) {
    let url = gateway.url.clone();
    Rest::start(move |c, n| {
        let p = c.path.as_str();
        if p.ends_with("/gateway/bot") {
            ResponseTemplate::new(200).set_body_json(json!({"url": url, "shards": 1}))
        } else if p.ends_with("/users/@me") {
            ResponseTemplate::new(200).set_body_json(json!({"id": "999", "username": "octo", "bot": true}))
        } else if p.ends_with("/messages") && c.method == "POST" && n <= 2 + limited && n > 2 {
            ResponseTemplate::new(429).insert_header("retry-after", "0.3").set_body_json(
                json!({"message": "You are being rate limited.", "retry_after": 0.3, "global": false}),
            )
        } else if p.contains("/messages") {
            let ok =
                ResponseTemplate::new(200).set_body_json(json!({"id": format!("m{n}"), "channel_id": "c"}));
            if slow_buttons && c.body["components"].is_array() {
                ok.set_delay(Duration::from_secs(2))
            } else {
                ok
            }
        } else {
            ResponseTemplate::new(204)
        }
    })
    .await
}

fn dispatch(s: u64, t: &str, d: Value) -> Value {
    json!({"op": 0, "s": s, "t": t, "d": d})
}

fn message(id: &str, channel: &str, user: &str, content: &str, guild: bool) -> Value {
    let mut d =
        json!({"id": id, "channel_id": channel, "author": {"id": user, "username": "u"}, "content": content});
    if guild {
        d["guild_id"] = json!("g1");
    }
    d
}

fn press(id: &str, channel: &str, user: &str, custom_id: &str) -> Value {
    json!({"id": id, "token": format!("tok-{id}"), "type": 3, "channel_id": channel,
        "member": {"user": {"id": user}}, "data": {"custom_id": custom_id, "component_type": 2},
        "message": {"id": "m1"}})
}

async fn start(e: &crate::suite::common::Env, limited: usize) -> (Gateway, wiremock::MockServer, Rest) {
    start_with(e, limited, false).await
}

async fn start_with(
    e: &crate::suite::common::Env,
    limited: usize,
    slow_buttons: bool,
) -> (Gateway, wiremock::MockServer, Rest) {
    let gateway = Gateway::start(hello).await;
    let (server, rest) = rest(&gateway, limited, slow_buttons).await;
    let bot = Arc::new(Discord::new(octo_app::http_client().unwrap(), "BOT-TOKEN", Some(&server.uri())));
    assert_eq!(bot.check().await.unwrap(), "@octo on Discord");
    let bridge = Bridge::new(bot as Arc<dyn Platform>, Arc::clone(&e.launcher), e.config("discord", &["42"]));
    tokio::spawn(bridge.run());
    wait("an identify", || gateway.texts().iter().any(|f| f["op"] == 2)).await;
    let identify = gateway.texts().into_iter().find(|f| f["op"] == 2).unwrap();
    assert_eq!(identify["d"]["token"], "BOT-TOKEN");
    assert_eq!(identify["d"]["intents"].as_u64().unwrap() & (1 << 15), 1 << 15, "message content intent");
    gateway.send_json(dispatch(
        1,
        "READY",
        json!({"session_id": "sess-1", "resume_gateway_url": gateway.url, "user": {"id": "999"}}),
    ));
    (gateway, server, rest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_a_button_survives_a_gateway_drop() {
    let write = Scripted::sse(
        Reply::new()
            .text("Writing.")
            .tool_use("toolu_1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
            .sse(),
    );
    let e = env(vec![write, Scripted::sse(Reply::new().text("Done: hello.txt is written.").sse())]).await;
    let (gateway, _server, rest) = start(&e, 0).await;
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("100", "dm", "42", "create hello.txt", false)));
    wait("an approval with buttons", || {
        rest.calls("/channels/dm/messages").iter().any(|c| c.body["components"].is_array())
    })
    .await;
    let approval =
        rest.calls("/channels/dm/messages").into_iter().find(|c| c.body["components"].is_array()).unwrap();
    assert!(approval.body["content"].as_str().unwrap().contains("hello.txt"));
    assert_eq!(approval.body["allowed_mentions"]["parse"], json!([]));
    let allow = approval.body["components"][0]["components"][0]["custom_id"].as_str().unwrap().to_owned();

    // The gateway drops mid-turn: the bridge resumes the session from the last sequence number.
    gateway.drop_connection();
    wait("a resume", || gateway.texts().iter().any(|f| f["op"] == 6)).await;
    let resume = gateway.texts().into_iter().find(|f| f["op"] == 6).unwrap();
    assert_eq!(resume["d"]["session_id"], "sess-1");
    assert_eq!(resume["d"]["seq"], 2);
    assert_eq!(gateway.connections(), 2);
    // A replayed message is not taken twice.
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("100", "dm", "42", "create hello.txt", false)));
    gateway.send_json(dispatch(3, "RESUMED", json!({})));

    // Another user's press is refused (ephemerally); the owner's is taken.
    gateway.send_json(dispatch(4, "INTERACTION_CREATE", press("i1", "dm", "77", &allow)));
    wait("the refusal", || rest.saw("/interactions/i1/tok-i1/callback", "Only the person")).await;
    let refusal = rest.calls("/interactions/i1/tok-i1/callback").remove(0);
    assert_eq!(refusal.body["data"]["flags"], 64);
    assert!(!e.ws.join("hello.txt").exists());
    gateway.send_json(dispatch(5, "INTERACTION_CREATE", press("i2", "dm", "42", &allow)));
    wait("the file", || e.ws.join("hello.txt").exists()).await;
    wait("the final answer", || rest.saw("/messages", "Done: hello.txt")).await;
    assert!(rest.saw("/interactions/i2/tok-i2/callback", "Allowed"));
    assert_eq!(e.turns().await, 2, "the replayed message started no second turn");
    // The written file, on request, as an attachment.
    gateway.send_json(dispatch(6, "MESSAGE_CREATE", message("101", "dm", "42", "/file hello.txt", false)));
    wait("the attachment", || {
        rest.calls("/channels/dm/messages")
            .iter()
            .any(|c| String::from_utf8_lossy(&c.raw).contains("payload_json"))
    })
    .await;
    let upload = rest.calls("/channels/dm/messages").into_iter().find(|c| c.body.is_null()).unwrap();
    let raw = String::from_utf8_lossy(&upload.raw);
    assert!(raw.contains("filename=\"hello.txt\"") && raw.contains("hi\n"), "{raw}");
    let approvals =
        rest.calls("/channels/dm/messages").iter().filter(|c| c.body["components"].is_array()).count();
    assert_eq!(approvals, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_allowed_users_and_mentions_in_servers_are_answered() {
    let e = env(vec![]).await;
    let (gateway, _server, rest) = start(&e, 0).await;
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("1", "dm13", "13", "do things", false)));
    gateway.send_json(dispatch(3, "MESSAGE_CREATE", message("2", "dm13", "13", "please", false)));
    // In a server channel: nothing without a mention, the command with one.
    gateway.send_json(dispatch(4, "MESSAGE_CREATE", message("3", "chan", "42", "/status", true)));
    gateway.send_json(dispatch(5, "MESSAGE_CREATE", message("4", "chan", "42", "<@999> /status", true)));
    // The bot's own messages are never taken.
    let mut own = message("5", "chan", "999", "<@999> /status", true);
    own["author"]["bot"] = json!(true);
    gateway.send_json(dispatch(6, "MESSAGE_CREATE", own));
    wait("the status", || rest.saw("/channels/chan/messages", "No session yet")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(rest.calls("/channels/dm13/messages").len(), 1, "one refusal");
    assert!(rest.saw("/channels/dm13/messages", "answers only"));
    assert_eq!(rest.calls("/channels/chan/messages").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_is_waited_out_and_a_long_answer_is_split() {
    let answer = long_answer();
    let e = env(vec![Scripted::sse(Reply::new().text(&answer).sse())]).await;
    let (gateway, _server, rest) = start(&e, 1).await;
    let started = Instant::now();
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("1", "dm", "42", "write a lot", false)));
    let last = format!("Paragraph {}:", answer.matches("Paragraph ").count() - 1);
    wait("the whole answer", || final_texts(&rest).concat().contains(&last)).await;
    assert!(started.elapsed() >= Duration::from_millis(300), "the retry-after was honoured");
    let parts = final_texts(&rest);
    well_split(&parts, 2000);
    assert!(parts.len() >= 25, "{} parts", parts.len());
    // The send refused with 429 was tried again with the same nonce (Discord posts it once);
    // every message has its own.
    let posts: Vec<Value> = rest
        .calls("")
        .into_iter()
        .filter(|c| c.method == "POST" && c.path.ends_with("/messages"))
        .map(|c| c.body)
        .collect();
    assert!(posts
        .iter()
        .all(|b| b["enforce_nonce"] == true && b["nonce"].as_str().is_some_and(|n| n.len() <= 25)));
    assert_eq!(posts[0]["nonce"], posts[1]["nonce"], "the retry of the limited send");
    let distinct: std::collections::HashSet<&str> =
        posts.iter().filter_map(|b| b["nonce"].as_str()).collect();
    assert_eq!(distinct.len(), posts.len() - 1, "one nonce per message");
}

/// The texts the bot left: each message's last version.
fn final_texts(rest: &Rest) -> Vec<String> {
    let mut by_id: Vec<(String, String)> = Vec::new();
    let mut n = 0;
    for c in rest.calls("") {
        n += 1;
        let Some(text) = c.body["content"].as_str() else { continue };
        if c.method == "POST" && c.path.ends_with("/messages") {
            by_id.push((format!("m{n}"), text.to_owned()));
        } else if c.method == "PATCH" {
            let id = c.path.rsplit('/').next().unwrap().to_owned();
            if let Some(e) = by_id.iter_mut().find(|(i, _)| *i == id) {
                e.1 = text.to_owned();
            }
        }
    }
    by_id.into_iter().map(|(_, t)| t).filter(|t| t != "…").collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_kb_message_reaches_the_model_whole() {
    let e = env(vec![Scripted::sse(Reply::new().text("Read it.").sse())]).await;
    let (gateway, _server, rest) = start(&e, 0).await;
    let big = "log line with some text in it\n".repeat(100 * 1024 / 30);
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("1", "dm", "42", &big, false)));
    wait("the answer", || rest.saw("/messages", "Read it.")).await;
    let sent = e.llm.requests().await[0].json().to_string();
    assert!(sent.contains(&big.trim().replace('\n', "\\n")), "the message reached the model whole");
    // Beyond the cap: a clear refusal, no turn.
    let flood = "x".repeat(octo_channels::MAX_PROMPT + 1);
    gateway.send_json(dispatch(3, "MESSAGE_CREATE", message("2", "dm", "42", &flood, false)));
    wait("the refusal", || rest.saw("/messages", "at most 256 KB")).await;
    assert_eq!(e.turns().await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_named() {
    let (server, _rest) = Rest::start(|_, _| {
        ResponseTemplate::new(401).set_body_json(json!({"message": "401: Unauthorized", "code": 0}))
    })
    .await;
    let bot = Discord::new(octo_app::http_client().unwrap(), "BAD", Some(&server.uri()));
    let err = bot.check().await.unwrap_err();
    assert!(matches!(err, octo_channels::PlatformError::Unauthorized(_)), "{err}");
    assert!(err.to_string().contains("401"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_too_long_for_a_message_is_shown_whole_and_still_answerable() {
    let long_path = format!("{}x.txt", "deep/".repeat(450));
    let write = Scripted::sse(
        Reply::new().tool_use("toolu_1", "write_file", json!({"path": long_path, "content": "hi\n"})).sse(),
    );
    let e = env(vec![write, Scripted::sse(Reply::new().text("Not written.").sse())]).await;
    let (gateway, _server, rest) = start(&e, 0).await;
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("1", "dm", "42", "write it", false)));
    wait("the buttons", || {
        rest.calls("/channels/dm/messages").iter().any(|c| c.body["components"].is_array())
    })
    .await;
    let posts = rest.calls("/channels/dm/messages");
    assert!(posts.iter().all(|c| c.body["content"].as_str().unwrap_or("").chars().count() <= 2000));
    let shown: String = posts.iter().filter_map(|c| c.body["content"].as_str()).collect();
    assert!(shown.contains("deep/deep/") && shown.contains("x.txt"), "the whole request was shown");
    let buttons = posts.iter().find(|c| c.body["components"].is_array()).unwrap();
    let deny = buttons.body["components"][0]["components"][1]["custom_id"].as_str().unwrap().to_owned();
    gateway.send_json(dispatch(3, "INTERACTION_CREATE", press("i1", "dm", "42", &deny)));
    wait("the answer after the denial", || rest.saw("/messages", "Not written.")).await;
    assert!(rest.saw("/interactions/i1/tok-i1/callback", "Denied"));
}

/// The owner presses before Discord has answered the send of the buttons' message (the test
/// sees the message the moment it arrives; its answer comes two seconds later): the press still
/// answers the approval, and the message is marked once the send returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_press_before_the_buttons_message_is_confirmed_still_answers_it() {
    let write = Scripted::sse(
        Reply::new().tool_use("toolu_1", "write_file", json!({"path": "a.txt", "content": "hi\n"})).sse(),
    );
    let e = env(vec![write, Scripted::sse(Reply::new().text("Not written.").sse())]).await;
    let (gateway, _server, rest) = start_with(&e, 0, true).await;
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("1", "dm", "42", "write it", false)));
    wait("the buttons", || {
        rest.calls("/channels/dm/messages").iter().any(|c| c.body["components"].is_array())
    })
    .await;
    let posts = rest.calls("/channels/dm/messages");
    let buttons = posts.iter().find(|c| c.body["components"].is_array()).unwrap();
    let deny = buttons.body["components"][0]["components"][1]["custom_id"].as_str().unwrap().to_owned();
    gateway.send_json(dispatch(3, "INTERACTION_CREATE", press("i1", "dm", "42", &deny)));
    wait("the answer after the denial", || rest.saw("/messages", "Not written.")).await;
    assert!(rest.saw("/interactions/i1/tok-i1/callback", "Denied"));
    wait("the approval marked", || rest.saw("/channels/dm/messages/", "→ Denied")).await;
}

/// A thread is a channel of its own to Discord (messages in it carry the thread's id as
/// `channel_id`), so it is a session of its own, answered in the thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_is_a_session_of_its_own_answered_in_the_thread() {
    let e = env(vec![Scripted::sse(Reply::new().text("Answered in the channel.").sse())]).await;
    let (gateway, _server, rest) = start(&e, 0).await;
    gateway.send_json(dispatch(2, "MESSAGE_CREATE", message("1", "chan", "42", "<@999> hello", true)));
    wait("the channel's answer", || rest.saw("/channels/chan/messages", "Answered in the channel")).await;
    gateway.send_json(dispatch(3, "MESSAGE_CREATE", message("2", "thread7", "42", "<@999> /status", true)));
    wait("the thread's status", || rest.saw("/channels/thread7/messages", "No session yet")).await;
    assert!(!rest.saw("/channels/chan/messages", "No session yet"), "the channel's session is its own");
    assert_eq!(e.turns().await, 1);
}
