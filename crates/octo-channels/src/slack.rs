//! Slack: events through Socket Mode (a WebSocket opened with the app-level token, each
//! envelope acknowledged at once; a retried event is dropped by its id), messages through the
//! Web API with the bot token, approvals as Block Kit buttons answered with an ephemeral note.
//! The bot answers direct messages and mentions in channels; a mention in a channel starts a
//! thread, and each thread is a session of its own (the chat is `CHANNEL THREAD_TS`). What it
//! sends is escaped, so an answer cannot mention `@channel` or anyone else.

use crate::http::{self, failure};
use crate::platform::{lock, text_of, Incoming, Platform, PlatformError, Seen, Sent};
use crate::ws::{self, Ws};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// Slack's Web API.
pub const API_BASE: &str = "https://slack.com/api";

/// A Slack app in Socket Mode.
pub struct Slack {
    client: reqwest::Client,
    bot_token: String,
    app_token: String,
    base: String,
    /// The bot's own user id (from `check`).
    me: Mutex<String>,
    socket: tokio::sync::Mutex<Socket>,
}

#[derive(Default)]
struct Socket {
    ws: Option<Ws>,
    seen: Seen,
}

/// Slack's own escaping: `&`, `<` and `>` are markup (`<!channel>`, `<@U123>`).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// Errors that mean the token is no good.
fn refused(error: &str) -> bool {
    matches!(
        error,
        "invalid_auth"
            | "not_authed"
            | "account_inactive"
            | "token_revoked"
            | "token_expired"
            | "not_allowed_token_type"
    )
}

/// A Web API answer as its body, or the error it names.
fn answered(method: &str, a: http::Answer) -> Result<Value, PlatformError> {
    if a.body["ok"] == true {
        return Ok(a.body);
    }
    let error = a.body["error"].as_str().unwrap_or("no error named");
    if refused(error) {
        return Err(PlatformError::Unauthorized(format!("{method}: {error}")));
    }
    if !(200..300).contains(&a.status) {
        return Err(failure(method, a.status, error));
    }
    Err(PlatformError::Other(format!("{method}: {error}")))
}

impl Slack {
    /// The app with its bot token (`xoxb-`) and app-level token (`xapp-`), at `base`
    /// (default [`API_BASE`]).
    pub fn new(client: reqwest::Client, bot_token: &str, app_token: &str, base: Option<&str>) -> Self {
        Self {
            client,
            bot_token: bot_token.to_owned(),
            app_token: app_token.to_owned(),
            base: base.unwrap_or(API_BASE).trim_end_matches('/').to_owned(),
            me: Mutex::new(String::new()),
            socket: tokio::sync::Mutex::new(Socket::default()),
        }
    }

    /// Calls a Web API method with a JSON body (or a form, when `form` is given).
    async fn api(
        &self,
        method: &str,
        token: &str,
        body: Value,
        form: Option<&[(&str, String)]>,
    ) -> Result<Value, PlatformError> {
        let url = format!("{}/{method}", self.base);
        let make = || {
            let r = self.client.post(&url).bearer_auth(token);
            match form {
                Some(f) => r.form(f),
                None => r.json(&body),
            }
        };
        let a = http::call(method, make, |_, v| v["error"] == "ratelimited").await?;
        answered(method, a)
    }

    /// Posts a message. `chat.postMessage` takes no idempotency key, so a post that failed in a
    /// way that may have posted it (the connection dropped, a 5xx) is looked for in the
    /// conversation before it is sent again: a retry never shows the user the same text twice.
    async fn post_message(&self, body: &Value) -> Result<Value, PlatformError> {
        const METHOD: &str = "chat.postMessage";
        let url = format!("{}/{METHOD}", self.base);
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() - 2.0);
        let mut failures = 0u32;
        loop {
            let make = || self.client.post(&url).bearer_auth(&self.bot_token).json(body);
            let limited = |_: u16, v: &Value| v["error"] == "ratelimited";
            let lost = match http::call_tries(METHOD, http::TIMEOUT, 1, make, limited).await {
                Ok(a) if a.status < 500 => return answered(METHOD, a),
                Ok(a) => failure(METHOD, a.status, a.body["error"].as_str().unwrap_or("server error")),
                Err(e @ PlatformError::Other(_)) => e,
                Err(e) => return Err(e),
            };
            failures += 1;
            if failures >= http::TRIES {
                return Err(lost);
            }
            tokio::time::sleep(Duration::from_secs(1 << (failures - 1))).await;
            if let Some(found) = self.posted_since(body, since).await {
                return Ok(found);
            }
        }
    }

    /// The bot's message with `body`'s text posted in its conversation (or thread) since
    /// `since`, as `chat.postMessage` would have answered; `None` when there is none or the
    /// conversation cannot be read (a missing `*:history` scope: then it is posted again).
    async fn posted_since(&self, body: &Value, since: f64) -> Option<Value> {
        let channel = text_of(&body["channel"]);
        let mut form =
            vec![("channel", channel.clone()), ("oldest", format!("{since:.6}")), ("limit", "50".to_owned())];
        let method = match body["thread_ts"].as_str() {
            Some(t) => {
                form.push(("ts", t.to_owned()));
                "conversations.replies"
            }
            None => "conversations.history",
        };
        let v = self.api(method, &self.bot_token, Value::Null, Some(&form)).await.ok()?;
        let me = lock(&self.me).clone();
        let mine = |m: &Value| !m["bot_id"].is_null() || (!me.is_empty() && text_of(&m["user"]) == me);
        let found = v["messages"].as_array()?.iter().find(|m| m["text"] == body["text"] && mine(m))?;
        Some(json!({"ok": true, "channel": channel, "ts": found["ts"]}))
    }

    async fn open(&self) -> Result<Ws, PlatformError> {
        let v = self.api("apps.connections.open", &self.app_token, json!({}), None).await?;
        let url = text_of(&v["url"]);
        ws::connect("slack socket mode", &url).await
    }

    fn event(&self, seen: &mut Seen, payload: &Value) -> Option<Incoming> {
        if !seen.first(&text_of(&payload["event_id"])) {
            return None;
        }
        let e = &payload["event"];
        let me = lock(&self.me).clone();
        let user = text_of(&e["user"]);
        if !e["bot_id"].is_null() || !e["subtype"].is_null() || user.is_empty() || user == me {
            return None;
        }
        let mut text = unescape(e["text"].as_str().unwrap_or(""));
        match e["type"].as_str() {
            Some("message") if e["channel_type"] == "im" => {}
            Some("app_mention") => {
                if !me.is_empty() {
                    text = text.replace(&format!("<@{me}>"), "");
                }
            }
            _ => return None,
        }
        // A thread is a session of its own; a mention in a channel starts one (the answer goes
        // into the thread under it), as people talk to a bot on Slack.
        let thread = match (e["thread_ts"].as_str(), e["type"].as_str()) {
            (Some(t), _) => Some(t.to_owned()),
            (None, Some("app_mention")) => e["ts"].as_str().map(str::to_owned),
            _ => None,
        };
        let chat = chat_key(&text_of(&e["channel"]), thread.as_deref());
        Some(Incoming::Message { chat, user, text: text.trim().to_owned() })
    }

    fn press(seen: &mut Seen, payload: &Value) -> Option<Incoming> {
        if payload["type"] != "block_actions" {
            return None;
        }
        let action = &payload["actions"][0];
        let user = text_of(&payload["user"]["id"]);
        if !seen.first(&format!("{user}@{}", text_of(&action["action_ts"]))) {
            return None;
        }
        let channel = match text_of(&payload["channel"]["id"]) {
            c if c.is_empty() => text_of(&payload["container"]["channel_id"]),
            c => c,
        };
        let thread =
            payload["container"]["thread_ts"].as_str().or_else(|| payload["message"]["thread_ts"].as_str());
        let chat = chat_key(&channel, thread);
        Some(Incoming::Button {
            press: format!("{chat}\t{user}"),
            chat,
            user,
            data: text_of(&action["value"]),
        })
    }
}

#[async_trait::async_trait]
impl Platform for Slack {
    fn name(&self) -> &str {
        "slack"
    }

    fn message_limit(&self) -> usize {
        3500
    }

    fn file_limit(&self) -> u64 {
        100 * 1024 * 1024
    }

    async fn check(&self) -> Result<String, PlatformError> {
        let me = self.api("auth.test", &self.bot_token, json!({}), None).await?;
        *lock(&self.me) = text_of(&me["user_id"]);
        // The app-level token too: Socket Mode cannot start without it.
        self.api("apps.connections.open", &self.app_token, json!({}), None).await?;
        Ok(format!("@{} on Slack ({})", text_of(&me["user"]), text_of(&me["team"])))
    }

    async fn poll(&self) -> Result<Vec<Incoming>, PlatformError> {
        let mut s = self.socket.lock().await;
        loop {
            let Some(ws) = s.ws.as_mut() else {
                let ws = self.open().await?;
                s.ws = Some(ws);
                continue;
            };
            // Slack pings every few seconds; a silent socket is a dead one.
            let frame = match tokio::time::timeout(Duration::from_secs(120), ws.next()).await {
                Ok(Some(Ok(Message::Text(t)))) => t,
                Ok(Some(Ok(Message::Close(_)))) | Ok(None) => {
                    s.ws = None;
                    return Err(PlatformError::Other(
                        "slack socket mode: the connection closed; reconnecting".into(),
                    ));
                }
                Ok(Some(Ok(_))) => continue,
                Ok(Some(Err(e))) => {
                    s.ws = None;
                    return Err(PlatformError::Other(format!("slack socket mode: {e}; reconnecting")));
                }
                Err(_) => {
                    s.ws = None;
                    return Err(PlatformError::Other(
                        "slack socket mode: silent for two minutes; reconnecting".into(),
                    ));
                }
            };
            let v: Value = serde_json::from_str(&frame).unwrap_or(Value::Null);
            if let Some(id) = v["envelope_id"].as_str() {
                // Acknowledged at once: Slack retries what is not acknowledged within 3 s.
                if ws.send(Message::text(json!({"envelope_id": id}).to_string())).await.is_err() {
                    s.ws = None;
                    return Err(PlatformError::Other(
                        "slack socket mode: cannot acknowledge; reconnecting".into(),
                    ));
                }
            }
            let incoming = match v["type"].as_str() {
                Some("disconnect") => {
                    // Slack is about to close this socket: open a new one now.
                    s.ws = None;
                    None
                }
                Some("events_api") => self.event(&mut s.seen, &v["payload"]),
                Some("interactive") => Self::press(&mut s.seen, &v["payload"]),
                _ => None,
            };
            if let Some(i) = incoming {
                return Ok(vec![i]);
            }
        }
    }

    async fn send(
        &self,
        chat: &str,
        text: &str,
        buttons: &[(String, String)],
    ) -> Result<Sent, PlatformError> {
        let (channel, thread) = split_chat(chat);
        let mut body =
            json!({"channel": channel, "text": escape(text), "unfurl_links": false, "unfurl_media": false});
        if let Some(t) = thread {
            body["thread_ts"] = json!(t);
        }
        if !buttons.is_empty() {
            let shown: String = text.chars().take(2900).collect();
            let elements: Vec<Value> = buttons
                .iter()
                .enumerate()
                .map(|(i, (label, data))| {
                    let mut b = json!({"type": "button", "text": {"type": "plain_text", "text": label},
                        "value": data, "action_id": format!("octo-{i}")});
                    if i == 0 {
                        b["style"] = json!("primary");
                    }
                    b
                })
                .collect();
            body["blocks"] = json!([
                {"type": "section", "text": {"type": "plain_text", "text": shown}},
                {"type": "actions", "elements": elements}
            ]);
        }
        let m = self.post_message(&body).await?;
        let channel = match text_of(&m["channel"]) {
            c if c.is_empty() => channel.to_owned(),
            c => c,
        };
        Ok(Sent { chat: channel, id: text_of(&m["ts"]) })
    }

    async fn edit(&self, sent: &Sent, text: &str) -> Result<(), PlatformError> {
        let body = json!({"channel": sent.chat, "ts": sent.id, "text": escape(text), "blocks": []});
        self.api("chat.update", &self.bot_token, body, None).await.map(|_| ())
    }

    async fn acknowledge(&self, press: &str, note: &str) -> Result<(), PlatformError> {
        let (chat, user) = press.split_once('\t').unwrap_or((press, ""));
        let (channel, thread) = split_chat(chat);
        let mut body = json!({"channel": channel, "user": user, "text": escape(note)});
        if let Some(t) = thread {
            body["thread_ts"] = json!(t);
        }
        self.api("chat.postEphemeral", &self.bot_token, body, None).await.map(|_| ())
    }

    async fn send_file(&self, chat: &str, name: &str, bytes: Vec<u8>) -> Result<(), PlatformError> {
        let form = [("filename", name.to_owned()), ("length", bytes.len().to_string())];
        let slot = self.api("files.getUploadURLExternal", &self.bot_token, Value::Null, Some(&form)).await?;
        let (url, id) = (text_of(&slot["upload_url"]), text_of(&slot["file_id"]));
        let make = || {
            let part = reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_owned());
            self.client.post(&url).multipart(reqwest::multipart::Form::new().part("file", part))
        };
        let a = http::call_within("file upload", http::UPLOAD_TIMEOUT, make, |_, _| false).await?;
        if !(200..300).contains(&a.status) {
            return Err(failure("file upload", a.status, "the upload was refused"));
        }
        let (channel, thread) = split_chat(chat);
        let mut body = json!({"files": [{"id": id, "title": name}], "channel_id": channel});
        if let Some(t) = thread {
            body["thread_ts"] = json!(t);
        }
        self.api("files.completeUploadExternal", &self.bot_token, body, None).await.map(|_| ())
    }
}

/// The bridge's chat for a channel, or for a thread in it (`C123 1700000000.000100`).
fn chat_key(channel: &str, thread: Option<&str>) -> String {
    match thread {
        Some(t) if !t.is_empty() => format!("{channel} {t}"),
        _ => channel.to_owned(),
    }
}

/// A chat's channel and thread.
fn split_chat(chat: &str) -> (&str, Option<&str>) {
    match chat.split_once(' ') {
        Some((c, t)) => (c, Some(t)),
        None => (chat, None),
    }
}
