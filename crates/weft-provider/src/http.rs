//! Serving a provider over HTTP, for remote providers (feature `http`).
//!
//! `POST /weft/v1/call` takes `{call_id, capability_id, version, revision, deadline_ms,
//! payload}` and answers 200 with `{"result": …}` or `{"error": {"message": …}}`. The node
//! validates the payload before and the result after; the provider only computes. The
//! provider registers itself with the node (`PUT /v1/providers/{id}` with `transport:
//! {"kind": "http", "url": …, "lease_seconds": …}`) and renews the lease by re-sending that
//! PUT before it lapses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use weft_contract::{CapabilityId, CapabilityVersion, DescriptorRevision, QualifiedId};

use crate::{CallContext, ProviderError, SharedProvider};

/// The path the node posts calls to.
pub const CALL_PATH: &str = "/weft/v1/call";

/// One call, as the node sends it.
#[derive(Debug, Deserialize)]
struct CallLine {
    call_id: String,
    capability_id: String,
    version: String,
    revision: String,
    deadline_ms: u64,
    payload: Value,
}

async fn call(State(provider): State<SharedProvider>, Json(line): Json<CallLine>) -> Json<Value> {
    let context = match (
        CapabilityId::parse(&line.capability_id),
        CapabilityVersion::parse(&line.version),
        DescriptorRevision::parse(&line.revision),
    ) {
        (Ok(id), Ok(version), Ok(revision)) => CallContext {
            call_id: line.call_id,
            capability: QualifiedId::new(id, version),
            revision,
            deadline: Instant::now() + Duration::from_millis(line.deadline_ms),
        },
        _ => return Json(json!({"error": {"message": "malformed call: id, version or revision"}})),
    };
    match provider.call(&context, line.payload).await {
        Ok(result) => Json(json!({ "result": result })),
        Err(
            ProviderError::Failed(message)
            | ProviderError::Unavailable(message)
            | ProviderError::Transport(message),
        ) => Json(json!({"error": {"message": message}})),
    }
}

/// The router answering the node's calls for `provider`.
pub fn router(provider: SharedProvider) -> Router {
    Router::new()
        .route(CALL_PATH, post(call))
        .with_state(provider)
}

/// Serves `provider` on `listener` until the future is dropped.
pub async fn serve(
    provider: Arc<dyn crate::Provider>,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    axum::serve(listener, router(provider)).await
}
