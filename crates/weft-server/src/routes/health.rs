//! Liveness and readiness.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

use super::ApiResult;
use crate::error::ApiError;
use crate::state::AppState;

/// A health answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` or `ready`.
    pub status: &'static str,
}

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// The node serves requests: the store is open and agents are loaded; 503 while shutting down.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, body = Health), (status = 503, body = crate::error::ErrorEnvelope)))]
pub async fn readyz(State(state): State<AppState>) -> ApiResult<Json<Health>> {
    if state.shutting_down.load(Ordering::SeqCst) {
        return Err(ApiError::new("unavailable", "the node is shutting down"));
    }
    Ok(Json(Health { status: "ready" }))
}
