//! Handlers: plain async functions that read like the API they implement.

pub mod admin;
pub mod agents;
pub mod calls;
pub mod capabilities;
pub mod compatibility;
pub mod diagnostics;
pub mod events;
pub mod health;
pub mod nodes;
pub mod providers;
pub mod streams;
pub mod taxonomy;
pub mod verify;

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use weft_contract::{Descriptor, Limits};

use crate::error::ApiError;

/// What every handler returns on failure.
pub type ApiResult<T> = Result<T, ApiError>;

/// Where descriptors sit in a request body, for the pointers of their problems.
#[derive(Debug, Clone, Copy)]
pub enum DescriptorsAt {
    /// `/descriptors/{index}`: a registration's list.
    List,
    /// `/descriptor`: the one descriptor of a compatibility check.
    Single,
}

/// Builds descriptors with the contract rules. If any breaks a rule the answer is 422
/// `invalid_descriptor` with every problem in `details.problems[]` (`index`, `pointer` into
/// the request body, `code`, `message`); `outcome` says what therefore did not happen.
pub fn build_descriptors(
    values: &[Value],
    limits: &Limits,
    at: DescriptorsAt,
    outcome: &str,
) -> Result<Vec<Descriptor>, ApiError> {
    let mut descriptors = Vec::with_capacity(values.len());
    let mut problems = Vec::new();
    for (index, value) in values.iter().enumerate() {
        match Descriptor::from_value(value, limits) {
            Ok(d) => descriptors.push(d),
            Err(errors) => problems.extend(errors.iter().map(|e| {
                let pointer = match at {
                    DescriptorsAt::List => format!("/descriptors/{index}{}", e.pointer),
                    DescriptorsAt::Single => format!("/descriptor{}", e.pointer),
                };
                json!({"index": index, "pointer": pointer, "code": e.code(),
                       "message": e.to_string()})
            })),
        }
    }
    if problems.is_empty() {
        return Ok(descriptors);
    }
    Err(ApiError::new(
        "invalid_descriptor",
        format!(
            "{} problem(s) in the descriptors; {outcome}",
            problems.len()
        ),
    )
    .with_details(json!({ "problems": problems })))
}

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
