//! Verifying a call of a capability named by its id: the taxonomy says which row (if any)
//! the id instantiates, and that row's verifier runs. Ids without a built-in verifier —
//! custom ids, and ids that are not taxonomy ids at all — get a report that says so and
//! does not pass: a caller who asked for verification never mistakes "not verified" for
//! "verified".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use weft_taxonomy::Resolution;

use crate::{Check, VerifyError, VerifyOptions, verify};

/// Whether weft has a verifier for a capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verifier {
    /// The standard row's built-in verifier ran.
    Builtin,
    /// No built-in verifier: a custom capability, or an id outside the taxonomy.
    None,
}

/// The name of the single check a report without a verifier carries.
pub const NO_VERIFIER_CHECK: &str = "builtin_verifier";

/// The verification of one call of one capability id.
///
/// Serializes as `{"capability_id", "verifier", "row"?, "bindings"?, "passed", "checks"}`:
/// the shape of [`crate::VerificationReport`] plus what was verified against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityReport {
    /// The capability id.
    pub capability_id: String,
    /// Whether a built-in verifier ran.
    pub verifier: Verifier,
    /// The taxonomy row the id instantiates, for standard ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// The row's bound placeholders, for standard ids.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub bindings: BTreeMap<String, String>,
    /// True only when a built-in verifier ran and every check passed.
    pub passed: bool,
    /// Every check of the row, or the one check saying there is no verifier.
    pub checks: Vec<Check>,
}

/// Verifies `output` of one call of `capability_id` with `input`.
///
/// `Err` only when the question is malformed for a standard row (see [`verify`]); a custom or
/// non-taxonomy id is a report with `verifier: none` and `passed: false`.
pub fn verify_capability(
    capability_id: &str,
    input: &Value,
    output: &Value,
    options: &VerifyOptions,
) -> Result<CapabilityReport, VerifyError> {
    let without = |why: String| CapabilityReport {
        capability_id: capability_id.to_owned(),
        verifier: Verifier::None,
        row: None,
        bindings: BTreeMap::new(),
        passed: false,
        checks: vec![Check {
            name: NO_VERIFIER_CHECK.to_owned(),
            passed: false,
            detail: why,
        }],
    };
    match weft_taxonomy::resolve(capability_id) {
        Resolution::Standard(standard) => {
            let report = verify(
                standard.row.pattern,
                &standard.bindings,
                input,
                output,
                options,
            )?;
            Ok(CapabilityReport {
                capability_id: capability_id.to_owned(),
                verifier: Verifier::Builtin,
                row: Some(standard.row.pattern.to_owned()),
                bindings: standard.bindings,
                passed: report.passed,
                checks: report.checks,
            })
        }
        Resolution::Custom(custom) => Ok(without(format!(
            "`{}` is a custom capability (provider `{}`): weft has no built-in verifier for it; \
             its verification is defined by the caller",
            custom.id, custom.provider
        ))),
        Resolution::Invalid(invalid) => Ok(without(format!(
            "`{}` is not a standard taxonomy id ({}: {}), so weft has no built-in verifier for it",
            invalid.id,
            invalid.reason.code(),
            invalid.reason
        ))),
    }
}
