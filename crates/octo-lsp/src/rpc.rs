//! JSON-RPC 2.0 over a language server's stdio: `Content-Length` framed messages, requests
//! matched to their answers by id, notifications handed to a callback, and the few requests a
//! server sends its client answered so the server never waits on us.

use crate::error::LspError;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

/// The largest message read from a server (a workspace's symbols can be large; more is garbage).
pub(crate) const MAX_MESSAGE: usize = 64 << 20;

/// The longest header line accepted.
const MAX_HEADER: usize = 8 * 1024;

/// Reads one framed message; `None` at the end of the stream.
pub(crate) async fn read_message<R: AsyncBufRead + Unpin>(r: &mut R) -> Result<Option<Value>, LspError> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        let n = (&mut *r).take(MAX_HEADER as u64).read_line(&mut line).await.map_err(LspError::io)?;
        if n == 0 {
            return if length.is_none() {
                Ok(None)
            } else {
                Err(LspError::Protocol("the stream ended inside a header".into()))
            };
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(LspError::Protocol(format!("not a header: {}", clip(header))));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| LspError::Protocol(format!("a bad Content-Length: {}", clip(value))))?;
            if n > MAX_MESSAGE {
                return Err(LspError::Protocol(format!(
                    "a message of {n} bytes, over the {MAX_MESSAGE} limit"
                )));
            }
            length = Some(n);
        }
    }
    let mut body = vec![0; length.unwrap_or(0)];
    r.read_exact(&mut body).await.map_err(LspError::io)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| LspError::Protocol(format!("a message that is not JSON: {e}")))
}

/// `value` framed for the wire.
pub(crate) fn frame(value: &Value) -> Vec<u8> {
    let body = value.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

type Pending = Mutex<HashMap<i64, oneshot::Sender<Result<Value, LspError>>>>;

/// What the reader does with a server's notification.
pub(crate) type OnNotification = Box<dyn Fn(&str, Value) + Send + Sync>;

/// A connection to one server.
pub(crate) struct Connection {
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
    pending: Arc<Pending>,
    next_id: AtomicI64,
    closed: Arc<AtomicBool>,
    /// Why the reader stopped, once it has.
    ended: Arc<Mutex<Option<(String, std::time::Instant)>>>,
}

impl Connection {
    /// Starts reading `input` in the background; `writer` carries our messages.
    pub(crate) fn start(
        input: impl tokio::io::AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        on_notification: OnNotification,
        settings: Value,
    ) -> Arc<Self> {
        let conn = Arc::new(Self {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            pending: Arc::default(),
            next_id: AtomicI64::new(1),
            closed: Arc::default(),
            ended: Arc::default(),
        });
        let weak = Arc::downgrade(&conn);
        let (pending, closed, ended) =
            (Arc::clone(&conn.pending), Arc::clone(&conn.closed), Arc::clone(&conn.ended));
        tokio::spawn(async move {
            let mut input = BufReader::new(input);
            let why = loop {
                match read_message(&mut input).await {
                    Ok(Some(msg)) => {
                        if let Some(reply) = dispatch(msg, &pending, &on_notification, &settings) {
                            let Some(conn) = weak.upgrade() else { break "closed".to_owned() };
                            let _ = conn.write(&reply).await;
                        }
                    }
                    Ok(None) => break "the server closed its output".to_owned(),
                    Err(e) => break e.to_string(),
                }
            };
            closed.store(true, Ordering::SeqCst);
            *ended.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                Some((why.clone(), std::time::Instant::now()));
            let waiting: Vec<_> =
                pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain().collect();
            for (_, tx) in waiting {
                let _ = tx.send(Err(LspError::Closed(why.clone())));
            }
        });
        conn
    }

    /// Whether the server's output has ended (it exited or sent garbage).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Why the connection ended, if it has.
    pub(crate) fn ended(&self) -> Option<String> {
        self.ended
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(|(why, _)| why.clone())
    }

    /// When the connection ended, if it has.
    pub(crate) fn ended_at(&self) -> Option<std::time::Instant> {
        self.ended.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref().map(|(_, at)| *at)
    }

    async fn write(&self, value: &Value) -> Result<(), LspError> {
        let mut w = self.writer.lock().await;
        w.write_all(&frame(value)).await.map_err(LspError::io)?;
        w.flush().await.map_err(LspError::io)
    }

    /// Sends a notification.
    pub(crate) async fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        if self.is_closed() {
            return Err(LspError::Closed(self.ended().unwrap_or_default()));
        }
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// Sends a request and waits at most `timeout` for its answer.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, LspError> {
        if self.is_closed() {
            return Err(LspError::Closed(self.ended().unwrap_or_default()));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, tx);
        let sent = self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let answer = match sent {
            Ok(()) => tokio::time::timeout(timeout, rx).await,
            Err(e) => Ok(Ok(Err(e))),
        };
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id);
        match answer {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(LspError::Closed(self.ended().unwrap_or_default())),
            Err(_) => {
                let _ = self.notify("$/cancelRequest", json!({"id": id})).await;
                Err(LspError::Timeout { what: method.to_owned(), after: timeout })
            }
        }
    }
}

/// Handles one message from the server; returns the reply to a request it made of us.
fn dispatch(
    msg: Value,
    pending: &Pending,
    on_notification: &OnNotification,
    settings: &Value,
) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
    let id = msg.get("id").cloned().filter(|id| !id.is_null());
    match (method, id) {
        (None, Some(id)) => {
            let tx = id
                .as_i64()
                .and_then(|id| pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id));
            if let Some(tx) = tx {
                let result = match msg.get("error") {
                    Some(e) => Err(LspError::Server(
                        e.get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("an error without a message")
                            .to_owned(),
                    )),
                    None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(result);
            }
            None
        }
        (Some(method), Some(id)) => Some(answer_server_request(&method, msg.get("params"), id, settings)),
        (Some(method), None) => {
            on_notification(&method, msg.get("params").cloned().unwrap_or(Value::Null));
            None
        }
        (None, None) => None,
    }
}

/// Our answer to a request the server made: the settings it asks for come from its
/// configured `settings` (by dotted section; `null` where there are none), what it registers is
/// accepted, an edit it wants applied is not applied.
fn answer_server_request(method: &str, params: Option<&Value>, id: Value, settings: &Value) -> Value {
    let result = match method {
        "workspace/configuration" => {
            let items = params.and_then(|p| p.get("items")).and_then(Value::as_array);
            let section = |item: &Value| match item.get("section").and_then(Value::as_str) {
                Some(s) => {
                    s.split('.').try_fold(settings, |v, key| v.get(key)).cloned().unwrap_or(Value::Null)
                }
                None => settings.clone(),
            };
            Value::Array(items.map(|items| items.iter().map(section).collect()).unwrap_or_default())
        }
        "workspace/applyEdit" => {
            json!({"applied": false, "failureReason": "octo applies no edits from a language server"})
        }
        "workspace/workspaceFolders" => Value::Null,
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh" => Value::Null,
        _ => {
            return json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("octo does not handle {method}")}});
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(bytes: &[u8]) -> Result<Option<Value>, LspError> {
        let mut r = BufReader::new(bytes);
        read_message(&mut r).await
    }

    #[tokio::test]
    async fn frames_round_trip_and_bad_frames_are_errors() {
        let v = json!({"jsonrpc": "2.0", "id": 1, "result": "é"});
        assert_eq!(read(&frame(&v)).await.unwrap(), Some(v));
        let with_type =
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(read(with_type).await.unwrap(), Some(json!({})));
        assert_eq!(read(b"").await.unwrap(), None);
        for bad in [
            &b"hello world\r\n\r\n"[..],
            b"Content-Length: x\r\n\r\n",
            b"Content-Length: 99999999999\r\n\r\n",
            b"Content-Length: 5\r\n\r\n{}",
            b"Content-Length: 2\r\n\r\nno",
        ] {
            assert!(read(bad).await.is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn server_requests_get_an_answer() {
        let none = Value::Null;
        let r = answer_server_request(
            "workspace/configuration",
            Some(&json!({"items": [{}, {}]})),
            json!(7),
            &none,
        );
        assert_eq!(r["result"], json!([null, null]));
        let settings = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
        let items = json!({"items": [{"section": "python.analysis"}, {"section": "python.nope"}, {}]});
        let r = answer_server_request("workspace/configuration", Some(&items), json!(8), &settings);
        assert_eq!(r["result"], json!([{"typeCheckingMode": "strict"}, null, settings]));
        assert_eq!(
            answer_server_request("client/registerCapability", None, json!(1), &none)["result"],
            Value::Null
        );
        assert_eq!(
            answer_server_request("workspace/applyEdit", None, json!(1), &none)["result"]["applied"],
            false
        );
        assert_eq!(answer_server_request("x/unknown", None, json!(2), &none)["error"]["code"], -32601);
    }
}
