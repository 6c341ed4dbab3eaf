//! `POST /v1/calls`: call a pinned capability.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::extract::{Extension, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use weft_fabric::{CallRequest, FrameKind, StreamCall};
use weft_registry::{Principal, Scope};

use super::ApiResult;
use crate::error::ApiError;
use crate::extract::StrictJson;
use crate::layers::require;
use crate::state::AppState;

/// The call envelope (documentation shape of [`CallRequest`]).
#[derive(Debug, Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct CallEnvelope {
    /// Caller-chosen id, 1–128 visible ASCII characters; minted when absent.
    pub call_id: Option<String>,
    /// Capability id.
    pub capability_id: String,
    /// Exact version.
    pub version: String,
    /// The revision pinned at discovery; a different current revision is `revision_mismatch`.
    pub descriptor_revision: String,
    /// The payload, validated against `input_schema` (at most `max_payload_bytes` as sent).
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    /// Deadline in seconds, in (0, max_timeout_seconds]; default 30.
    pub timeout_seconds: Option<f64>,
    /// Only this provider.
    pub provider_id: Option<String>,
    /// Only providers on this node.
    pub node_id: Option<String>,
    /// Verify the result against the capability's standard taxonomy rule and attach the
    /// report as `verification` (unary only; a stream with `verify` is `invalid_request`).
    /// On a node with `verification = "strict"` a failed built-in verification is
    /// `invalid_result` with the report in `details.verification`.
    pub verify: Option<bool>,
}

/// A successful call (documentation shape of [`CallResponse`]).
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct CallResult {
    /// The call id.
    pub call_id: String,
    /// The result, validated against `output_schema`.
    #[schema(value_type = Object)]
    pub result: serde_json::Value,
    /// Capability id.
    pub capability_id: String,
    /// Version.
    pub version: String,
    /// The revision the call ran against.
    pub revision: String,
    /// Who answered.
    pub provider_id: String,
    /// Where.
    pub node_id: String,
    /// Milliseconds from arrival to the validated result.
    pub duration_ms: f64,
    /// The verification report, when the envelope asked for one.
    pub verification: Option<crate::routes::verify::VerificationReportDoc>,
}

/// Call a capability pinned by `id@version` and revision.
///
/// With `Accept: text/event-stream` a `server_streaming` capability answers with its frames
/// as Server-Sent Events (`event:` kind, `id:` sequence, `data:` the frame); guard failures
/// still come back as JSON errors before any event.
///
/// Guards, cheapest first: envelope → lookup (`not_found`, `version_mismatch`) → revision
/// pin (`revision_mismatch`) → admission (`overloaded`, never queued) → inside one deadline:
/// payload size (`payload_too_large`), input validation (`invalid_payload`), the provider
/// (`provider_error`, `unreachable`, `timeout`) → result checks (`invalid_result`).
#[utoipa::path(post, path = "/v1/calls", tag = "calls", request_body = CallEnvelope,
    responses((status = 200, body = CallResult, description = "the result; with Accept: text/event-stream, the stream's frames"),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope),
              (status = 404, body = crate::error::ErrorEnvelope, description = "not_found or version_mismatch"),
              (status = 409, body = crate::error::ErrorEnvelope, description = "revision_mismatch: details carry the current revision"),
              (status = 413, body = crate::error::ErrorEnvelope), (status = 422, body = crate::error::ErrorEnvelope),
              (status = 429, body = crate::error::ErrorEnvelope, description = "overloaded, with Retry-After"),
              (status = 502, body = crate::error::ErrorEnvelope, description = "provider_error or invalid_result"),
              (status = 503, body = crate::error::ErrorEnvelope), (status = 504, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn call(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    AcceptsEventStream(event_stream): AcceptsEventStream,
    body: StrictJson<CallRequest>,
) -> ApiResult<Response> {
    require(&principal, Scope::Call)?;
    if event_stream {
        let stream = state
            .fabric
            .open_stream(&state.registry, &principal.tenant, body.value)
            .await?;
        return Ok(sse_frames(stream).into_response());
    }
    let request = body.value;
    // Kept only when verification was asked for (the fabric consumes the request).
    let payload = match request.verify {
        true => Some(
            serde_json::from_str::<serde_json::Value>(request.payload.get())
                .map_err(|e| ApiError::invalid(format!("payload: {e}")))?,
        ),
        false => None,
    };
    let mut response = state
        .fabric
        .call(&state.registry, &principal.tenant, request)
        .await?;
    if let Some(payload) = payload {
        response.verification = Some(
            crate::verification::verify_call(
                state.config.verification,
                &response.capability_id,
                payload,
                &response.result,
            )
            .await?,
        );
    }
    Ok(json_body(&response))
}

/// The success body, encoded once (by [`weft_fabric::CallResponse::write_json`]) into a
/// buffer sized for a typical answer, with its one header set directly.
fn json_body(response: &weft_fabric::CallResponse) -> Response {
    let mut body = Vec::with_capacity(512);
    match response.write_json(&mut body) {
        Ok(()) => {
            let mut answer = Response::new(axum::body::Body::from(body));
            answer.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/json"),
            );
            answer
        }
        // Unreachable for a `Value` and strings; answered like any other handler failure.
        Err(e) => {
            ApiError::new("internal", format!("could not encode the result: {e}")).into_response()
        }
    }
}

/// Whether the caller's `Accept` asks for `text/event-stream` (read in place: taking the
/// whole `HeaderMap` as an extractor would copy it on every call).
pub struct AcceptsEventStream(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for AcceptsEventStream {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let wanted = parts
            .headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| {
                v.split(',')
                    .any(|t| t.trim().starts_with("text/event-stream"))
            });
        Ok(Self(wanted))
    }
}

/// Frames as Server-Sent Events: `id:` the sequence, `event:` the kind, `data:` the frame.
/// The response ends after the terminal frame; closing it cancels the provider's work.
fn sse_frames(stream: StreamCall) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let frames = futures_util::stream::unfold(stream, |mut stream| async move {
        let frame = stream.next().await?;
        let event = Event::default()
            .id(frame.sequence.to_string())
            .event(kind_name(frame.kind))
            .json_data(&frame)
            .unwrap_or_default();
        Some((Ok(event), stream))
    });
    Sse::new(frames).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

fn kind_name(kind: FrameKind) -> &'static str {
    match kind {
        FrameKind::Started => "started",
        FrameKind::Chunk => "chunk",
        FrameKind::Completed => "completed",
        FrameKind::Failed => "failed",
        FrameKind::Cancelled => "cancelled",
    }
}
