//! Strict request parsing: bodies, query parameters, pagination.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Default page size.
pub const DEFAULT_LIMIT: usize = 25;
/// Largest page size.
pub const MAX_LIMIT: usize = 100;

/// A JSON body decoded strictly: malformed JSON is `invalid_json`, an unknown top-level field
/// `unknown_field` (request types use `deny_unknown_fields`), a body over the limit
/// `payload_too_large`. The raw bytes are kept for idempotency hashing.
#[derive(Debug)]
pub struct StrictJson<T> {
    /// The decoded value.
    pub value: T,
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for StrictJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new("payload_too_large", "request body exceeds the size limit")
                } else {
                    ApiError::invalid(format!("could not read the request body: {rejection}"))
                }
            })?;
        decode(&bytes).map(|value| StrictJson { value })
    }
}

/// Decodes a strict JSON body.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let message = e.to_string();
        if message.starts_with("unknown field") {
            ApiError::new("unknown_field", message)
        } else if e.is_data() {
            ApiError::invalid(message)
        } else {
            ApiError::new("invalid_json", message)
        }
    })
}

/// Path parameters, as axum's `Path`, but a parameter that cannot be decoded (invalid
/// percent-encoded UTF-8, say) is `invalid_request` in the error envelope instead of
/// axum's plain-text 400.
#[derive(Debug)]
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|rejection| {
                ApiError::invalid(format!("path parameter: {}", rejection.body_text()))
            })
    }
}

/// Query parameters, rejected when a name is not one the route knows.
#[derive(Debug, Default)]
pub struct QueryParams(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        let pairs: Vec<(String, String)> = serde_urlencoded_pairs(query)?;
        let mut map = HashMap::new();
        for (k, v) in pairs {
            if map.insert(k.clone(), v).is_some() {
                return Err(ApiError::invalid(format!(
                    "query parameter {k:?} given twice"
                )));
            }
        }
        Ok(QueryParams(map))
    }
}

fn serde_urlencoded_pairs(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(
        &format!("/?{query}")
            .parse()
            .map_err(|_| ApiError::invalid("malformed query string"))?,
    )
    .map(|q| q.0)
    .map_err(|e| ApiError::invalid(format!("malformed query string: {e}")))
}

impl QueryParams {
    /// Fails on any parameter not in `allowed`.
    pub fn only(&self, allowed: &[&str]) -> Result<(), ApiError> {
        let mut unknown: Vec<&str> = self
            .0
            .keys()
            .map(String::as_str)
            .filter(|k| !allowed.contains(k))
            .collect();
        unknown.sort_unstable();
        match unknown.first() {
            None => Ok(()),
            Some(_) => Err(ApiError::invalid(format!(
                "unknown query parameter(s) {}; this route accepts {}",
                unknown.join(", "),
                allowed.join(", ")
            ))),
        }
    }

    /// A parameter's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// `limit` (1–100, default 25) and `cursor` (empty means absent).
    pub fn page(&self) -> Result<(usize, Option<&str>), ApiError> {
        let limit = match self.get("limit") {
            None => DEFAULT_LIMIT,
            Some(text) => match text.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    return Err(ApiError::invalid(format!(
                        "limit must be an integer from 1 to {MAX_LIMIT}, got {text:?}"
                    )));
                }
            },
        };
        // An empty cursor means "from the start", as if it were absent.
        Ok((limit, self.get("cursor").filter(|c| !c.is_empty())))
    }
}

/// The body of a route that takes none: empty or `{}`. Reading it (rather than ignoring it)
/// keeps the connection reusable when a client streams an empty chunked body.
#[derive(Debug)]
pub struct NoBody;

impl<S: Send + Sync> FromRequest<S> for NoBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new("payload_too_large", "request body exceeds the size limit")
                } else {
                    ApiError::invalid(format!("could not read the request body: {rejection}"))
                }
            })?;
        let text = std::str::from_utf8(&bytes).unwrap_or("?").trim();
        if text.is_empty() || text == "{}" {
            Ok(NoBody)
        } else {
            Err(ApiError::new(
                "unknown_field",
                "this route takes no request body (send nothing, or {})",
            ))
        }
    }
}
