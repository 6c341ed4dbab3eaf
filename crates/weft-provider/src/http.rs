//! Serving a provider over HTTP, for remote providers (feature `http`).
//!
//! `POST /weft/v1/call` takes `{call_id, capability_id, version, revision, deadline_ms,
//! payload}` and answers 200 with `{"result": …}` or `{"error": {"message": …}}`.
//! `GET /weft/v1/calls` is a long-lived WebSocket carrying many unary calls at once, each
//! tagged with the node's `ref` (what the node uses when it can).
//! `GET /weft/v1/stream` is a WebSocket carrying one streaming call (the protocol is in
//! `docs/remote-providers.md`). The node validates the payload and every
//! chunk before and the results after; the provider only computes. The provider registers
//! itself with the node (`PUT /v1/providers/{id}` with `transport: {"kind": "http", "url":
//! …, "lease_seconds": …}`) and renews the lease by re-sending that PUT before it lapses.

mod multiplexed;
mod stream;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{DefaultBodyLimit, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use weft_contract::{CapabilityId, CapabilityVersion, DescriptorRevision, QualifiedId};

pub use crate::wire::{CALL_PATH, CALLS_PATH, STREAM_PATH};
use crate::{CallContext, SharedProvider};

/// The longest deadline the SDK honours (one day); longer ones are clamped to it.
const MAX_DEADLINE_MS: u64 = 24 * 60 * 60 * 1000;

/// Limits of the provider's HTTP side.
#[derive(Debug, Clone, Copy)]
pub struct HttpOptions {
    /// The largest unary call body or WebSocket message accepted from the node, in bytes.
    /// Keep it at least the node's `max_payload_bytes` plus room for the framing.
    pub max_message_bytes: usize,
    /// Chunks buffered each way inside one streaming call; beyond that the SDK stops reading
    /// the socket (input) or the provider's `send` waits (output).
    pub stream_queue: usize,
    /// Unary calls one multiplexed connection runs at once; beyond that the SDK stops
    /// reading the connection until one finishes (the node's writes then wait on TCP).
    pub max_calls_per_connection: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            max_message_bytes: 16 * 1024 * 1024,
            stream_queue: 16,
            max_calls_per_connection: 1024,
        }
    }
}

/// What the routes share.
#[derive(Clone)]
struct Served {
    provider: SharedProvider,
    options: HttpOptions,
}

/// One call line, as the node sends it.
#[derive(Debug, Deserialize)]
struct CallLine {
    /// The node's number for the call on a multiplexed connection (absent elsewhere).
    #[serde(rename = "ref", default)]
    reference: Option<u64>,
    call_id: String,
    capability_id: String,
    version: String,
    revision: String,
    deadline_ms: u64,
    payload: Value,
}

impl CallLine {
    /// The call's context and payload.
    fn open(self) -> Result<(CallContext, Value), &'static str> {
        match (
            CapabilityId::parse(&self.capability_id),
            CapabilityVersion::parse(&self.version),
            DescriptorRevision::parse(&self.revision),
        ) {
            (Ok(id), Ok(version), Ok(revision)) => Ok((
                CallContext {
                    call_id: self.call_id,
                    capability: QualifiedId::new(id, version),
                    revision,
                    // Clamped, so a huge `deadline_ms` cannot overflow the clock.
                    deadline: Instant::now()
                        + Duration::from_millis(self.deadline_ms.min(MAX_DEADLINE_MS)),
                },
                self.payload,
            )),
            _ => Err("malformed call: id, version or revision"),
        }
    }
}

async fn call(State(served): State<Served>, Json(line): Json<CallLine>) -> Json<Value> {
    let (context, payload) = match line.open() {
        Ok(opened) => opened,
        Err(message) => return Json(json!({"error": {"message": message}})),
    };
    match served.provider.call(&context, payload).await {
        Ok(result) => Json(json!({ "result": result })),
        Err(error) => Json(json!({"error": {"message": error.into_message()}})),
    }
}

/// `upgrade` with the SDK's socket settings: the shared read buffer and the message limit.
fn configured(
    upgrade: axum::extract::ws::WebSocketUpgrade,
    options: &HttpOptions,
) -> axum::extract::ws::WebSocketUpgrade {
    let limit = options.max_message_bytes;
    upgrade
        .read_buffer_size(crate::wire::WEBSOCKET_READ_BUFFER)
        .max_message_size(limit)
        .max_frame_size(limit)
}

/// The router answering the node's calls for `provider`, with default [`HttpOptions`].
pub fn router(provider: SharedProvider) -> Router {
    router_with(provider, HttpOptions::default())
}

/// The router answering the node's calls (unary and streaming) for `provider`.
pub fn router_with(provider: SharedProvider, options: HttpOptions) -> Router {
    Router::new()
        .route(CALL_PATH, post(call))
        .route(CALLS_PATH, get(multiplexed::upgrade))
        .route(STREAM_PATH, get(stream::upgrade))
        .layer(DefaultBodyLimit::max(options.max_message_bytes))
        .with_state(Served { provider, options })
}

/// Serves `provider` on `listener` until the future is dropped.
pub async fn serve(
    provider: Arc<dyn crate::Provider>,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    serve_with(provider, listener, HttpOptions::default()).await
}

/// Serves `provider` on `listener` with `options` until the future is dropped.
pub async fn serve_with(
    provider: Arc<dyn crate::Provider>,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
) -> std::io::Result<()> {
    axum::serve(listener, router_with(provider, options)).await
}
