//! `POST /v1/verify`: check one input/output pair against a capability's standard rule.

use axum::Json;
use axum::extract::Extension;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use weft_registry::{Principal, Scope};

use super::ApiResult;
use crate::extract::StrictJson;
use crate::layers::require;

/// A verification request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    /// The capability id (a concrete taxonomy id such as `text.translate.en.it.fluent`).
    pub capability_id: String,
    /// The call's input.
    #[schema(value_type = Object)]
    pub input: Value,
    /// The output to verify.
    #[schema(value_type = Object)]
    pub output: Value,
}

/// One named check (documentation shape of `weft_verify::Check`).
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct CheckDoc {
    /// Stable snake_case name (docs/verification.md lists each row's).
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// What was found.
    pub detail: String,
}

/// A verification report (documentation shape of `weft_verify::CapabilityReport`).
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct VerificationReportDoc {
    /// The capability id.
    pub capability_id: String,
    /// `builtin` (the standard row's verifier ran) or `none` (custom or non-taxonomy id).
    pub verifier: String,
    /// The taxonomy row, for standard ids.
    pub row: Option<String>,
    /// The row's bound placeholders, for standard ids.
    #[schema(value_type = Option<Object>)]
    pub bindings: Option<Value>,
    /// True only when a built-in verifier ran and every check passed.
    pub passed: bool,
    /// Every check, never only the first failure.
    pub checks: Vec<CheckDoc>,
}

/// Verify an output against the standard rule of a capability.
///
/// Runs every check of the capability's taxonomy row (docs/verification.md) and reports each
/// one. A custom or non-taxonomy id has no built-in verifier: the report says
/// `verifier: none` and does not pass. An input the verifier cannot read (say, the source
/// text of a translation is missing) is 422 `invalid_payload` with a pointer into `/input`.
#[utoipa::path(post, path = "/v1/verify", tag = "verification", request_body = VerifyRequest,
    responses((status = 200, body = VerificationReportDoc, description = "the report (passed or not)"),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope), (status = 413, body = crate::error::ErrorEnvelope),
              (status = 422, body = crate::error::ErrorEnvelope, description = "invalid_payload: the input cannot be verified against")),
    security(("bearerAuth" = [])))]
pub async fn verify(
    Extension(principal): Extension<Principal>,
    body: StrictJson<VerifyRequest>,
) -> ApiResult<Json<weft_verify::CapabilityReport>> {
    require(&principal, Scope::Read)?;
    let VerifyRequest {
        capability_id,
        input,
        output,
    } = body.value;
    crate::verification::verify(capability_id, input, output, "/input")
        .await
        .map(Json)
}
