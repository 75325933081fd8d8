//! What every handler shares: the error answer, the JSON body that names what was wrong, and
//! looking a session up.

use crate::hub::Entry;
use crate::state::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::sync::Arc;

/// An error as the API answers it: a status and `{"error": "..."}`.
pub struct ApiError(pub StatusCode, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

pub fn err(status: StatusCode, message: impl Into<String>) -> ApiError {
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
                    JsonRejection::BytesRejection(_) if status == StatusCode::PAYLOAD_TOO_LARGE => format!(
                        "the request is larger than the {} MB this server takes",
                        crate::state::MAX_BODY >> 20
                    ),
                    other => other.body_text(),
                };
                Err(err(status, text))
            }
        }
    }
}

/// The live session `id`.
pub fn entry(state: &AppState, id: &str) -> Result<Arc<Entry>, ApiError> {
    state.hub.get(id).ok_or_else(|| err(StatusCode::NOT_FOUND, format!("no session `{id}`")))
}

/// Runs blocking work (files, a model load) off the async threads.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || {
        let handle = tokio::runtime::Handle::current();
        let _guard = handle.enter();
        f()
    })
    .await
    .map_err(|e| err(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}
