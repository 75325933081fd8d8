//! What a new session may be started with: the workspaces under the roots and the configured
//! endpoints with their models.

use super::error::{blocking, err, ApiError};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// The most workspaces listed.
const MAX_WORKSPACES: usize = 200;

/// `GET /api/choices`: `workspaces` (each root, then the folders directly inside it), `models`
/// (`endpoint:model` for the models each configured endpoint names) and `default`.
pub async fn choices(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let st = Arc::clone(&state);
    let body = blocking(move || {
        let roots = st.real_roots();
        let mut workspaces = Vec::new();
        for root in &roots {
            workspaces.push(root.clone());
            let mut inside: Vec<_> = std::fs::read_dir(root)
                .map(|d| {
                    d.flatten()
                        .map(|e| e.path())
                        .filter(|p| {
                            p.is_dir() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
                        })
                        .collect()
                })
                .unwrap_or_default();
            inside.sort();
            workspaces.extend(inside);
        }
        workspaces.truncate(MAX_WORKSPACES);
        let config =
            roots.first().map(|r| st.hub.launcher().config(r, &octo_app::config::Overrides::default()));
        let (models, default) = match config {
            Some(Ok(c)) => {
                let models: Vec<String> = c
                    .endpoints
                    .iter()
                    .flat_map(|(id, e)| e.value.models.iter().map(move |m| format!("{id}:{m}")))
                    .collect();
                (models, c.default.map(|d| d.value))
            }
            Some(Err(e)) => return Err(e.to_string()),
            None => (Vec::new(), None),
        };
        Ok(json!({"workspaces": workspaces, "models": models, "default": default}))
    })
    .await?;
    body.map(Json).map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e))
}
