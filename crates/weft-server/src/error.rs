//! The API's error envelope and the one table mapping each code to its HTTP status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use weft_registry::RegistryError;

/// Every error code the API can answer with, and its HTTP status. New codes only add.
pub const ERROR_CODES: &[(&str, u16)] = &[
    ("invalid_json", 400),
    ("unknown_field", 400),
    ("invalid_request", 400),
    ("unauthorized", 401),
    ("forbidden", 403),
    ("not_found", 404),
    ("version_mismatch", 404),
    ("method_not_allowed", 405),
    ("conflict", 409),
    ("idempotency_key_reused", 409),
    ("idempotency_key_in_flight", 409),
    ("revision_mismatch", 409),
    ("breaking_change", 409),
    ("events_gone", 410),
    ("payload_too_large", 413),
    ("invalid_descriptor", 422),
    ("invalid_payload", 422),
    ("taxonomy_mismatch", 422),
    ("rate_limited", 429),
    ("overloaded", 429),
    ("internal", 500),
    ("provider_error", 502),
    ("invalid_result", 502),
    ("unavailable", 503),
    ("unreachable", 503),
    ("transport_error", 502),
    ("timeout", 504),
];

/// The HTTP status of an error code (500 for a code missing from [`ERROR_CODES`]).
pub fn status_of(code: &str) -> StatusCode {
    ERROR_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .and_then(|(_, s)| StatusCode::from_u16(*s).ok())
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// An API error: code, message, optional details. The request id is added on the way out.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// Stable snake_case code from [`ERROR_CODES`].
    pub code: &'static str,
    /// Human-readable; not part of the contract.
    pub message: String,
    /// Code-specific structured details.
    pub details: Option<Value>,
    /// Extra response headers (for example `WWW-Authenticate`, `Retry-After`).
    pub headers: Vec<(header::HeaderName, HeaderValue)>,
}

/// The error envelope's inner object, as documented in OpenAPI.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Stable machine-readable code.
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// Code-specific details.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub details: Option<Value>,
    /// The request id (also in the `X-Request-Id` header).
    #[serde(rename = "requestId")]
    pub request_id: String,
}

/// `{"error": {...}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
}

impl ApiError {
    /// An error with a code and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
            headers: Vec::new(),
        }
    }

    /// Adds details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: header::HeaderName, value: &'static str) -> Self {
        self.headers.push((name, HeaderValue::from_static(value)));
        self
    }

    /// `not_found` for `what`.
    pub fn not_found(what: impl std::fmt::Display) -> Self {
        Self::new("not_found", format!("{what} not found"))
    }

    /// `invalid_request`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("invalid_request", message)
    }
}

impl From<weft_fabric::CallError> for ApiError {
    fn from(error: weft_fabric::CallError) -> Self {
        let overloaded = matches!(error, weft_fabric::CallError::Overloaded { .. });
        let mut api = ApiError::new(error.code(), error.to_string());
        api.details = error.details();
        if overloaded {
            api = api.with_header(header::RETRY_AFTER, "1");
        }
        api
    }
}

impl From<RegistryError> for ApiError {
    fn from(error: RegistryError) -> Self {
        match &error {
            RegistryError::Store(_) | RegistryError::Corrupt { .. } => {
                tracing::error!(%error, "registry failure");
                ApiError::new("internal", "internal error; see the server log")
            }
            RegistryError::EventsGone { requested, oldest } => {
                ApiError::new("events_gone", error.to_string())
                    .with_details(serde_json::json!({"requested": requested, "oldest": oldest}))
            }
            RegistryError::BreakingChange { refusals } => {
                ApiError::new("breaking_change", error.to_string())
                    .with_details(serde_json::json!({ "refusals": refusals }))
            }
            RegistryError::TooManyOverrides { limit, .. } => {
                ApiError::new(error.code(), error.to_string()).with_details(serde_json::json!({
                    "limit": limit,
                    "problems": [{"pointer": "/overrides", "code": "too_many_overrides",
                                  "message": error.to_string()}],
                }))
            }
            _ => ApiError::new(error.code(), error.to_string()),
        }
    }
}

/// Marker stored in response extensions so the request-id layer can fill in `requestId`.
#[derive(Debug, Clone)]
pub struct PendingError {
    /// The error to render.
    pub error: ApiError,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The body is written by `layers::RequestIdLayer`, which knows the request id.
        let mut response = status_of(self.code).into_response();
        for (name, value) in &self.headers {
            response.headers_mut().insert(name.clone(), value.clone());
        }
        response
            .extensions_mut()
            .insert(PendingError { error: self });
        response
    }
}

/// Renders the envelope for `error` with `request_id`.
pub fn render(error: &ApiError, request_id: &str) -> Vec<u8> {
    let envelope = ErrorEnvelope {
        error: ErrorBody {
            code: error.code.to_owned(),
            message: error.message.clone(),
            details: error.details.clone(),
            request_id: request_id.to_owned(),
        },
    };
    serde_json::to_vec(&envelope).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_snake_case_unique_and_mapped() {
        let mut seen = std::collections::HashSet::new();
        for (code, status) in ERROR_CODES {
            assert!(seen.insert(code), "{code} listed twice");
            assert!(
                code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{code}"
            );
            assert_eq!(status_of(code).as_u16(), *status);
        }
        assert_eq!(status_of("no_such_code"), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
