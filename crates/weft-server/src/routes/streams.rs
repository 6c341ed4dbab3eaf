//! `GET /v1/streams`: every call mode over one WebSocket.
//!
//! The first message (text) is the call envelope, exactly as `POST /v1/calls` takes it. A
//! guard failure is answered with one `{"error": {...}}` message and the socket closes.
//! Then the node sends the provider → caller frames as text messages, ending with one
//! terminal, and closes. The caller sends its own frames, for client-streaming and
//! bidirectional calls:
//!
//! - `{"kind": "chunk", "sequence": N, "payload": {...}}` — sequences start at 1 (0 is the
//!   envelope, the caller's `started`) and are contiguous;
//! - `{"kind": "completed", "sequence": N}` — half-close: no payload; output keeps flowing;
//! - `{"kind": "cancelled"}` — cancel; closing the socket cancels too.
//!
//! A malformed or out-of-sequence frame, or a chunk that breaks `input_chunk_schema`, fails
//! only this call (`invalid_frame`). The node stops reading caller messages while the
//! provider's input queue is full, so a slow provider slows the caller (TCP backpressure);
//! output keeps being forwarded meanwhile.

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Extension, State};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use weft_fabric::{CallRequest, CallerFrame, Frame, InputHandle};
use weft_registry::{Principal, Scope};

use super::ApiResult;
use crate::error::ApiError;
use crate::extract::decode;
use crate::layers::require;
use crate::state::AppState;

/// How long the node waits for the envelope after the upgrade.
const ENVELOPE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Most frames already queued that are coalesced into one write.
const COALESCE: usize = 64;

/// Open a call of any mode over WebSocket (see the module documentation for the protocol).
///
/// A request that is not a WebSocket upgrade (no `Connection: upgrade`, `Upgrade:
/// websocket`, `Sec-WebSocket-Key` or version 13) is answered 400 `invalid_request` in the
/// usual error envelope, after authentication and the scope check.
#[utoipa::path(get, path = "/v1/streams", tag = "calls",
    responses((status = 101, description = "switching to WebSocket; first message: the call envelope"),
              (status = 400, description = "not a WebSocket upgrade request", body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn streams(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> ApiResult<Response> {
    require(&principal, Scope::Call)?;
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::invalid(format!(
            "GET /v1/streams takes a WebSocket upgrade: {}",
            rejection.body_text()
        ))
    })?;
    // Room for one payload plus the frame around it.
    let limit = state.config.max_payload_bytes + 64 * 1024;
    Ok(upgrade
        .read_buffer_size(weft_provider::wire::WEBSOCKET_READ_BUFFER)
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| session(state, principal, socket)))
}

fn error_message(error: &ApiError) -> Message {
    let mut body = json!({"code": error.code, "message": error.message});
    if let Some(details) = &error.details {
        body["details"] = details.clone();
    }
    Message::Text(json!({ "error": body }).to_string().into())
}

fn frame_message(frame: &Frame) -> Message {
    Message::Text(serde_json::to_string(frame).unwrap_or_default().into())
}

async fn session(state: AppState, principal: Principal, socket: WebSocket) {
    let (mut sink, mut messages) = socket.split();
    let envelope = match tokio::time::timeout(ENVELOPE_WAIT, messages.next()).await {
        Ok(Some(Ok(Message::Text(text)))) => decode::<CallRequest>(text.as_bytes()),
        Ok(Some(Ok(_))) => Err(ApiError::invalid(
            "the first message must be the call envelope (text)",
        )),
        _ => Err(ApiError::invalid("no call envelope arrived")),
    };
    let opened = match envelope {
        Ok(request) => state
            .fabric
            .open_stream(&state.registry, &principal.tenant, request)
            .await
            .map_err(ApiError::from),
        Err(e) => Err(e),
    };
    let call = match opened {
        Ok(call) => call,
        Err(error) => {
            let _ = sink.send(error_message(&error)).await;
            let _ = sink.close().await;
            return;
        }
    };
    let (mut frames, mut input, mut stopper) = call.split();
    let mut expected = 1_u64;
    let mut pending: Option<Value> = None;
    let mut reading = true;
    loop {
        // An owned handle on the input queue, so waiting for room borrows nothing.
        let queue = input.as_ref().and_then(|h| h.sender().cloned());
        tokio::select! {
            frame = frames.next() => {
                let Some(frame) = frame else { break };
                // Frames already queued go out in the same write: one syscall for many
                // chunks when the caller is the bottleneck, no added latency otherwise.
                let mut terminal = frame.is_terminal();
                let mut written = sink.feed(frame_message(&frame)).await.is_ok();
                for _ in 1..COALESCE {
                    if terminal || !written {
                        break;
                    }
                    let Some(frame) = frames.try_next() else { break };
                    terminal = frame.is_terminal();
                    written = sink.feed(frame_message(&frame)).await.is_ok();
                }
                if !written || sink.flush().await.is_err() {
                    stopper.cancel("the caller's socket failed");
                    break;
                }
                if terminal {
                    break;
                }
            }
            permit = reserve(queue), if pending.is_some() => {
                match (permit, pending.take()) {
                    (Some(permit), Some(chunk)) => {
                        permit.send(chunk);
                    }
                    // The provider stopped reading: the stream is ending; output will say how.
                    _ => input = None,
                }
            }
            message = messages.next(), if reading && pending.is_none() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                        reading = false;
                        stopper.cancel("the caller closed the socket");
                        continue;
                    }
                    Some(Ok(_)) => continue,
                };
                match CallerFrame::parse(&text, expected) {
                    Ok(CallerFrame::Cancel) => stopper.cancel("cancelled by the caller"),
                    Ok(frame) => {
                        expected += 1;
                        if let Err(message) = accept(&mut input, &mut pending, frame) {
                            stopper.fail("invalid_frame", message);
                        }
                    }
                    Err(message) => stopper.fail("invalid_frame", message),
                }
            }
        }
    }
    let _ = sink.close().await;
}

/// Reserves a slot in the provider's input queue (waits while it is full).
async fn reserve(
    queue: Option<tokio::sync::mpsc::Sender<Value>>,
) -> Option<tokio::sync::mpsc::OwnedPermit<Value>> {
    queue?.reserve_owned().await.ok()
}

fn accept(
    input: &mut Option<InputHandle>,
    pending: &mut Option<Value>,
    frame: CallerFrame,
) -> Result<(), String> {
    let Some(handle) = input.as_mut() else {
        return Err("this call takes no caller chunks (or input was already half-closed)".into());
    };
    match frame {
        CallerFrame::Chunk(chunk) => {
            if handle.sender().is_none() {
                return Err("input was already half-closed".into());
            }
            handle.check(&chunk)?;
            *pending = Some(chunk);
        }
        CallerFrame::HalfClose => handle.half_close(),
        CallerFrame::Cancel => {}
    }
    Ok(())
}
