//! `Idempotency-Key` on POST and PUT: the same key and body within the retention window
//! replays the stored response (`X-Idempotent-Replay: true`); the same key with a different
//! body is `idempotency_key_reused` (409); a repeat while the first is still running is
//! `idempotency_key_in_flight` (409, `Retry-After: 1`). Only successful (< 400) responses
//! are stored, so a failed attempt can be retried with the same key. Records are kept per
//! token: only the token that made the first request can replay it.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::{BoxFuture, Either};
use sha2::{Digest, Sha256};
use tower::{Layer, Service, ServiceExt};
use weft_registry::Principal;
use weft_registry::model::IdempotencyRecord;

use crate::error::ApiError;
use crate::state::AppState;

/// The request header (a `HeaderName`, not a `&str`: looked up on every POST and PUT, and a
/// string name would be parsed and validated on each lookup).
pub const IDEMPOTENCY_KEY: axum::http::HeaderName =
    axum::http::HeaderName::from_static("idempotency-key");
/// The header marking a replayed response.
pub const REPLAY_HEADER: &str = "x-idempotent-replay";

fn valid_key(value: &HeaderValue) -> Option<String> {
    let text = value.to_str().ok()?;
    (!text.is_empty() && text.len() <= 255 && text.bytes().all(|b| b.is_ascii_graphic()))
        .then(|| text.to_owned())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Removes the in-flight mark however the request ends.
struct InFlight<'a> {
    state: &'a AppState,
    mark: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.state
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.mark);
    }
}

/// The `Idempotency-Key` layer (runs after authentication). Requests without the header,
/// and methods other than POST and PUT, go straight to the inner service.
#[derive(Clone)]
pub struct IdempotencyLayer {
    state: AppState,
}

impl IdempotencyLayer {
    /// Keeps records in `state`'s registry.
    pub fn new(state: AppState) -> Self {
        Self { state }
    }
}

impl<S> Layer<S> for IdempotencyLayer {
    type Service = IdempotencyService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        IdempotencyService {
            inner,
            state: self.state.clone(),
        }
    }
}

/// The service [`IdempotencyLayer`] builds.
#[derive(Clone)]
pub struct IdempotencyService<S> {
    inner: S,
    state: AppState,
}

impl<S> Service<Request> for IdempotencyService<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, BoxFuture<'static, Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let keyed = matches!(*request.method(), Method::POST | Method::PUT)
            && request.headers().contains_key(&IDEMPOTENCY_KEY);
        if !keyed {
            return Either::Left(self.inner.call(request));
        }
        // The ready clone serves this request; a fresh clone stays behind for the next.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        Either::Right(Box::pin(async move {
            Ok(idempotent(state, inner, request)
                .await
                .unwrap_or_else(IntoResponse::into_response))
        }))
    }
}

/// Runs a keyed request: replays, refuses, or runs it once and records the response.
async fn idempotent<S>(state: AppState, inner: S, request: Request) -> Result<Response, ApiError>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let Some(raw_key) = request.headers().get(&IDEMPOTENCY_KEY) else {
        return Ok(inner.oneshot(request).await.unwrap_or_else(|e| match e {}));
    };
    let key = valid_key(raw_key).ok_or_else(|| {
        ApiError::invalid("Idempotency-Key must be 1 to 255 visible ASCII characters")
    })?;
    let Some(principal) = request.extensions().get::<Principal>().cloned() else {
        return Ok(inner.oneshot(request).await.unwrap_or_else(|e| match e {}));
    };
    // Records are per token, not only per tenant: a replay hands back the stored body, and
    // that body must never reach a caller the route itself would have refused.
    let route = format!(
        "{} {} {}",
        principal.token_id,
        request.method(),
        request.uri().path()
    );
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, state.config.max_body_bytes)
        .await
        .map_err(|_| ApiError::new("payload_too_large", "request body exceeds the size limit"))?;
    let mut hasher = Sha256::new();
    hasher.update(route.as_bytes());
    hasher.update([0]);
    hasher.update(&bytes);
    let request_sha256 = hex(&hasher.finalize());

    if let Some(stored) = state
        .registry
        .idempotent_response(&principal.tenant, &route, &key)?
    {
        if stored.request_sha256 != request_sha256 {
            return Err(ApiError::new(
                "idempotency_key_reused",
                "this Idempotency-Key was used with a different request body",
            ));
        }
        let mut response = Response::new(Body::from(stored.body));
        *response.status_mut() =
            axum::http::StatusCode::from_u16(stored.status).unwrap_or(axum::http::StatusCode::OK);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
            .headers_mut()
            .insert(REPLAY_HEADER, HeaderValue::from_static("true"));
        return Ok(response);
    }

    let mark = format!("{}\n{route}\n{key}", principal.tenant);
    if !state
        .in_flight
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(mark.clone())
    {
        return Err(ApiError::new(
            "idempotency_key_in_flight",
            "a request with this Idempotency-Key is still being processed",
        )
        .with_header(header::RETRY_AFTER, "1"));
    }
    let _guard = InFlight {
        state: &state,
        mark,
    };
    let response = inner
        .oneshot(Request::from_parts(parts, Body::from(bytes)))
        .await
        .unwrap_or_else(|e| match e {});
    if response.status().as_u16() >= 400 {
        return Ok(response);
    }
    let (parts, body) = response.into_parts();
    let body = to_bytes(body, usize::MAX)
        .await
        .map_err(|e| ApiError::new("internal", format!("could not buffer the response: {e}")))?;
    let record = IdempotencyRecord {
        request_sha256,
        status: parts.status.as_u16(),
        body: String::from_utf8_lossy(&body).into_owned(),
        stored_at_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    state
        .registry
        .store_idempotent_response(&principal.tenant, &route, &key, &record)?;
    Ok(Response::from_parts(parts, Body::from(body)))
}
