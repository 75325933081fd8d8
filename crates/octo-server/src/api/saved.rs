//! Saved sessions across the server's roots: the list (with titles, workspace, last activity,
//! whether open and running, and the files that cannot be read), rename, fork and delete.

use super::error::{blocking, err, ApiError, Body};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The most sessions one listing returns.
const MAX_LISTED: usize = 500;

#[derive(Deserialize)]
pub struct Search {
    q: Option<String>,
}

/// `GET /api/saved?q=`: the saved sessions whose workspace is under a root, newest first.
pub async fn list(
    State(state): State<Arc<AppState>>,
    Query(s): Query<Search>,
) -> Result<Json<Value>, ApiError> {
    let st = Arc::clone(&state);
    let (all, unreadable) = blocking(move || {
        let store = st.hub.launcher().sessions();
        (store.list(None), store.unreadable())
    })
    .await?;
    let all = all.map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let roots = state.real_roots();
    let q = s.q.unwrap_or_default().to_lowercase();
    let sessions: Vec<Value> = all
        .into_iter()
        .filter(|x| roots.iter().any(|r| x.cwd.starts_with(r)))
        .filter(|x| q.is_empty() || x.title.to_lowercase().contains(&q) || x.id.starts_with(&q))
        .take(MAX_LISTED)
        .map(|x| {
            let live = state.hub.by_saved(&x.id);
            json!({
                "id": x.id,
                "title": x.title,
                "workspace": x.cwd,
                "updated": x.updated,
                "turns": x.turns,
                "model": x.model,
                "open": live.as_ref().map(|l| l.id.clone()),
                "running": live.is_some_and(|l| l.session.status().state == octo_app::State::Running),
            })
        })
        .collect();
    let unreadable: Vec<Value> = unreadable
        .into_iter()
        .map(|id| json!({"id": id, "error": "this session file cannot be read (its first line is damaged)"}))
        .collect();
    Ok(Json(json!({"sessions": sessions, "unreadable": unreadable})))
}

/// Checks that the saved session `id` exists and belongs under a root.
fn belongs(state: &AppState, id: &str) -> Result<(), ApiError> {
    let loaded =
        state.hub.launcher().sessions().load(id).map_err(|e| err(StatusCode::NOT_FOUND, e.to_string()))?;
    let cwd = std::fs::canonicalize(&loaded.meta.cwd).unwrap_or(loaded.meta.cwd);
    if state.real_roots().iter().any(|r| cwd.starts_with(r)) {
        Ok(())
    } else {
        Err(err(
            StatusCode::FORBIDDEN,
            format!("session {id} belongs to a directory outside this server's roots"),
        ))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rename {
    title: String,
}

/// `PATCH /api/saved/{id} {"title"}`.
pub async fn rename(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(r): Body<Rename>,
) -> Result<Json<Value>, ApiError> {
    let title = r.title.trim().to_owned();
    if title.is_empty() {
        return Err(err(StatusCode::BAD_REQUEST, "invalid body: `title` is empty"));
    }
    belongs(&state, &id)?;
    match state.hub.by_saved(&id) {
        Some(live) => live
            .session
            .conversation()
            .rename(&title)
            .map_err(|e| err(StatusCode::CONFLICT, e.to_string()))?,
        None => state
            .hub
            .launcher()
            .sessions()
            .rename(&id, &title)
            .map_err(|e| err(StatusCode::CONFLICT, e.to_string()))?,
    }
    Ok(Json(json!({"id": id, "title": title})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fork {
    /// Messages kept (all when absent).
    at: Option<usize>,
}

/// `POST /api/saved/{id}/fork`: a new saved session with the conversation so far (or its first
/// `at` messages); the original is untouched.
pub async fn fork(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(f): Body<Fork>,
) -> Result<Json<Value>, ApiError> {
    belongs(&state, &id)?;
    let made = state
        .hub
        .launcher()
        .sessions()
        .fork(&id, f.at.unwrap_or(usize::MAX))
        .map_err(|e| err(StatusCode::CONFLICT, e.to_string()))?;
    Ok(Json(json!({"id": made})))
}

/// `DELETE /api/saved/{id}`: stops it if open here, then deletes its file.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    belongs(&state, &id)?;
    if let Some(live) = state.hub.by_saved(&id) {
        state.hub.remove(&live.id);
    }
    // A session just stopped lets go of its file as its task ends; the store waits for that.
    let st = Arc::clone(&state);
    let removed = blocking(move || st.hub.launcher().sessions().remove(&id)).await?;
    removed.map_err(|e| err(StatusCode::CONFLICT, e.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}
