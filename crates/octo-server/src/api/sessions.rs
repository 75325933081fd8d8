//! The server's live sessions: list, start (new or resumed, in a workspace under the roots),
//! status, stop.

use super::error::{blocking, entry, err, ApiError, Body};
use crate::hub::{Entry, HubError};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use octo_app::{Mode, SessionOptions, State as RunState};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;

fn summary(e: &Entry) -> Value {
    let s = e.session.status();
    json!({
        "id": e.id,
        "workspace": e.workspace,
        "model": s.model,
        "mode": s.mode.to_string(),
        "running": s.state == RunState::Running,
        "turns": s.turns,
        "saved_as": e.session.conversation().id(),
        "last_event": e.last_event(),
    })
}

pub async fn list(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(Value::Array(state.hub.list().iter().map(|e| summary(e)).collect()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Create {
    workspace: Option<PathBuf>,
    resume: Option<String>,
    model: Option<String>,
    mode: Option<String>,
}

/// The workspace asked for, if it lies under a root (the first root by default).
pub fn workspace(state: &AppState, asked: Option<PathBuf>) -> Result<PathBuf, ApiError> {
    let roots = state.real_roots();
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

pub async fn create(State(state): State<Arc<AppState>>, Body(c): Body<Create>) -> Result<Response, ApiError> {
    // A saved session that is open already is that session (two tabs, one conversation).
    if let Some(open) = c.resume.as_deref().and_then(|r| state.hub.by_saved(r)) {
        return Ok((StatusCode::OK, Json(summary(&open))).into_response());
    }
    let ws = match (&c.workspace, &c.resume) {
        (None, Some(id)) => saved_workspace(&state, id)?,
        _ => workspace(&state, c.workspace)?,
    };
    let mode = match c.mode.as_deref() {
        Some(m) => Some(m.parse::<Mode>().map_err(|e| err(StatusCode::BAD_REQUEST, e.to_string()))?),
        None => None,
    };
    // The web UI follows the session's events all the time: it answers a background
    // sub-agent's approvals between turns too.
    let options = SessionOptions {
        model: c.model,
        mode,
        save: true,
        approvals_between_turns: true,
        ..SessionOptions::default()
    };
    let st = Arc::clone(&state);
    let made = blocking(move || st.hub.create(ws, c.resume, options)).await?;
    match made {
        Ok(e) => {
            let mut body = summary(&e);
            body["notes"] = json!(e.session.conversation().notes());
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

/// The workspace a saved session belongs to, if it lies under a root.
fn saved_workspace(state: &AppState, id: &str) -> Result<PathBuf, ApiError> {
    let store = state.hub.launcher().sessions();
    let loaded = store.load(id).map_err(|e| err(StatusCode::NOT_FOUND, e.to_string()))?;
    workspace(state, Some(loaded.meta.cwd))
}

pub async fn status(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let s = e.session.status();
    let mut body = summary(&e);
    body["usage"] = json!(s.usage);
    body["cost_usd"] = json!(s.cost_usd);
    body["context_tokens"] = json!(s.context_tokens);
    body["context_window"] = json!(s.context_window);
    body["queued"] = json!(s.queued);
    body["sandbox"] = json!(s.sandbox);
    body["todos"] = json!(e.session.conversation().todos());
    body["notes"] = json!(e.session.conversation().notes());
    Ok(Json(body))
}

pub async fn remove(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if state.hub.remove(&id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(err(StatusCode::NOT_FOUND, format!("no session `{id}`")))
    }
}
