//! Live events over SSE and WebSocket, each numbered so a client that reconnects gets what it
//! missed.

use super::error::{entry, ApiError};
use crate::hub::{lagged, Entry, Numbered};
use crate::state::AppState;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
pub struct Since {
    since: Option<u64>,
}

/// Where a client resumes: `Last-Event-ID`, else `?since=`, else the start.
fn since(headers: &HeaderMap, q: &Since) -> u64 {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .or(q.since)
        .unwrap_or(0)
}

/// The events after `from`, then the live ones, each once and in order. A client that reads
/// more slowly than events come is caught up from the kept events; if some of what it missed
/// is no longer kept, it gets a `lagged` event saying how many and to fetch the history again.
fn numbered(e: &Arc<Entry>, from: u64) -> impl futures_util::Stream<Item = Numbered> + Send + 'static {
    let (past, missed, rx) = e.follow(from);
    let mut head: Vec<Numbered> = past;
    if missed {
        head.insert(0, (from, lagged(head.first().map_or(0, |f| f.0.saturating_sub(from + 1)))));
    }
    let last = head.last().map_or(from, |e| e.0);
    // Followers do not keep a session alive: once it is stopped, its stream ends.
    let entry = Arc::downgrade(e);
    let live = futures_util::stream::unfold(
        (rx, last, std::collections::VecDeque::<Numbered>::new()),
        move |(mut rx, last, mut queue)| {
            let entry = entry.clone();
            async move {
                loop {
                    if let Some(item) = queue.pop_front() {
                        let n = item.0;
                        return Some((item, (rx, n.max(last), queue)));
                    }
                    match rx.recv().await {
                        Ok(item) if item.0 > last => return Some((item.clone(), (rx, item.0, queue))),
                        Ok(_) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                            // Catch up from what the session keeps, on a fresh receiver.
                            let (past, missed, fresh) = entry.upgrade()?.follow(last);
                            rx = fresh;
                            if missed {
                                let gap = past.first().map_or(0, |f| f.0.saturating_sub(last + 1));
                                queue.push_back((last, lagged(gap)));
                            }
                            queue.extend(past);
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
                    }
                }
            }
        },
    );
    futures_util::StreamExt::chain(futures_util::stream::iter(head), live)
}

pub async fn events(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(q): Query<Since>,
) -> Result<impl IntoResponse, ApiError> {
    let e = entry(&state, &id)?;
    let stream = futures_util::StreamExt::map(numbered(&e, since(&headers, &q)), |(seq, json)| {
        Ok::<_, std::convert::Infallible>(Event::default().id(seq.to_string()).data(&*json))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

pub async fn websocket(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(q): Query<Since>,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let e = entry(&state, &id)?;
    let from = since(&headers, &q);
    Ok(upgrade.on_upgrade(move |socket| pump_ws(socket, e, from)))
}

async fn pump_ws(mut socket: WebSocket, e: Arc<Entry>, from: u64) {
    use futures_util::StreamExt;
    let mut stream = std::pin::pin!(numbered(&e, from));
    drop(e);
    loop {
        tokio::select! {
            item = stream.next() => {
                let Some((seq, json)) = item else { return };
                let text = format!("{{\"seq\":{seq},\"event\":{json}}}");
                if socket.send(WsMessage::Text(text.into())).await.is_err() {
                    return;
                }
            }
            msg = socket.recv() => match msg {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
