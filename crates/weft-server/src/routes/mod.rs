//! Handlers: plain async functions that read like the API they implement.

pub mod admin;
pub mod agents;
pub mod calls;
pub mod capabilities;
pub mod diagnostics;
pub mod events;
pub mod health;
pub mod nodes;
pub mod providers;
pub mod streams;
pub mod taxonomy;

use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;

/// What every handler returns on failure.
pub type ApiResult<T> = Result<T, ApiError>;

/// The documented shape of a capability descriptor (see `docs/contract.md`).
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct DescriptorDoc {
    /// `^[a-z0-9][a-z0-9._:-]*$`, at most 128 characters.
    pub id: String,
    /// SemVer `MAJOR.MINOR.PATCH[-PRERELEASE]`.
    pub version: String,
    /// Short human-facing name.
    pub title: String,
    /// What the capability does, for people and LLMs.
    pub description: String,
    /// JSON Schema 2020-12 for the call payload.
    #[schema(value_type = Object)]
    pub input_schema: serde_json::Value,
    /// JSON Schema for the unary result.
    #[schema(value_type = Option<Object>)]
    pub output_schema: Option<serde_json::Value>,
    /// `unary`, `server_streaming`, `client_streaming` or `bidirectional`.
    pub io_mode: String,
    /// Schema of one caller chunk (client_streaming, bidirectional).
    #[schema(value_type = Option<Object>)]
    pub input_chunk_schema: Option<serde_json::Value>,
    /// Schema of one provider chunk (server_streaming, bidirectional).
    #[schema(value_type = Option<Object>)]
    pub output_chunk_schema: Option<serde_json::Value>,
    /// Opaque string hints.
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
}
