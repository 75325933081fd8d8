//! The web UI's files, compiled in, and the API's OpenAPI description.

use crate::state::AppState;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use std::sync::Arc;

const INDEX: &str = include_str!("web/index.html");
const APP_JS: &str = include_str!("web/app.js");
const APP_CSS: &str = include_str!("web/app.css");

pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
                    INDEX,
                )
            }),
        )
        .route(
            "/app.js",
            get(|| async {
                ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS).into_response()
            }),
        )
        .route(
            "/app.css",
            get(|| async { ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response() }),
        )
}

/// Every API route: method, path, what it does, its JSON body's fields.
pub const ROUTES: &[(&str, &str, &str, &[&str])] = &[
    ("get", "/api/sessions", "List the sessions.", &[]),
    (
        "post",
        "/api/sessions",
        "Start a session (in a workspace under the roots; `resume` continues a saved one).",
        &["workspace?", "resume?", "model?", "mode?"],
    ),
    ("get", "/api/sessions/{id}", "A session's status: model, mode, usage, cost, context, todos.", &[]),
    ("delete", "/api/sessions/{id}", "Stop and forget a session (its saved conversation stays).", &[]),
    ("post", "/api/sessions/{id}/prompt", "Send a prompt (queued while a turn runs).", &["text"]),
    ("post", "/api/sessions/{id}/abort", "Cancel the running turn.", &[]),
    (
        "post",
        "/api/sessions/{id}/approvals/{approval}",
        "Answer an approval: allow, always or deny.",
        &["decision", "message?"],
    ),
    ("post", "/api/sessions/{id}/questions/{question}", "Answer the model's question.", &["answer"]),
    ("put", "/api/sessions/{id}/model", "Switch the model (endpoint:model).", &["model"]),
    ("put", "/api/sessions/{id}/mode", "Switch the permission mode.", &["mode"]),
    (
        "post",
        "/api/sessions/{id}/command",
        "Run a shared command (`/status`, `/mode plan`, `/compact` …); answers its kind and lines.",
        &["line"],
    ),
    ("get", "/api/sessions/{id}/history", "The committed messages and the last event they include (then follow the events after it); never waits for a running turn.", &[]),
    (
        "get",
        "/api/sessions/{id}/events",
        "Live events (Server-Sent Events), numbered; resume with Last-Event-ID or ?since=N.",
        &[],
    ),
    (
        "get",
        "/api/sessions/{id}/ws",
        "Live events over WebSocket as {\"seq\", \"event\"}; ?since=N resumes.",
        &[],
    ),
];

/// The OpenAPI 3.1 description, built from [`ROUTES`].
pub fn openapi() -> Value {
    let mut paths = serde_json::Map::new();
    for (method, path, about, fields) in ROUTES {
        let mut op = json!({"summary": about, "security": [{"token": []}], "responses": {"200": {"description": "OK"}}});
        if !fields.is_empty() {
            let props: serde_json::Map<String, Value> = fields
                .iter()
                .map(|f| (f.trim_end_matches('?').to_owned(), json!({"type": "string"})))
                .collect();
            let required: Vec<&str> = fields.iter().filter(|f| !f.ends_with('?')).copied().collect();
            op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {
                "type": "object", "properties": props, "required": required
            }}}});
        }
        let entry = paths.entry((*path).to_owned()).or_insert_with(|| json!({}));
        entry[*method] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "octo serve", "version": env!("CARGO_PKG_VERSION")},
        "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "paths": paths
    })
}
