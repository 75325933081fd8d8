//! Telegram, through the Bot API: long polling (`getUpdates` with an offset, so nothing is lost
//! or repeated across reconnects), `sendMessage`, `editMessageText`, inline keyboards and
//! `answerCallbackQuery`. A 429 waits the `retry_after` it names, once; the API base is
//! configurable (a self-hosted Bot API server, a proxy). The offset is also kept in a file
//! ([`Telegram::with_offset_file`]), written before a batch is handed on: Telegram forgets an
//! update only when a later poll acknowledges it, so a bridge that died mid-batch would otherwise
//! get the batch again on restart and answer it as a new turn.

use crate::platform::{text_of, Incoming, Platform, PlatformError, Sent};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicI64, Ordering};

/// Telegram's own address.
pub const API_BASE: &str = "https://api.telegram.org";

/// A Telegram bot.
pub struct Telegram {
    client: reqwest::Client,
    base: String,
    /// The next update to ask for.
    offset: AtomicI64,
    /// Seconds a poll waits for updates.
    poll_timeout: u64,
    seen: std::sync::Mutex<crate::platform::Seen>,
    /// Where the offset is kept across restarts.
    offset_file: Option<std::path::PathBuf>,
}

/// In a group, `@name` in what the bot sends would notify that member: a word joiner after
/// the `@` keeps it text.
fn inert(chat: &str, text: &str) -> String {
    if chat.starts_with('-') {
        text.replace('@', "@\u{2060}")
    } else {
        text.to_owned()
    }
}

impl Telegram {
    /// The bot with `token`, at `base` (default [`API_BASE`]).
    pub fn new(client: reqwest::Client, token: &str, base: Option<&str>, poll_timeout: u64) -> Self {
        let base = format!("{}/bot{token}", base.unwrap_or(API_BASE).trim_end_matches('/'));
        Self {
            client,
            base,
            offset: AtomicI64::new(0),
            poll_timeout,
            seen: std::sync::Mutex::default(),
            offset_file: None,
        }
    }

    /// Keeps the offset in `path` (read now, written before each batch is handed on), so a
    /// restart neither replays a batch nor loses one.
    pub fn with_offset_file(mut self, path: std::path::PathBuf) -> Self {
        let kept = std::fs::read_to_string(&path).ok().and_then(|t| t.trim().parse::<i64>().ok());
        if let Some(n) = kept {
            self.offset.store(n, Ordering::SeqCst);
        }
        self.offset_file = Some(path);
        self
    }

    /// Writes the offset (whole or not at all). A failure is reported: it risks a replay.
    fn keep_offset(&self) -> Result<(), PlatformError> {
        let Some(path) = &self.offset_file else { return Ok(()) };
        let tmp = path.with_extension("tmp");
        let n = self.offset.load(Ordering::SeqCst);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&tmp, n.to_string()))
            .and_then(|()| std::fs::rename(&tmp, path));
        written.map_err(|e| {
            PlatformError::Other(format!("could not keep the update offset in {}: {e}", path.display()))
        })
    }

    async fn call(&self, method: &str, body: Value) -> Result<Value, PlatformError> {
        let url = format!("{}/{method}", self.base);
        let a = crate::http::call(method, || self.client.post(&url).json(&body), |_, _| false).await?;
        if a.body["ok"] == true {
            return Ok(a.body["result"].clone());
        }
        let what = a.body["description"].as_str().unwrap_or("no description");
        match a.status {
            401 | 404 if method == "getMe" || method == "getUpdates" => {
                Err(PlatformError::Unauthorized(format!("{method}: {what}")))
            }
            status => Err(PlatformError::Other(format!("{method}: HTTP {status}: {what}"))),
        }
    }
}

#[async_trait::async_trait]
impl Platform for Telegram {
    fn name(&self) -> &str {
        "telegram"
    }

    fn message_limit(&self) -> usize {
        4096
    }

    fn file_limit(&self) -> u64 {
        50 * 1024 * 1024
    }

    async fn check(&self) -> Result<String, PlatformError> {
        let me = self.call("getMe", json!({})).await?;
        Ok(format!("@{} on Telegram", me["username"].as_str().unwrap_or("bot")))
    }

    async fn poll(&self) -> Result<Vec<Incoming>, PlatformError> {
        let body = json!({
            "offset": self.offset.load(Ordering::SeqCst),
            "timeout": self.poll_timeout,
            "allowed_updates": ["message", "callback_query"]
        });
        let updates = self.call("getUpdates", body).await?;
        let before = self.offset.load(Ordering::SeqCst);
        let mut out = Vec::new();
        for u in updates.as_array().into_iter().flatten() {
            if let Some(n) = u["update_id"].as_i64() {
                // Acknowledged by the next poll: a drop before it gets the same updates again.
                self.offset.fetch_max(n + 1, Ordering::SeqCst);
                let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if !seen.first(&n.to_string()) {
                    continue;
                }
            }
            if let Some(m) = u.get("message") {
                if let Some(text) = m["text"].as_str() {
                    out.push(Incoming::Message {
                        chat: text_of(&m["chat"]["id"]),
                        user: text_of(&m["from"]["id"]),
                        text: text.to_owned(),
                    });
                }
            } else if let Some(q) = u.get("callback_query") {
                out.push(Incoming::Button {
                    chat: text_of(&q["message"]["chat"]["id"]),
                    user: text_of(&q["from"]["id"]),
                    data: q["data"].as_str().unwrap_or("").to_owned(),
                    press: text_of(&q["id"]),
                });
            }
        }
        if self.offset.load(Ordering::SeqCst) != before {
            // Not kept means a restart may see this batch again; losing it would be worse.
            if let Err(e) = self.keep_offset() {
                eprintln!("octo channels: telegram: {e}");
            }
        }
        Ok(out)
    }

    async fn send(
        &self,
        chat: &str,
        text: &str,
        buttons: &[(String, String)],
    ) -> Result<Sent, PlatformError> {
        let mut body = json!({"chat_id": chat, "text": inert(chat, text)});
        if !buttons.is_empty() {
            let row: Vec<Value> =
                buttons.iter().map(|(label, data)| json!({"text": label, "callback_data": data})).collect();
            body["reply_markup"] = json!({"inline_keyboard": [row]});
        }
        let m = self.call("sendMessage", body).await?;
        Ok(Sent { chat: chat.to_owned(), id: text_of(&m["message_id"]) })
    }

    async fn edit(&self, sent: &Sent, text: &str) -> Result<(), PlatformError> {
        let body = json!({"chat_id": sent.chat, "message_id": sent.id.parse::<i64>().unwrap_or(0), "text": inert(&sent.chat, text)});
        match self.call("editMessageText", body).await {
            // Editing to the same text is an error on Telegram; nothing changed, nothing lost.
            Err(PlatformError::Other(e)) if e.contains("not modified") => Ok(()),
            other => other.map(|_| ()),
        }
    }

    async fn acknowledge(&self, press: &str, note: &str) -> Result<(), PlatformError> {
        self.call("answerCallbackQuery", json!({"callback_query_id": press, "text": note})).await.map(|_| ())
    }

    async fn send_file(&self, chat: &str, name: &str, bytes: Vec<u8>) -> Result<(), PlatformError> {
        let url = format!("{}/sendDocument", self.base);
        let make = || {
            let part = reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_owned());
            let form =
                reqwest::multipart::Form::new().text("chat_id", chat.to_owned()).part("document", part);
            self.client.post(&url).multipart(form)
        };
        let a =
            crate::http::call_within("sendDocument", crate::http::UPLOAD_TIMEOUT, make, |_, _| false).await?;
        if a.body["ok"] == true {
            return Ok(());
        }
        let what = a.body["description"].as_str().unwrap_or("no description");
        Err(PlatformError::Other(format!("sendDocument: HTTP {}: {what}", a.status)))
    }
}
