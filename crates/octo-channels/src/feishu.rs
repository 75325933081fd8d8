//! Feishu and Lark: events through the long connection (a WebSocket of protobuf frames opened
//! from the app's id and secret; every event acknowledged, a repeated one dropped by its id,
//! split events joined), messages through the Open API with a tenant token renewed before it
//! expires, answers as interactive cards whose text is plain (no `<at>` can reach anyone), and
//! approvals as card buttons answered with a toast. The bot answers direct chats and mentions in
//! group chats. Lark is the same API at another domain.

use crate::http::{self, failure};
use crate::platform::{lock, text_of, Incoming, Platform, PlatformError, Seen, Sent};
use crate::ws::{self, Ws};
use base64::Engine as _;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use prost::Message as _;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// Feishu's Open API (mainland China).
pub const FEISHU_BASE: &str = "https://open.feishu.cn";
/// Lark's Open API (international).
pub const LARK_BASE: &str = "https://open.larksuite.com";

/// A header of a long-connection frame.
#[derive(Clone, PartialEq, prost::Message)]
struct Header {
    #[prost(string, required, tag = "1")]
    key: String,
    #[prost(string, required, tag = "2")]
    value: String,
}

/// A long-connection frame (the protocol's `pbbp2.Frame`).
#[derive(Clone, PartialEq, prost::Message)]
struct Frame {
    #[prost(uint64, required, tag = "1")]
    seq_id: u64,
    #[prost(uint64, required, tag = "2")]
    log_id: u64,
    #[prost(int32, required, tag = "3")]
    service: i32,
    /// 0 control (ping, pong), 1 data (events, cards).
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

/// A Feishu or Lark bot.
pub struct Feishu {
    client: reqwest::Client,
    app_id: String,
    app_secret: String,
    base: String,
    label: &'static str,
    token: tokio::sync::Mutex<Option<(String, Instant)>>,
    /// The bot's own open_id (from `check`).
    me: Mutex<String>,
    link: tokio::sync::Mutex<Link>,
    sink: tokio::sync::Mutex<Option<SplitSink<Ws, Message>>>,
    /// Card presses waiting for their acknowledgement (the toast).
    pending: Mutex<HashMap<String, Frame>>,
}

struct Link {
    stream: Option<SplitStream<Ws>>,
    service: i32,
    ping_every: Duration,
    next_ping: Instant,
    /// When a frame was last read.
    last_read: Instant,
    /// Parts of split events, by message id.
    parts: HashMap<String, Vec<Option<Vec<u8>>>>,
    seen: Seen,
}

/// A card: the text as plain text (nothing in it is markup), then the buttons.
fn card(text: &str, buttons: &[(String, String)]) -> String {
    let mut elements = vec![json!({"tag": "div", "text": {"tag": "plain_text", "content": text}})];
    if !buttons.is_empty() {
        let actions: Vec<Value> = buttons
            .iter()
            .enumerate()
            .map(|(i, (label, data))| {
                json!({"tag": "button", "text": {"tag": "plain_text", "content": label},
                    "type": if i == 0 { "primary" } else { "default" }, "value": {"octo": data}})
            })
            .collect();
        elements.push(json!({"tag": "action", "actions": actions}));
    }
    json!({"config": {"wide_screen_mode": true, "update_multi": true}, "elements": elements}).to_string()
}

/// Codes of an expired or invalid tenant token.
fn stale_token(code: i64) -> bool {
    matches!(code, 99_991_661 | 99_991_663 | 99_991_668)
}

impl Feishu {
    /// The app `app_id` with `app_secret`; `lark` picks Lark's domain, `base` overrides either.
    pub fn new(
        client: reqwest::Client,
        app_id: &str,
        app_secret: &str,
        lark: bool,
        base: Option<&str>,
    ) -> Self {
        let default = if lark { LARK_BASE } else { FEISHU_BASE };
        Self {
            client,
            app_id: app_id.to_owned(),
            app_secret: app_secret.to_owned(),
            base: base.unwrap_or(default).trim_end_matches('/').to_owned(),
            label: if lark { "Lark" } else { "Feishu" },
            token: tokio::sync::Mutex::new(None),
            me: Mutex::new(String::new()),
            link: tokio::sync::Mutex::new(Link {
                stream: None,
                service: 0,
                ping_every: Duration::from_secs(120),
                next_ping: Instant::now(),
                last_read: Instant::now(),
                parts: HashMap::new(),
                seen: Seen::default(),
            }),
            sink: tokio::sync::Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// A tenant token, renewed five minutes before it expires (or when `renew`).
    async fn tenant_token(&self, renew: bool) -> Result<String, PlatformError> {
        let mut t = self.token.lock().await;
        if let Some((token, until)) = t.as_ref() {
            if !renew && Instant::now() < *until {
                return Ok(token.clone());
            }
        }
        let url = format!("{}/open-apis/auth/v3/tenant_access_token/internal", self.base);
        let body = json!({"app_id": self.app_id, "app_secret": self.app_secret});
        let a = http::call("tenant token", || self.client.post(&url).json(&body), |_, _| false).await?;
        if a.body["code"].as_i64() != Some(0) {
            let msg = a.body["msg"].as_str().unwrap_or("no message");
            return Err(PlatformError::Unauthorized(format!(
                "tenant token: {msg} (check app_id and the app secret)"
            )));
        }
        let token = text_of(&a.body["tenant_access_token"]);
        let life = a.body["expire"].as_u64().unwrap_or(7200).min(86_400).saturating_sub(300).max(60);
        *t = Some((token.clone(), Instant::now() + Duration::from_secs(life)));
        Ok(token)
    }

    async fn api(&self, what: &str, method: Method, path: &str, body: Value) -> Result<Value, PlatformError> {
        let url = format!("{}{path}", self.base);
        for renew in [false, true] {
            let token = self.tenant_token(renew).await?;
            let make = || {
                let r = self.client.request(method.clone(), &url).bearer_auth(&token);
                if body.is_null() {
                    r
                } else {
                    r.json(&body)
                }
            };
            let a = http::call(what, make, |_, v| v["code"].as_i64() == Some(99_991_400)).await?;
            let code = a.body["code"].as_i64().unwrap_or(-1);
            if code == 0 {
                return Ok(a.body);
            }
            if stale_token(code) && !renew {
                continue;
            }
            let msg = format!("{} (code {code})", a.body["msg"].as_str().unwrap_or("no message"));
            return Err(failure(what, a.status, &msg));
        }
        Err(PlatformError::Other(format!("{what}: the tenant token was refused twice")))
    }

    /// Opens the long connection.
    async fn connect(&self, link: &mut Link) -> Result<(), PlatformError> {
        let url = format!("{}/callback/ws/endpoint", self.base);
        let body = json!({"AppID": self.app_id, "AppSecret": self.app_secret});
        let a = http::call(
            "long connection",
            || self.client.post(&url).header("locale", "en").json(&body),
            |_, _| false,
        )
        .await?;
        let code = a.body["code"].as_i64().unwrap_or(-1);
        if code != 0 {
            let msg =
                format!("long connection: {} (code {code})", a.body["msg"].as_str().unwrap_or("no message"));
            return Err(match code {
                403 | 514 => PlatformError::Unauthorized(msg),
                _ => PlatformError::Other(msg),
            });
        }
        let url = text_of(&a.body["data"]["URL"]);
        let ping = a.body["data"]["ClientConfig"]["PingInterval"].as_u64().unwrap_or(120).clamp(5, 3600);
        link.service = url
            .split(['?', '&'])
            .find_map(|kv| kv.strip_prefix("service_id="))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let (sink, stream) = ws::connect("feishu long connection", &url).await?.split();
        link.stream = Some(stream);
        link.ping_every = Duration::from_secs(ping);
        link.next_ping = Instant::now();
        link.last_read = Instant::now();
        *self.sink.lock().await = Some(sink);
        Ok(())
    }

    async fn write(&self, frame: &Frame) -> Result<(), PlatformError> {
        let mut sink = self.sink.lock().await;
        let Some(s) = sink.as_mut() else {
            return Err(PlatformError::Other("feishu long connection: not connected".into()));
        };
        s.send(Message::binary(frame.encode_to_vec()))
            .await
            .map_err(|e| PlatformError::Other(format!("feishu long connection: {e}")))
    }

    /// Acknowledges a data frame (with `data` for a card's answer).
    async fn ack(&self, mut frame: Frame, data: Option<Value>) -> Result<(), PlatformError> {
        let mut resp = json!({"code": 200, "headers": {}});
        if let Some(d) = data {
            resp["data"] = json!(base64::engine::general_purpose::STANDARD.encode(d.to_string()));
        }
        frame.headers.push(Header { key: "biz_rt".into(), value: "0".into() });
        frame.payload = Some(resp.to_string().into_bytes());
        self.write(&frame).await
    }

    fn drop_link(link: &mut Link) {
        link.stream = None;
        link.parts.clear();
    }

    /// What a (whole) data frame's payload says.
    fn read(&self, link: &mut Link, kind: &str, payload: &[u8]) -> Option<Incoming> {
        let v: Value = serde_json::from_slice(payload).ok()?;
        let event_id = text_of(&v["header"]["event_id"]);
        let event_type = v["header"]["event_type"].as_str().unwrap_or("");
        if !link.seen.first(&event_id) {
            return None;
        }
        let e = &v["event"];
        if event_type == "im.message.receive_v1" {
            let m = &e["message"];
            if e["sender"]["sender_type"] != "user" || m["message_type"] != "text" {
                return None;
            }
            let content: Value =
                serde_json::from_str(m["content"].as_str().unwrap_or("")).unwrap_or(Value::Null);
            let mut text = text_of(&content["text"]);
            if m["chat_type"] != "p2p" {
                // In a group, only what mentions the bot is for it.
                let me = lock(&self.me).clone();
                let mentions = m["mentions"].as_array().cloned().unwrap_or_default();
                if me.is_empty() || !mentions.iter().any(|x| x["id"]["open_id"] == me.as_str()) {
                    return None;
                }
            }
            for x in m["mentions"].as_array().into_iter().flatten() {
                text = text.replace(x["key"].as_str().unwrap_or("\u{0}"), "");
            }
            return Some(Incoming::Message {
                chat: text_of(&m["chat_id"]),
                user: text_of(&e["sender"]["sender_id"]["open_id"]),
                text: text.trim().to_owned(),
            });
        }
        let (user, chat, value) = if event_type == "card.action.trigger" {
            (
                text_of(&e["operator"]["open_id"]),
                text_of(&e["context"]["open_chat_id"]),
                &e["action"]["value"],
            )
        } else if kind == "card" {
            (text_of(&v["open_id"]), text_of(&v["open_chat_id"]), &v["action"]["value"])
        } else {
            return None;
        };
        let data = text_of(&value["octo"]);
        if data.is_empty() {
            return None;
        }
        Some(Incoming::Button { chat, user, data, press: String::new() })
    }
}

#[async_trait::async_trait]
impl Platform for Feishu {
    fn name(&self) -> &str {
        "feishu"
    }

    fn message_limit(&self) -> usize {
        // Cards are capped at about 30 KB: room for wide characters, escaped twice.
        4000
    }

    fn file_limit(&self) -> u64 {
        30 * 1024 * 1024
    }

    async fn check(&self) -> Result<String, PlatformError> {
        let v = self.api("bot info", Method::GET, "/open-apis/bot/v3/info", Value::Null).await?;
        *lock(&self.me) = text_of(&v["bot"]["open_id"]);
        Ok(format!("{} on {}", v["bot"]["app_name"].as_str().unwrap_or("bot"), self.label))
    }

    async fn poll(&self) -> Result<Vec<Incoming>, PlatformError> {
        let mut guard = self.link.lock().await;
        let link = &mut *guard;
        loop {
            let Some(stream) = link.stream.as_mut() else {
                self.connect(link).await?;
                continue;
            };
            // Nothing read for three ping intervals (not even a pong): a dead connection.
            let silent_until = link.last_read + link.ping_every * 3;
            let msg = tokio::select! {
                m = stream.next() => Some(m),
                () = tokio::time::sleep_until(link.next_ping) => None,
                () = tokio::time::sleep_until(silent_until) => {
                    Self::drop_link(link);
                    return Err(PlatformError::Other("feishu long connection: silent too long; reconnecting".into()));
                }
            };
            if msg.is_some() {
                link.last_read = Instant::now();
            }
            let Some(msg) = msg else {
                let ping = Frame {
                    method: 0,
                    service: link.service,
                    headers: vec![Header { key: "type".into(), value: "ping".into() }],
                    ..Frame::default()
                };
                link.next_ping = Instant::now() + link.ping_every;
                if self.write(&ping).await.is_err() {
                    Self::drop_link(link);
                    return Err(PlatformError::Other(
                        "feishu long connection: cannot ping; reconnecting".into(),
                    ));
                }
                continue;
            };
            let bytes = match msg {
                Some(Ok(Message::Binary(b))) => b,
                Some(Ok(Message::Close(_))) | None => {
                    Self::drop_link(link);
                    return Err(PlatformError::Other("feishu long connection closed; reconnecting".into()));
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    Self::drop_link(link);
                    return Err(PlatformError::Other(format!("feishu long connection: {e}; reconnecting")));
                }
            };
            let Ok(frame) = Frame::decode(bytes.as_ref()) else { continue };
            let kind = frame.header("type").to_owned();
            if frame.method == 0 {
                if kind == "pong" {
                    let cfg: Value = serde_json::from_slice(frame.payload.as_deref().unwrap_or(b""))
                        .unwrap_or(Value::Null);
                    if let Some(s) = cfg["PingInterval"].as_u64() {
                        link.ping_every = Duration::from_secs(s.clamp(5, 3600));
                    }
                }
                continue;
            }
            // A large event arrives in parts: join them before reading.
            let sum: usize = frame.header("sum").parse().unwrap_or(1).clamp(1, 64);
            let payload = if sum > 1 {
                let seq: usize = frame.header("seq").parse().unwrap_or(0);
                let id = frame.header("message_id").to_owned();
                if link.parts.len() >= 64 && !link.parts.contains_key(&id) {
                    // Events that never completed: forgotten rather than kept forever.
                    link.parts.clear();
                }
                let parts = link.parts.entry(id.clone()).or_insert_with(|| vec![None; sum]);
                if let Some(slot) = parts.get_mut(seq) {
                    *slot = frame.payload.clone();
                }
                if parts.iter().any(Option::is_none) {
                    continue;
                }
                link.parts.remove(&id).unwrap_or_default().into_iter().flatten().flatten().collect()
            } else {
                frame.payload.clone().unwrap_or_default()
            };
            match self.read(link, &kind, &payload) {
                Some(Incoming::Button { chat, user, data, .. }) => {
                    // Acknowledged with the bridge's note (a toast) by `acknowledge`.
                    let press = format!("{}:{}", frame.header("message_id"), frame.seq_id);
                    lock(&self.pending).insert(press.clone(), frame);
                    return Ok(vec![Incoming::Button { chat, user, data, press }]);
                }
                other => {
                    if self.ack(frame, None).await.is_err() {
                        Self::drop_link(link);
                    }
                    if let Some(i) = other {
                        return Ok(vec![i]);
                    }
                }
            }
        }
    }

    async fn send(
        &self,
        chat: &str,
        text: &str,
        buttons: &[(String, String)],
    ) -> Result<Sent, PlatformError> {
        // The same `uuid` on every try: Feishu sends one message per uuid within an hour.
        let body = json!({"receive_id": chat, "msg_type": "interactive", "content": card(text, buttons),
            "uuid": crate::platform::send_token()});
        let v = self
            .api("send message", Method::POST, "/open-apis/im/v1/messages?receive_id_type=chat_id", body)
            .await?;
        Ok(Sent { chat: chat.to_owned(), id: text_of(&v["data"]["message_id"]) })
    }

    async fn edit(&self, sent: &Sent, text: &str) -> Result<(), PlatformError> {
        let body = json!({"content": card(text, &[])});
        self.api("update card", Method::PATCH, &format!("/open-apis/im/v1/messages/{}", sent.id), body)
            .await
            .map(|_| ())
    }

    async fn acknowledge(&self, press: &str, note: &str) -> Result<(), PlatformError> {
        let Some(frame) = lock(&self.pending).remove(press) else {
            return Ok(());
        };
        self.ack(frame, Some(json!({"toast": {"type": "info", "content": note}}))).await
    }

    async fn send_file(&self, chat: &str, name: &str, bytes: Vec<u8>) -> Result<(), PlatformError> {
        let url = format!("{}/open-apis/im/v1/files", self.base);
        let token = self.tenant_token(false).await?;
        let make = || {
            let part = reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_owned());
            let form = reqwest::multipart::Form::new()
                .text("file_type", "stream")
                .text("file_name", name.to_owned())
                .part("file", part);
            self.client.post(&url).bearer_auth(&token).multipart(form)
        };
        let a = http::call_within("upload file", http::UPLOAD_TIMEOUT, make, |_, v| {
            v["code"].as_i64() == Some(99_991_400)
        })
        .await?;
        if a.body["code"].as_i64() != Some(0) {
            return Err(failure("upload file", a.status, a.body["msg"].as_str().unwrap_or("no message")));
        }
        let content = json!({"file_key": a.body["data"]["file_key"]}).to_string();
        let body = json!({"receive_id": chat, "msg_type": "file", "content": content});
        self.api("send file", Method::POST, "/open-apis/im/v1/messages?receive_id_type=chat_id", body)
            .await
            .map(|_| ())
    }
}
