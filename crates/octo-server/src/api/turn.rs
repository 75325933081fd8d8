//! Steering a session's turn: prompts (text, images, `/skill` lines), stop, approvals, answers,
//! model and mode.

use super::error::{entry, err, ApiError, Body};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use octo_app::{ContentBlock, Message, Mode, Session};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The most images one prompt carries.
pub const MAX_IMAGES: usize = 8;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    text: String,
    /// Attached images, base64 (a `data:` URL's payload or plain).
    #[serde(default)]
    images: Vec<String>,
}

pub async fn prompt(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(p): Body<Prompt>,
) -> Result<Response, ApiError> {
    let e = entry(&state, &id)?;
    if p.text.trim().is_empty() && p.images.is_empty() {
        return Err(err(StatusCode::BAD_REQUEST, "invalid body: `text` is empty"));
    }
    let queued =
        |s: &Session| (StatusCode::ACCEPTED, Json(json!({"queued": s.status().queued}))).into_response();
    if p.images.is_empty() {
        if let octo_app::commands::Parsed::Other(word, arg) = octo_app::commands::parse(&p.text) {
            let prepared = super::commands::invoke(&e.session, word, arg).await?;
            e.announce_prompt(&p.text, 0);
            e.session.prompt(prepared).map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
            return Ok(queued(&e.session));
        }
        e.announce_prompt(&p.text, 0);
        e.session.prompt(p.text).map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
        return Ok(queued(&e.session));
    }
    let message = with_images(&p.text, &p.images)?;
    e.announce_prompt(&p.text, p.images.len());
    e.session.prompt(message).map_err(|x| err(StatusCode::CONFLICT, x.to_string()))?;
    Ok(queued(&e.session))
}

/// The prompt's text and its images, each checked and made to fit (`octo_app::image`).
fn with_images(text: &str, images: &[String]) -> Result<Message, ApiError> {
    use base64::Engine;
    if images.len() > MAX_IMAGES {
        return Err(err(StatusCode::BAD_REQUEST, format!("at most {MAX_IMAGES} images per prompt")));
    }
    let mut content = Vec::new();
    for (i, data) in images.iter().enumerate() {
        let payload = data.split_once(";base64,").map_or(data.as_str(), |(_, b)| b);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload.trim())
            .map_err(|e| err(StatusCode::BAD_REQUEST, format!("image {}: not base64 ({e})", i + 1)))?;
        let prepared = octo_app::image::prepare(&bytes).map_err(|e| {
            let status = if matches!(e, octo_app::image::ImageError::TooLarge { .. }) {
                StatusCode::PAYLOAD_TOO_LARGE
            } else {
                StatusCode::BAD_REQUEST
            };
            err(status, format!("image {}: {e}", i + 1))
        })?;
        content.push(ContentBlock::Image { source: prepared.source() });
    }
    if !text.trim().is_empty() {
        content.push(ContentBlock::text(text));
    }
    let mut m = Message::user("");
    m.content = content;
    Ok(m)
}

pub async fn abort(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    entry(&state, &id)?.session.abort();
    Ok(StatusCode::ACCEPTED)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    decision: String,
    message: Option<String>,
}

pub async fn approve(
    State(state): State<Arc<AppState>>,
    Path((id, approval)): Path<(String, String)>,
    Body(d): Body<Decision>,
) -> Result<StatusCode, ApiError> {
    let e = entry(&state, &id)?;
    let done = match d.decision.as_str() {
        "allow" => e.session.approvals().approve(&approval),
        "always" => e.session.approvals().approve_always(&approval),
        "deny" => e.session.approvals().reject(&approval, d.message),
        "deny_always" => e.session.approvals().reject_always(&approval, d.message),
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
            format!("approval `{approval}` is not waiting: it was already answered, or its turn ended"),
        )
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    answer: String,
}

pub async fn answer(
    State(state): State<Arc<AppState>>,
    Path((id, question)): Path<(String, String)>,
    Body(a): Body<Answer>,
) -> Result<StatusCode, ApiError> {
    entry(&state, &id)?
        .session
        .approvals()
        .answer(&question, &a.answer)
        .map(|()| StatusCode::NO_CONTENT)
        .map_err(|_| {
            err(
                StatusCode::CONFLICT,
                format!("question `{question}` is not waiting: it was already answered, or its turn ended"),
            )
        })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelChoice {
    model: String,
}

pub async fn model(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(m): Body<ModelChoice>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    // The same command path as `/model endpoint:model`.
    let command = octo_app::commands::SessionCommand::Model(Some(m.model));
    match e.session.command(state.hub.launcher(), command).await {
        Ok(octo_app::commands::Reply::Model { label, .. }) => Ok(Json(json!({"model": label}))),
        Ok(other) => Err(err(StatusCode::INTERNAL_SERVER_ERROR, other.lines().join("\n"))),
        Err(x) => Err(err(StatusCode::BAD_REQUEST, x.to_string())),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeChoice {
    mode: String,
}

pub async fn mode(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Body(m): Body<ModeChoice>,
) -> Result<Json<Value>, ApiError> {
    let e = entry(&state, &id)?;
    let mode = m.mode.parse::<Mode>().map_err(|x| err(StatusCode::BAD_REQUEST, x.to_string()))?;
    // The same command path as `/mode MODE`.
    let command = octo_app::commands::SessionCommand::Mode(Some(mode));
    match e.session.command(state.hub.launcher(), command).await {
        Ok(octo_app::commands::Reply::Mode(mode)) => Ok(Json(json!({"mode": mode.to_string()}))),
        Ok(other) => Err(err(StatusCode::INTERNAL_SERVER_ERROR, other.lines().join("\n"))),
        Err(x) => Err(err(StatusCode::BAD_REQUEST, x.to_string())),
    }
}
