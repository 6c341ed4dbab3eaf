//! Verification of call results against the standard taxonomy's rules, at the node's edge:
//! `POST /v1/verify` (any input/output pair) and the per-call opt-in (`"verify": true` in a
//! unary call envelope), which attaches the report to the result.
//!
//! The rules live in `weft-verify`; this module decides what the node does with a report.
//! Under [`VerificationMode::Strict`] a failed built-in verification turns the call into
//! `invalid_result` (502) with the report in `details.verification`; under
//! [`VerificationMode::Report`] (the default) the report is attached and the result
//! delivered. Capabilities without a built-in verifier (custom ids, ids outside the
//! taxonomy) are never failed for it: their report says `verifier: none`. Verifiers decode
//! images and audio and parse code, so they run on the blocking pool, never on the async
//! workers.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use weft_verify::{CapabilityReport, Verifier, VerifyError, VerifyOptions, verify_capability};

use crate::error::ApiError;

/// What the node does with a failed verification of a call that asked for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerificationMode {
    /// Attach the report; deliver the result either way (the default).
    #[default]
    Report,
    /// A failed built-in verification is `invalid_result`: the caller never gets a result
    /// that broke its capability's standard rule.
    Strict,
}

impl VerificationMode {
    /// Both modes.
    pub const ALL: [VerificationMode; 2] = [VerificationMode::Report, VerificationMode::Strict];

    /// The setting's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            VerificationMode::Report => "report",
            VerificationMode::Strict => "strict",
        }
    }

    /// Parses `report` or `strict`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// The malformed-question error of a standard row as the API's `invalid_payload` (422),
/// pointing into the request at `input_at` (the verifier's pointers are into the input).
fn question_error(error: &VerifyError, input_at: &str) -> ApiError {
    let mut details = json!({"code": error.code()});
    if let VerifyError::InvalidInput { pointer, .. } = error {
        details["pointer"] = Value::from(format!("{input_at}{pointer}"));
    }
    ApiError::new(
        "invalid_payload",
        format!("cannot verify with this input: {error}"),
    )
    .with_details(details)
}

/// Runs the verifier for `capability_id` on the blocking pool.
pub async fn verify(
    capability_id: String,
    input: Value,
    output: Value,
    input_at: &'static str,
) -> Result<CapabilityReport, ApiError> {
    tokio::task::spawn_blocking(move || {
        verify_capability(&capability_id, &input, &output, &VerifyOptions::default())
    })
    .await
    .map_err(|e| ApiError::new("internal", format!("verification task failed: {e}")))?
    .map_err(|e| question_error(&e, input_at))
}

/// Verifies a unary call's result and applies the node's mode: the report to attach, or
/// `invalid_result` when strict and a built-in verification failed.
pub async fn verify_call(
    mode: VerificationMode,
    capability_id: &str,
    payload: Value,
    result: &Value,
) -> Result<Value, ApiError> {
    let report = verify(
        capability_id.to_owned(),
        payload,
        result.clone(),
        "/payload",
    )
    .await?;
    let failed = report.verifier == Verifier::Builtin && !report.passed;
    let report = serde_json::to_value(&report)
        .map_err(|e| ApiError::new("internal", format!("could not encode the report: {e}")))?;
    if failed && mode == VerificationMode::Strict {
        return Err(ApiError::new(
            "invalid_result",
            format!(
                "the provider's result failed the standard verification of {capability_id}; \
                 the node is strict, so the result is withheld"
            ),
        )
        .with_details(json!({ "verification": report })));
    }
    Ok(report)
}
