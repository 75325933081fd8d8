//! Discord: events through the gateway WebSocket (hello, identify, heartbeats, and a resume
//! with the last sequence number after a drop, so nothing is lost or repeated), messages
//! through the REST API, approvals as message-component buttons answered with an ephemeral
//! note. In a server channel the bot answers only when mentioned; direct messages always.
//! Mentions in what the bot sends are never resolved (`allowed_mentions` empty), so an answer
//! cannot ping anyone.

use crate::http::{self, failure};
use crate::platform::{lock, text_of, Incoming, Platform, PlatformError, Seen, Sent};
use crate::ws::{self, Ws};
use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// Discord's REST API.
pub const API_BASE: &str = "https://discord.com/api/v10";

/// Server messages, direct messages, and their content (a privileged intent).
const INTENTS: u64 = (1 << 9) | (1 << 12) | (1 << 15);

/// A Discord bot.
pub struct Discord {
    client: reqwest::Client,
    token: String,
    base: String,
    /// The bot's own user id (from `check`).
    me: Mutex<String>,
    gateway: tokio::sync::Mutex<Gateway>,
}

#[derive(Default)]
struct Gateway {
    conn: Option<Conn>,
    session: Option<String>,
    resume_url: Option<String>,
    seq: Option<u64>,
    seen: Seen,
}

struct Conn {
    ws: Ws,
    every: Duration,
    next_beat: Instant,
    acked: bool,
}

/// What one step of the event loop came to.
enum Step {
    Frame(Value),
    Beat,
    Dropped(String),
    Closed(Option<u16>, String),
    Nothing,
}

impl Discord {
    /// The bot with `token`, at `base` (default [`API_BASE`]).
    pub fn new(client: reqwest::Client, token: &str, base: Option<&str>) -> Self {
        Self {
            client,
            token: token.to_owned(),
            base: base.unwrap_or(API_BASE).trim_end_matches('/').to_owned(),
            me: Mutex::new(String::new()),
            gateway: tokio::sync::Mutex::new(Gateway::default()),
        }
    }

    async fn rest(
        &self,
        what: &str,
        method: Method,
        path: &str,
        body: Value,
    ) -> Result<Value, PlatformError> {
        let url = format!("{}{path}", self.base);
        let auth = format!("Bot {}", self.token);
        let make = || {
            let r = self.client.request(method.clone(), &url).header("authorization", &auth);
            if body.is_null() {
                r
            } else {
                r.json(&body)
            }
        };
        let a = http::call(what, make, |_, _| false).await?;
        if (200..300).contains(&a.status) {
            return Ok(a.body);
        }
        Err(failure(what, a.status, a.body["message"].as_str().unwrap_or("no message")))
    }

    async fn send_frame(ws: &mut Ws, v: Value) -> Result<(), PlatformError> {
        ws.send(Message::text(v.to_string()))
            .await
            .map_err(|e| PlatformError::Other(format!("discord gateway: {e}")))
    }

    /// Opens the gateway: hello, then a resume of the last session or a new identify.
    async fn connect(&self, g: &mut Gateway) -> Result<Conn, PlatformError> {
        let url = match (&g.session, &g.resume_url) {
            (Some(_), Some(u)) => u.clone(),
            _ => {
                let v = self.rest("gateway", Method::GET, "/gateway/bot", Value::Null).await?;
                v["url"].as_str().unwrap_or("wss://gateway.discord.gg").to_owned()
            }
        };
        let mut ws =
            ws::connect("discord gateway", &format!("{}/?v=10&encoding=json", url.trim_end_matches('/')))
                .await?;
        let hello = tokio::time::timeout(Duration::from_secs(30), ws.next()).await;
        let every = match hello {
            Ok(Some(Ok(Message::Text(t)))) => {
                let v: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
                v["d"]["heartbeat_interval"].as_u64().unwrap_or(41_250)
            }
            _ => return Err(PlatformError::Other("discord gateway: no hello".into())),
        };
        let every = Duration::from_millis(every.clamp(1000, 600_000));
        let first = match (&g.session, g.seq) {
            (Some(session), Some(seq)) => {
                json!({"op": 6, "d": {"token": self.token, "session_id": session, "seq": seq}})
            }
            _ => {
                g.session = None;
                json!({"op": 2, "d": {
                    "token": self.token, "intents": INTENTS,
                    "properties": {"os": std::env::consts::OS, "browser": "octo", "device": "octo"}
                }})
            }
        };
        Self::send_frame(&mut ws, first).await?;
        Ok(Conn { ws, every, next_beat: Instant::now() + every / 2, acked: true })
    }

    fn message(&self, g: &mut Gateway, d: &Value) -> Option<Incoming> {
        let author = &d["author"];
        let user = text_of(&author["id"]);
        let me = lock(&self.me).clone();
        if author["bot"] == true || user == me || !g.seen.first(&text_of(&d["id"])) {
            return None;
        }
        let mut content = d["content"].as_str().unwrap_or("").to_owned();
        if !d["guild_id"].is_null() {
            // In a server channel, only what mentions the bot is for it.
            let forms = [format!("<@{me}>"), format!("<@!{me}>")];
            if me.is_empty() || !forms.iter().any(|f| content.contains(f.as_str())) {
                return None;
            }
            for f in &forms {
                content = content.replace(f.as_str(), "");
            }
        }
        Some(Incoming::Message { chat: text_of(&d["channel_id"]), user, text: content.trim().to_owned() })
    }

    fn press(g: &mut Gateway, d: &Value) -> Option<Incoming> {
        if d["type"].as_u64() != Some(3) || !g.seen.first(&text_of(&d["id"])) {
            return None;
        }
        let user = match text_of(&d["member"]["user"]["id"]) {
            u if u.is_empty() => text_of(&d["user"]["id"]),
            u => u,
        };
        Some(Incoming::Button {
            chat: text_of(&d["channel_id"]),
            user,
            data: text_of(&d["data"]["custom_id"]),
            press: format!("{}/{}", text_of(&d["id"]), text_of(&d["token"])),
        })
    }

    /// The heartbeat is due: a connection whose last one was never acknowledged is a zombie
    /// and is replaced.
    async fn beat(g: &mut Gateway) -> Result<(), PlatformError> {
        let seq = g.seq;
        let Some(c) = g.conn.as_mut() else { return Ok(()) };
        if !c.acked {
            g.conn = None;
            return Err(PlatformError::Other("discord gateway: no heartbeat acknowledged; resuming".into()));
        }
        c.acked = false;
        c.next_beat = Instant::now() + c.every;
        if Self::send_frame(&mut c.ws, json!({"op": 1, "d": seq})).await.is_err() {
            g.conn = None;
        }
        Ok(())
    }

    /// One frame from the gateway: an event for the bridge, or the gateway's own business.
    async fn frame(&self, g: &mut Gateway, v: &Value) -> Option<Incoming> {
        if let Some(s) = v["s"].as_u64() {
            g.seq = Some(s);
        }
        match v["op"].as_u64() {
            Some(0) => return self.dispatch(g, v["t"].as_str().unwrap_or(""), &v["d"]),
            Some(1) => {
                // Asked for a heartbeat now: sent without waiting for the last ack.
                let seq = g.seq;
                if let Some(c) = g.conn.as_mut() {
                    if Self::send_frame(&mut c.ws, json!({"op": 1, "d": seq})).await.is_err() {
                        g.conn = None;
                    }
                }
            }
            Some(7) => g.conn = None,
            Some(9) => {
                if v["d"] != true {
                    g.session = None;
                    g.seq = None;
                }
                g.conn = None;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Some(11) => {
                if let Some(c) = g.conn.as_mut() {
                    c.acked = true;
                }
            }
            _ => {}
        }
        None
    }

    /// A dispatched event (`op` 0): who the bot is, a message, a button press.
    fn dispatch(&self, g: &mut Gateway, kind: &str, d: &Value) -> Option<Incoming> {
        match kind {
            "READY" => {
                g.session = d["session_id"].as_str().map(str::to_owned);
                g.resume_url = d["resume_gateway_url"].as_str().map(str::to_owned);
                let id = text_of(&d["user"]["id"]);
                if !id.is_empty() {
                    *lock(&self.me) = id;
                }
                None
            }
            "MESSAGE_CREATE" => self.message(g, d),
            "INTERACTION_CREATE" => Self::press(g, d),
            _ => None,
        }
    }
}

/// Close codes after which reconnecting cannot help.
fn fatal(code: u16) -> Option<&'static str> {
    match code {
        4004 => Some("authentication failed: check the bot token"),
        4010..=4013 => Some("the gateway refused the connection settings"),
        4014 => Some("the Message Content intent is not enabled for this bot (Developer Portal → Bot → Privileged Gateway Intents)"),
        _ => None,
    }
}

#[async_trait::async_trait]
impl Platform for Discord {
    fn name(&self) -> &str {
        "discord"
    }

    fn message_limit(&self) -> usize {
        2000
    }

    fn file_limit(&self) -> u64 {
        10 * 1024 * 1024
    }

    async fn check(&self) -> Result<String, PlatformError> {
        let me = self.rest("users/@me", Method::GET, "/users/@me", Value::Null).await?;
        *lock(&self.me) = text_of(&me["id"]);
        Ok(format!("@{} on Discord", me["username"].as_str().unwrap_or("bot")))
    }

    async fn poll(&self) -> Result<Vec<Incoming>, PlatformError> {
        let mut g = self.gateway.lock().await;
        loop {
            let step = match g.conn.as_mut() {
                None => {
                    let conn = self.connect(&mut g).await?;
                    g.conn = Some(conn);
                    continue;
                }
                Some(c) => next_step(c).await,
            };
            let event = match step {
                Step::Nothing => None,
                Step::Beat => {
                    Self::beat(&mut g).await?;
                    None
                }
                Step::Dropped(why) => {
                    g.conn = None;
                    return Err(PlatformError::Other(format!("discord gateway: {why}; resuming")));
                }
                Step::Closed(code, why) => return Err(closed(&mut g, code, &why)),
                Step::Frame(v) => self.frame(&mut g, &v).await,
            };
            if let Some(e) = event {
                return Ok(vec![e]);
            }
        }
    }

    async fn send(
        &self,
        chat: &str,
        text: &str,
        buttons: &[(String, String)],
    ) -> Result<Sent, PlatformError> {
        // The same nonce on every try, enforced: Discord returns the first message instead of
        // posting a second when a retried send did arrive.
        let mut body = json!({"content": text, "allowed_mentions": {"parse": []},
            "nonce": crate::platform::send_token(), "enforce_nonce": true});
        if !buttons.is_empty() {
            let row: Vec<Value> = buttons
                .iter()
                .enumerate()
                .map(|(i, (label, data))| {
                    json!({"type": 2, "style": if i == 0 { 1 } else { 2 }, "label": label, "custom_id": data})
                })
                .collect();
            body["components"] = json!([{"type": 1, "components": row}]);
        }
        let m =
            self.rest("create message", Method::POST, &format!("/channels/{chat}/messages"), body).await?;
        Ok(Sent { chat: chat.to_owned(), id: text_of(&m["id"]) })
    }

    async fn edit(&self, sent: &Sent, text: &str) -> Result<(), PlatformError> {
        let body = json!({"content": text, "components": [], "allowed_mentions": {"parse": []}});
        let path = format!("/channels/{}/messages/{}", sent.chat, sent.id);
        self.rest("edit message", Method::PATCH, &path, body).await.map(|_| ())
    }

    async fn acknowledge(&self, press: &str, note: &str) -> Result<(), PlatformError> {
        let Some((id, token)) = press.split_once('/') else {
            return Err(PlatformError::Other(format!("discord: not an interaction: {press}")));
        };
        // Ephemeral: only the presser sees the note.
        let body =
            json!({"type": 4, "data": {"content": note, "flags": 64, "allowed_mentions": {"parse": []}}});
        self.rest("interaction callback", Method::POST, &format!("/interactions/{id}/{token}/callback"), body)
            .await
            .map(|_| ())
    }

    async fn send_file(&self, chat: &str, name: &str, bytes: Vec<u8>) -> Result<(), PlatformError> {
        let url = format!("{}/channels/{chat}/messages", self.base);
        let payload =
            json!({"attachments": [{"id": 0, "filename": name}], "allowed_mentions": {"parse": []}});
        let make = || {
            let part = reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_owned());
            let form = reqwest::multipart::Form::new()
                .text("payload_json", payload.to_string())
                .part("files[0]", part);
            self.client.post(&url).header("authorization", format!("Bot {}", self.token)).multipart(form)
        };
        let a = http::call_within("upload", http::UPLOAD_TIMEOUT, make, |_, _| false).await?;
        if (200..300).contains(&a.status) {
            return Ok(());
        }
        Err(failure("upload", a.status, a.body["message"].as_str().unwrap_or("no message")))
    }
}
/// What the open connection gives next: a frame, a close, a drop, or the heartbeat's time.
async fn next_step(c: &mut Conn) -> Step {
    tokio::select! {
        frame = c.ws.next() => match frame {
            Some(Ok(Message::Text(t))) => Step::Frame(serde_json::from_str(&t).unwrap_or(Value::Null)),
            Some(Ok(Message::Close(f))) => {
                let (code, why) =
                    f.map(|f| (Some(u16::from(f.code)), f.reason.to_string())).unwrap_or((None, String::new()));
                Step::Closed(code, why)
            }
            Some(Ok(_)) => Step::Nothing,
            Some(Err(e)) => Step::Dropped(e.to_string()),
            None => Step::Dropped("the connection closed".into()),
        },
        () = tokio::time::sleep_until(c.next_beat) => Step::Beat,
    }
}

/// The gateway closed: a close code that no reconnect can mend stops the channel; an invalid
/// session or sequence starts a new session; anything else reconnects.
fn closed(g: &mut Gateway, code: Option<u16>, why: &str) -> PlatformError {
    g.conn = None;
    if let Some(msg) = code.and_then(fatal) {
        return PlatformError::Unauthorized(format!("discord gateway closed ({}): {msg}", code.unwrap_or(0)));
    }
    if matches!(code, Some(4007 | 4009)) {
        g.session = None;
    }
    PlatformError::Other(format!("discord gateway closed ({}) {why}; reconnecting", code.unwrap_or(0)))
}
