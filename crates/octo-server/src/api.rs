//! The JSON API under `/api/`, and live events over SSE and WebSocket.

use crate::hub::{Entry, HubError, Numbered};
use crate::state::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use octo_app::{Mode, SessionOptions, State as RunState};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/login", get(crate::auth::login))
        .route("/api/openapi.json", get(openapi))
        .route("/api/sessions", get(list).post(create))
        .route("/api/sessions/{id}", get(status).delete(remove))
        .route("/api/sessions/{id}/prompt", post(prompt))
        .route("/api/sessions/{id}/abort", post(abort))
        .route("/api/sessions/{id}/approvals/{approval}", post(approve))
        .route("/api/sessions/{id}/questions/{question}", post(answer))
        .route("/api/sessions/{id}/model", put(model))
        .route("/api/sessions/{id}/mode", put(mode))
        .route("/api/sessions/{id}/command", post(command))
        .route("/api/sessions/{id}/history", get(history))
        .route("/api/sessions/{id}/events", get(events))
        .route("/api/sessions/{id}/ws", get(websocket))
}

/// An error as the API answers it: a status and `{"error": "..."}`.
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

fn err(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError(status, message.into())
}

/// A JSON body whose errors are 400s naming what was wrong (413 when too large).
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Self(v)),
            Err(e) => {
                let status = match e.status() {
                    StatusCode::PAYLOAD_TOO_LARGE => StatusCode::PAYLOAD_TOO_LARGE,
                    StatusCode::UNSUPPORTED_MEDIA_TYPE => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    _ => StatusCode::BAD_REQUEST,
                };
                let text = match &e {
                    JsonRejection::JsonDataError(d) => format!("invalid body: {}", d.body_text()),
                    JsonRejection::JsonSyntaxError(d) => format!("malformed JSON: {}", d.body_text()),
                    other => other.body_text(),
                };
                Err(err(status, text))
            }
        }
    }
}

fn entry(state: &AppState, id: &str) -> Result<Arc<Entry>, ApiError> {
    state.hub.get(id).ok_or_else(|| err(StatusCode::NOT_FOUND, format!("no session `{id}`")))
}

fn summary(e: &Entry) -> Value {
    let s = e.session.status();
    json!({
        "id": e.id,
        "workspace": e.workspace,
        "model": s.model,
        "mode": s.mode.to_string(),
        "running": s.state == RunState::Running,
        "turns": s.turns,
        "saved_as": e.session.session_id(),
        "last_event": e.last_event(),
    })
}

async fn list(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(Value::Array(state.hub.list().iter().map(|e| summary(e)).collect()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Create {
    workspace: Option<PathBuf>,
    resume: Option<String>,
    model: Option<String>,
    mode: Option<String>,
}

/// The workspace asked for, if it lies under a root (the first root by default).
fn workspace(state: &AppState, asked: Option<PathBuf>) -> Result<PathBuf, ApiError> {
    let roots: Vec<PathBuf> = state.roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).collect();
    let Some(asked) = asked else {
        return roots
            .first()
            .cloned()
            .ok_or_else(|| err(StatusCode::FORBIDDEN, "no workspace root is configured"));
    };
    let real = std::fs::canonicalize(&asked)
        .map_err(|e| err(StatusCode::BAD_REQUEST, format!("workspace {}: {e}", asked.display())))?;
    if !real.is_dir() {
        return Err(err(
            StatusCode::BAD_REQUEST,
            format!("workspace {} is not a directory", asked.display()),
        ));
    }
    if roots.iter().any(|r| real.starts_with(r)) {
        Ok(real)
    } else {
        Err(err(
            StatusCode::FORBIDDEN,
            format!("{} is outside the workspaces this server may open", asked.display()),
        ))
    }
}

async fn create(State(state): State<Arc<AppState>>, Body(c): Body<Create>) -> Result<Response, ApiError> {
    let ws = workspace(&state, c.workspace)?;
    let mode = match c.mode.as_deref() {
        Some(m) => Some(m.parse::<Mode>().map_err(|e| err(StatusCode::BAD_REQUEST, e.to_string()))?),
        None => None,
    };
    let options = SessionOptions { model: c.model, mode, save: true, ..SessionOptions::default() };
    let st = Arc::clone(&state);
    // Starting reads files and may load a local model: off the async threads.
    let made = tokio::task::spawn_blocking(move || {
        let handle = tokio::runtime::Handle::current();
        let _guard = handle.enter();
        st.hub.create(ws, c.resume, options)
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    match made {
        Ok(e) => {
            let mut body = summary(&e);
            body["notes"] = json!(e.session.notes());
            Ok((StatusCode::CREATED, Json(body)).into_response())
        }
        Err(HubError::Full(n)) => {
            Err(err(StatusCode::TOO_MANY_REQUESTS, format!("too many sessions ({n}); delete some first")))
        }
        Err(HubError::Launch(e)) if e.is_usage() || e.is_unconfigured() => {
            Err(err(StatusCode::BAD_REQUEST, e.to_string()))
        }
        Err(HubError::Launch(e)) if e.is_in_use() => Err(err(StatusCode::CONFLICT, e.to_string())),
        Err(e) => Err(err(StatusCode::BAD_REQUEST, e.to_string())),
    }
}

async fn status(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let s = e.session.status();
    let mut body = summary(&e);
    body["usage"] = json!(s.usage);
    body["cost_usd"] = json!(s.cost_usd);
    body["context_tokens"] = json!(s.context_tokens);
    body["context_window"] = json!(s.context_window);
    body["queued"] = json!(s.queued);
    body["sandbox"] = json!(s.sandbox);
    body["todos"] = json!(e.session.todos());
    body["notes"] = json!(e.session.notes());
    Ok(Json(body))
}

async fn remove(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    if state.hub.remove(&id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(err(StatusCode::NOT_FOUND, format!("no session `{id}`")))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Prompt {
    text: String,
}

async fn prompt(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(p): Body<Prompt>,
) -> Result<Response, ApiError> {
    let e = entry(&state, &id)?;
    if p.text.trim().is_empty() {
        return Err(err(StatusCode::BAD_REQUEST, "invalid body: `text` is empty"));
    }
    e.session.prompt(p.text).map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
    Ok((StatusCode::ACCEPTED, Json(json!({"queued": e.session.status().queued}))).into_response())
}

async fn abort(State(state): State<Arc<AppState>>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    entry(&state, &id)?.session.abort();
    Ok(StatusCode::ACCEPTED)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    decision: String,
    message: Option<String>,
}

async fn approve(
    State(state): State<Arc<AppState>>,
    Path((id, approval)): Path<(String, String)>,
    Body(d): Body<Decision>,
) -> Result<StatusCode, ApiError> {
    let e = entry(&state, &id)?;
    let done = match d.decision.as_str() {
        "allow" => e.session.approve(&approval),
        "always" => e.session.approve_always(&approval),
        "deny" => e.session.reject(&approval, d.message),
        "deny_always" => e.session.reject_always(&approval, d.message),
        other => {
            return Err(err(
                StatusCode::BAD_REQUEST,
                format!("invalid body: `decision` must be allow, always, deny or deny_always, not `{other}`"),
            ))
        }
    };
    done.map(|()| StatusCode::NO_CONTENT).map_err(|_| {
        err(
            StatusCode::CONFLICT,
            format!("no approval `{approval}` is waiting (unknown, or already answered)"),
        )
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    answer: String,
}

async fn answer(
    State(state): State<Arc<AppState>>,
    Path((id, question)): Path<(String, String)>,
    Body(a): Body<Answer>,
) -> Result<StatusCode, ApiError> {
    entry(&state, &id)?.session.answer(&question, &a.answer).map(|()| StatusCode::NO_CONTENT).map_err(|_| {
        err(
            StatusCode::CONFLICT,
            format!("no question `{question}` is waiting (unknown, or already answered)"),
        )
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelChoice {
    model: String,
}

async fn model(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(m): Body<ModelChoice>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let launcher = state.hub.launcher();
    let label = e
        .session
        .set_model(&m.model, launcher.credentials(), launcher.env())
        .map_err(|x| err(StatusCode::BAD_REQUEST, x.to_string()))?;
    Ok(Json(json!({"model": label})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeChoice {
    mode: String,
}

async fn mode(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(m): Body<ModeChoice>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let mode = m.mode.parse::<Mode>().map_err(|x| err(StatusCode::BAD_REQUEST, x.to_string()))?;
    e.session.set_mode(mode);
    Ok(Json(json!({"mode": mode.to_string()})))
}

/// The shared commands the server runs: those whose reply is complete in itself (the ones that
/// need a yes before they change anything, or the terminal, are not offered here yet).
const OFFERED: &[&str] = &[
    "/help",
    "/status",
    "/model",
    "/mode",
    "/plan",
    "/build",
    "/permissions",
    "/tools",
    "/mcp",
    "/skills",
    "/remember",
    "/agents",
    "/hooks",
    "/todos",
    "/cost",
    "/compact",
    "/clear",
    "/new",
    "/stop",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandLine {
    line: String,
}

/// `POST /api/sessions/{id}/command {"line": "/status"}`: a shared command run on the session;
/// the reply's kind and its lines.
async fn command(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(c): Body<CommandLine>,
) -> Result<Json<Value>, ApiError> {
    use octo_app::commands::{parse, Parsed};
    let e = entry(&state, &id)?;
    let cmd = match parse(&c.line) {
        Parsed::Command(cmd) if OFFERED.contains(&cmd.name()) => cmd,
        Parsed::Command(cmd) => {
            return Err(err(StatusCode::BAD_REQUEST, format!("{} is not offered over the API", cmd.name())))
        }
        Parsed::Invalid(why) => return Err(err(StatusCode::BAD_REQUEST, why)),
        Parsed::Other(word, _) => {
            return Err(err(StatusCode::NOT_FOUND, format!("{word} is not a command; /help lists them")))
        }
        Parsed::Message => {
            return Err(err(StatusCode::BAD_REQUEST, "a command starts with `/`; send prompts to /prompt"))
        }
    };
    let name = cmd.name();
    let reply = e
        .session
        .command(state.hub.launcher(), cmd)
        .await
        .map_err(|x| err(StatusCode::BAD_REQUEST, x.to_string()))?;
    let lines = match &reply {
        octo_app::commands::Reply::Help(specs) => specs
            .iter()
            .filter(|c| OFFERED.contains(&c.name))
            .map(|c| format!("{} — {}", c.usage, c.about))
            .collect(),
        other => other.lines(),
    };
    Ok(Json(json!({"command": name, "kind": reply.kind(), "lines": lines})))
}

/// The committed conversation, at once even while a turn runs, with the number of the last
/// event it includes (follow the events after it).
async fn history(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (messages, last_event) = entry(&state, &id)?.history();
    Ok(Json(json!({"messages": messages, "last_event": last_event})))
}

#[derive(Deserialize)]
struct Since {
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
    let entry = Arc::clone(e);
    let live = futures_util::stream::unfold(
        (rx, last, std::collections::VecDeque::<Numbered>::new()),
        move |(mut rx, last, mut queue)| {
            let entry = Arc::clone(&entry);
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
                            let (past, missed, fresh) = entry.follow(last);
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

/// The event telling a client it missed `n` events that are no longer kept.
fn lagged(n: u64) -> Arc<str> {
    json!({
        "type": "lagged",
        "missed": n,
        "message": format!("{n} events were missed and are no longer kept: fetch the history again (GET /api/sessions/{{id}}/history)")
    })
    .to_string()
    .into()
}

async fn events(
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

async fn websocket(
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

async fn openapi() -> Json<Value> {
    Json(crate::web::openapi())
}
