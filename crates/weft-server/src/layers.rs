//! Cross-cutting concerns as middleware: request ids (and error bodies that carry them),
//! bearer authentication, and scope checks.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use weft_registry::{Principal, Scope};

use crate::error::{ApiError, PendingError, render};
use crate::state::AppState;

/// Header carrying the request id, in and out.
pub const REQUEST_ID: &str = "x-request-id";

/// The id of the current request, available to handlers as an extension.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

fn acceptable_request_id(value: &HeaderValue) -> Option<String> {
    let text = value.to_str().ok()?;
    let ok = !text.is_empty() && text.len() <= 128 && text.bytes().all(|b| b.is_ascii_graphic());
    ok.then(|| text.to_owned())
}

/// `req-` + a per-process random prefix + `-` + a decimal counter: unique without a syscall or a
/// formatting allocation per byte on every request.
fn mint_request_id() -> String {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static PREFIX: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let prefix = PREFIX.get_or_init(|| {
        let mut bytes = [0u8; 8];
        // Without randomness fall back to the start time; uniqueness per process still holds.
        let prefix = if getrandom::fill(&mut bytes).is_err() {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        } else {
            u64::from_le_bytes(bytes)
        };
        format!("req-{prefix:016x}-")
    });
    let mut counter = itoa::Buffer::new();
    let counter = counter.format(NEXT.fetch_add(1, Ordering::Relaxed));
    let mut id = String::with_capacity(prefix.len() + counter.len());
    id.push_str(prefix);
    id.push_str(counter);
    id
}

/// Honours a sane `X-Request-Id` or mints `req-…`; echoes it on every response and writes
/// the error envelope (which carries it) for responses that are errors.
pub async fn request_id(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(REQUEST_ID)
        .and_then(acceptable_request_id)
        .unwrap_or_else(mint_request_id);
    request.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(request).await;
    if let Some(PendingError { error }) = response.extensions_mut().remove::<PendingError>() {
        let status = response.status();
        let mut headers = std::mem::take(response.headers_mut());
        // The length belonged to the placeholder body; the rendered one sets its own.
        headers.remove(header::CONTENT_LENGTH);
        let mut rendered = Response::new(axum::body::Body::from(render(&error, &id)));
        *rendered.status_mut() = status;
        *rendered.headers_mut() = headers;
        rendered.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response = rendered;
    }
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    response
}

/// Resolves `Authorization: Bearer …` to a [`Principal`] or answers 401.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let header_value = request.headers().get(header::AUTHORIZATION);
    let Some(value) = header_value else {
        drain(request).await;
        return Err(ApiError::new("unauthorized", "missing bearer token")
            .with_header(header::WWW_AUTHENTICATE, "Bearer"));
    };
    // The scheme name is case-insensitive (RFC 7235 §2.1).
    let secret = value.to_str().ok().and_then(|v| {
        let (scheme, token) = v.trim_start().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    });
    let principal = secret.and_then(|s| state.registry.authenticate(s));
    let Some(principal) = principal else {
        drain(request).await;
        return Err(
            ApiError::new("unauthorized", "invalid, expired or revoked bearer token")
                .with_header(header::WWW_AUTHENTICATE, "Bearer error=\"invalid_token\""),
        );
    };
    request.extensions_mut().insert(principal);
    Ok(next.run(request).await)
}

/// Reads (and drops) a small request body before an early refusal, so that the client's
/// keep-alive connection stays usable: answering before the body is read makes the server
/// close the connection under a client that is still sending it. Bodies over 64 KiB, or
/// slower than 2 s, are not waited for; that connection is closed instead.
async fn drain(request: Request) {
    const DRAIN_LIMIT: usize = 64 * 1024;
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        axum::body::to_bytes(request.into_body(), DRAIN_LIMIT),
    )
    .await;
}

/// Fails with 403 unless the principal holds `scope`.
pub fn require(principal: &Principal, scope: Scope) -> Result<(), ApiError> {
    if principal.has(scope) {
        Ok(())
    } else {
        Err(ApiError::new(
            "forbidden",
            format!("this token lacks the {scope} scope"),
        ))
    }
}
