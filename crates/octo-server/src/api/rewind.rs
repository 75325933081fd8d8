//! Going back from the web: the turns with the files each changed, and a rewind of the last N
//! (files, conversation or both), as `/rewind` does in the REPL.

use super::error::{entry, err, ApiError, Body};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use octo_app::RewindWhat;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// `GET /api/sessions/{id}/turns`: the last turns, newest first, with the files each changed.
pub async fn turns(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let turns =
        e.session.conversation().turns(200).await.map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
    Ok(Json(Value::Array(
        turns.into_iter().map(|t| json!({"back": t.back, "prompt": t.prompt, "files": t.files})).collect(),
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rewind {
    /// How many turns back (1: the last).
    turns: usize,
    /// `both` (the default), `code` or `conversation`.
    what: Option<String>,
    /// Also overwrite files changed since by someone else.
    #[serde(default)]
    overwrite: bool,
}

/// `POST /api/sessions/{id}/rewind`: goes back over the last `turns` turns; what was restored,
/// what was left alone and why, and the saved session that keeps the old conversation.
pub async fn rewind(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(r): Body<Rewind>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    if r.turns == 0 {
        return Err(err(StatusCode::BAD_REQUEST, "invalid body: `turns` must be 1 or more"));
    }
    let what = match r.what.as_deref().unwrap_or("both") {
        "both" => RewindWhat::Both,
        "code" => RewindWhat::Code,
        "conversation" => RewindWhat::Conversation,
        other => {
            return Err(err(
                StatusCode::BAD_REQUEST,
                format!("invalid body: `what` must be both, code or conversation, not `{other}`"),
            ))
        }
    };
    if e.session.status().state == octo_app::State::Running {
        return Err(err(StatusCode::CONFLICT, "a turn is running: stop it first"));
    }
    let plan = e
        .session
        .conversation()
        .rewind_plan(r.turns, what)
        .await
        .map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
    let overwrite: Vec<_> = if r.overwrite {
        plan.files.iter().filter(|f| f.changed_since).map(|f| f.path.clone()).collect()
    } else {
        Vec::new()
    };
    let report = e
        .session
        .conversation()
        .rewind(&plan, &overwrite)
        .await
        .map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
    Ok(Json(json!({
        "turns": report.turns,
        "restored": report.restored,
        "skipped": report.skipped.iter().map(|(p, why)| json!({"path": p, "why": why})).collect::<Vec<_>>(),
        "fork": report.fork,
        "note": plan.note,
        "commands": plan.commands,
    })))
}
