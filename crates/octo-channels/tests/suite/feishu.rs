//! Feishu/Lark against a fake long connection (protobuf frames, encoded here independently of
//! the crate) and a fake Open API on loopback, driven by the documented event payloads.

use crate::suite::common::{env, wait, Gateway, Rest};
use base64::Engine as _;
use octo_channels::feishu::Feishu;
use octo_channels::{Bridge, Platform};
use octo_testkit::anthropic::Reply;
use octo_testkit::Scripted;
use prost::Message as _;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;
use wiremock::ResponseTemplate;

#[derive(Clone, PartialEq, prost::Message)]
struct Header {
    #[prost(string, required, tag = "1")]
    key: String,
    #[prost(string, required, tag = "2")]
    value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Frame {
    #[prost(uint64, required, tag = "1")]
    seq_id: u64,
    #[prost(uint64, required, tag = "2")]
    log_id: u64,
    #[prost(int32, required, tag = "3")]
    service: i32,
    #[prost(int32, required, tag = "4")]
    method: i32,
    #[prost(message, repeated, tag = "5")]
    headers: Vec<Header>,
    #[prost(string, optional, tag = "6")]
    payload_encoding: Option<String>,
    #[prost(string, optional, tag = "7")]
    payload_type: Option<String>,
    #[prost(bytes = "vec", optional, tag = "8")]
    payload: Option<Vec<u8>>,
    #[prost(string, optional, tag = "9")]
    log_id_new: Option<String>,
}

impl Frame {
    fn header(&self, key: &str) -> &str {
        self.headers.iter().find(|h| h.key == key).map(|h| h.value.as_str()).unwrap_or("")
    }
}

fn h(key: &str, value: &str) -> Header {
    Header { key: key.into(), value: value.into() }
}

/// A data frame carrying (part `seq` of `sum` of) an event.
fn data(seq_id: u64, kind: &str, message_id: &str, part: (usize, usize), payload: &[u8]) -> Message {
    let f = Frame {
        seq_id,
        log_id: seq_id,
        service: 7,
        method: 1,
        headers: vec![
            h("type", kind),
            h("message_id", message_id),
            h("sum", &part.1.to_string()),
            h("seq", &part.0.to_string()),
            h("trace_id", "t"),
        ],
        payload: Some(payload.to_vec()),
        ..Frame::default()
    };
    Message::binary(f.encode_to_vec())
}

fn event(seq_id: u64, payload: &Value) -> Message {
    data(seq_id, "event", &format!("m{seq_id}"), (0, 1), payload.to_string().as_bytes())
}

fn text_event(event_id: &str, user: &str, chat: &str, p2p: bool, text: &str, mentions: Value) -> Value {
    json!({"schema": "2.0", "header": {"event_id": event_id, "event_type": "im.message.receive_v1", "app_id": "cli_1"},
        "event": {"sender": {"sender_id": {"open_id": user}, "sender_type": "user"},
            "message": {"message_id": format!("om_{event_id}"), "chat_id": chat,
                "chat_type": if p2p { "p2p" } else { "group" }, "message_type": "text",
                "content": json!({"text": text}).to_string(), "mentions": mentions}}})
}

fn card_press(event_id: &str, user: &str, value: &str) -> Value {
    json!({"schema": "2.0", "header": {"event_id": event_id, "event_type": "card.action.trigger"},
        "event": {"operator": {"open_id": user}, "action": {"tag": "button", "value": {"octo": value}},
            "context": {"open_chat_id": "oc_1", "open_message_id": "om_x"}}})
}

/// The frames the bot sent, decoded.
fn sent(gateway: &Gateway) -> Vec<Frame> {
    gateway.binaries().iter().filter_map(|b| Frame::decode(b.as_slice()).ok()).collect()
}

/// The acknowledgement of the data frame `seq_id`: its payload.
fn ack(gateway: &Gateway, seq_id: u64) -> Option<Value> {
    sent(gateway)
        .into_iter()
        .find(|f| f.method == 1 && f.seq_id == seq_id)
        .map(|f| serde_json::from_slice(f.payload.as_deref().unwrap_or(b"")).unwrap())
}

/// The toast a card acknowledgement carries.
fn toast(ack: &Value) -> String {
    let data = base64::engine::general_purpose::STANDARD
        .decode(ack["data"].as_str().unwrap_or(""))
        .unwrap_or_default();
    let v: Value = serde_json::from_slice(&data).unwrap_or(Value::Null);
    v["toast"]["content"].as_str().unwrap_or("").to_owned()
}

/// The Open API; the first message send whose content holds `limited` answers Feishu's
/// frequency limit.
async fn open_api(
    gateway: &Gateway,
    limited: Option<&'static str>,
    ping: u64,
) -> (wiremock::MockServer, Rest) {
    let url = format!("{}/ws?device_id=d1&service_id=7", gateway.url);
    let sends = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Rest::start(move |c, n| {
        let p = c.path.as_str();
        let ok = |data: Value| {
            ResponseTemplate::new(200).set_body_json(json!({"code": 0, "msg": "success", "data": data}))
        };
        if p.ends_with("/tenant_access_token/internal") {
            assert_eq!(c.body["app_id"], "cli_1");
            ResponseTemplate::new(200)
                .set_body_json(json!({"code": 0, "msg": "ok", "tenant_access_token": "t-1", "expire": 7200}))
        } else if p.ends_with("/bot/v3/info") {
            ResponseTemplate::new(200)
                .set_body_json(json!({"code": 0, "bot": {"app_name": "octo", "open_id": "ou_bot"}}))
        } else if p.ends_with("/callback/ws/endpoint") {
            ResponseTemplate::new(200).set_body_json(
                json!({"code": 0, "data": {"URL": url, "ClientConfig": {"PingInterval": ping}}}),
            )
        } else if p.ends_with("/im/v1/messages") {
            let hit = limited.is_some_and(|l| c.body["content"].as_str().unwrap_or("").contains(l));
            if hit && sends.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return ResponseTemplate::new(400)
                    .insert_header("x-ogw-ratelimit-reset", "1")
                    .set_body_json(json!({"code": 99991400, "msg": "request trigger frequency limit"}));
            }
            ok(json!({"message_id": format!("om_{n}")}))
        } else if p.ends_with("/im/v1/files") {
            ok(json!({"file_key": "file_1"}))
        } else {
            ok(json!({}))
        }
    })
    .await
}

async fn start(
    e: &crate::suite::common::Env,
    limited: Option<&'static str>,
) -> (Gateway, wiremock::MockServer, Rest) {
    let gateway = Gateway::start(|_| Vec::new()).await;
    let (server, rest) = open_api(&gateway, limited, 120).await;
    let bot =
        Arc::new(Feishu::new(octo_app::http_client().unwrap(), "cli_1", "secret", true, Some(&server.uri())));
    assert_eq!(bot.check().await.unwrap(), "octo on Lark");
    let bridge = Bridge::new(bot as Arc<dyn Platform>, Arc::clone(&e.launcher), e.config("lark", &["ou_42"]));
    tokio::spawn(bridge.run());
    wait("the long connection", || gateway.connections() == 1).await;
    (gateway, server, rest)
}

/// The text of every card sent or updated.
fn card_texts(rest: &Rest) -> Vec<String> {
    rest.calls("")
        .iter()
        .filter(|c| c.path.contains("/im/v1/messages"))
        .filter_map(|c| serde_json::from_str::<Value>(c.body["content"].as_str()?).ok())
        .map(|card| card["elements"][0]["text"]["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_a_card_button_survives_a_dropped_connection() {
    let write = Scripted::sse(
        Reply::new()
            .text("Writing.")
            .tool_use("toolu_1", "write_file", json!({"path": "hello.txt", "content": "hi\n"}))
            .sse(),
    );
    let done =
        Scripted::sse(Reply::new().text("Done <at user_id=\"all\"></at>: hello.txt is written.").sse());
    let e = env(vec![write, done]).await;
    let (gateway, _server, rest) = start(&e, None).await;
    wait("a ping on service 7", || {
        sent(&gateway).iter().any(|f| f.method == 0 && f.header("type") == "ping" && f.service == 7)
    })
    .await;

    // An event in two parts is joined, then acknowledged.
    let payload =
        text_event("ev1", "ou_42", "oc_1", true, "create hello.txt", json!([])).to_string().into_bytes();
    let (a, b) = payload.split_at(payload.len() / 2);
    gateway.send(data(1, "event", "big", (0, 2), a));
    gateway.send(data(2, "event", "big", (1, 2), b));
    wait("the acknowledgement", || ack(&gateway, 2).is_some()).await;
    assert_eq!(ack(&gateway, 2).unwrap()["code"], 200);
    wait("an approval card", || rest.saw("/im/v1/messages", "\\\"tag\\\":\\\"action\\\"")).await;
    let approval = rest
        .calls("/im/v1/messages")
        .into_iter()
        .find(|c| c.body["content"].as_str().unwrap_or("").contains("\"action\""))
        .unwrap();
    assert_eq!(approval.body["msg_type"], "interactive");
    // Each send carries a uuid of its own: Feishu sends one message per uuid, so a retry of a
    // send that did arrive is not posted twice.
    assert!(approval.body["uuid"].as_str().is_some_and(|u| !u.is_empty() && u.len() <= 50));
    let card: Value = serde_json::from_str(approval.body["content"].as_str().unwrap()).unwrap();
    assert!(card["elements"][0]["text"]["content"].as_str().unwrap().contains("hello.txt"));
    let allow = card["elements"][1]["actions"][0]["value"]["octo"].as_str().unwrap().to_owned();

    // The connection drops mid-turn: a new endpoint, a new socket; the event again is dropped.
    gateway.drop_connection();
    wait("a new connection", || gateway.connections() == 2).await;
    assert_eq!(rest.calls("/callback/ws/endpoint").len(), 2);
    let again = text_event("ev1", "ou_42", "oc_1", true, "create hello.txt", json!([]));
    gateway.send(event(3, &again));
    wait("the repeat acknowledged", || ack(&gateway, 3).is_some()).await;

    gateway.send(data(4, "event", "m4", (0, 1), card_press("ev4", "ou_77", &allow).to_string().as_bytes()));
    wait("the refusal toast", || ack(&gateway, 4).is_some()).await;
    assert!(toast(&ack(&gateway, 4).unwrap()).contains("Only the person"));
    assert!(!e.ws.join("hello.txt").exists());
    gateway.send(data(5, "event", "m5", (0, 1), card_press("ev5", "ou_42", &allow).to_string().as_bytes()));
    wait("the file", || e.ws.join("hello.txt").exists()).await;
    assert_eq!(toast(&ack(&gateway, 5).unwrap()), "Allowed");
    wait("the final answer", || card_texts(&rest).iter().any(|t| t.contains("hello.txt is written"))).await;
    // Card text is plain: the model's `<at>` reaches nobody.
    let last = rest
        .calls("")
        .into_iter()
        .rev()
        .find(|c| c.body["content"].as_str().unwrap_or("").contains("is written"))
        .unwrap();
    let card: Value = serde_json::from_str(last.body["content"].as_str().unwrap()).unwrap();
    assert_eq!(card["elements"][0]["text"]["tag"], "plain_text");
    assert_eq!(e.turns().await, 2, "the repeated event started no second turn");
    // The written file, on request: uploaded, then sent as a file message.
    gateway.send(event(6, &text_event("ev6", "ou_42", "oc_1", true, "/file hello.txt", json!([]))));
    wait("the file message", || rest.calls("/im/v1/messages").iter().any(|c| c.body["msg_type"] == "file"))
        .await;
    let upload = rest.calls("/im/v1/files").remove(0);
    assert!(String::from_utf8_lossy(&upload.raw).contains("hi\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_groups_and_a_frequency_limit() {
    let e = env(vec![]).await;
    let (gateway, _server, rest) = start(&e, Some("No session yet")).await;
    gateway.send(event(1, &text_event("e1", "ou_13", "oc_13", true, "hi", json!([]))));
    gateway.send(event(2, &text_event("e2", "ou_13", "oc_13", true, "hi?", json!([]))));
    // A group message that does not mention the bot is not for it; one that does is.
    gateway.send(event(3, &text_event("e3", "ou_42", "oc_g", false, "/status", json!([]))));
    let mention = json!([{"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "octo"}]);
    let started = Instant::now();
    gateway.send(event(4, &text_event("e4", "ou_42", "oc_g", false, "@_user_1 /status", mention)));
    wait("the status", || card_texts(&rest).iter().filter(|t| t.contains("No session yet")).count() == 2)
        .await;
    assert!(started.elapsed() >= Duration::from_millis(900), "the limit's reset was waited out");
    assert_eq!(card_texts(&rest).iter().filter(|t| t.contains("answers only")).count(), 1);
    assert!(ack(&gateway, 3).is_some(), "an event not for the bot is still acknowledged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_app_secret_is_named() {
    let (server, _rest) = Rest::start(|_, _| {
        ResponseTemplate::new(200).set_body_json(json!({"code": 10014, "msg": "app secret invalid"}))
    })
    .await;
    let bot = Feishu::new(octo_app::http_client().unwrap(), "cli_1", "wrong", false, Some(&server.uri()));
    let err = bot.check().await.unwrap_err();
    assert!(matches!(err, octo_channels::PlatformError::Unauthorized(_)), "{err}");
    assert!(err.to_string().contains("app secret invalid"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_is_replaced() {
    let e = env(vec![]).await;
    let gateway = Gateway::start(|_| Vec::new()).await;
    // Pings every 5 s; the fake never answers them, as a half-open connection would not.
    let (server, _rest) = open_api(&gateway, None, 5).await;
    let bot = Arc::new(Feishu::new(
        octo_app::http_client().unwrap(),
        "cli_1",
        "secret",
        false,
        Some(&server.uri()),
    ));
    let bridge =
        Bridge::new(bot as Arc<dyn Platform>, Arc::clone(&e.launcher), e.config("feishu", &["ou_42"]));
    tokio::spawn(bridge.run());
    let deadline = Instant::now() + Duration::from_secs(40);
    while gateway.connections() < 2 {
        assert!(Instant::now() < deadline, "the silent connection was never replaced");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pings = sent(&gateway).iter().filter(|f| f.method == 0 && f.header("type") == "ping").count();
    assert!(pings >= 3, "pinged while waiting ({pings})");
}
