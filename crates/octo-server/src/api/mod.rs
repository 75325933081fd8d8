//! The JSON API under `/api/`, and live events over SSE and WebSocket. Each room holds one
//! group of routes; what they share (errors, bodies, finding a session) is in `error`.

mod choices;
mod commands;
mod error;
mod events;
mod rewind;
mod saved;
mod sessions;
mod turn;
mod view;

use crate::state::AppState;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use std::sync::Arc;

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/login", get(crate::auth::login))
        .route("/api/openapi.json", get(|| async { Json(crate::openapi::openapi()) }))
        .route("/api/choices", get(choices::choices))
        .route("/api/markdown", post(view::markdown))
        .route("/api/saved", get(saved::list))
        .route("/api/saved/{id}", axum::routing::patch(saved::rename).delete(saved::remove))
        .route("/api/saved/{id}/fork", post(saved::fork))
        .route("/api/sessions", get(sessions::list).post(sessions::create))
        .route("/api/sessions/{id}", get(sessions::status).delete(sessions::remove))
        .route("/api/sessions/{id}/prompt", post(turn::prompt))
        .route("/api/sessions/{id}/abort", post(turn::abort))
        .route("/api/sessions/{id}/approvals/{approval}", post(turn::approve))
        .route("/api/sessions/{id}/questions/{question}", post(turn::answer))
        .route("/api/sessions/{id}/model", put(turn::model))
        .route("/api/sessions/{id}/mode", put(turn::mode))
        .route("/api/sessions/{id}/command", post(commands::command))
        .route("/api/sessions/{id}/commands", get(commands::list))
        .route("/api/sessions/{id}/turns", get(rewind::turns))
        .route("/api/sessions/{id}/rewind", post(rewind::rewind))
        .route("/api/sessions/{id}/history", get(view::history))
        .route("/api/sessions/{id}/events", get(events::events))
        .route("/api/sessions/{id}/ws", get(events::websocket))
}
