//! The taxonomy binding at the node's edge: every descriptor set about to be registered
//! (over `PUT /v1/providers/{id}` or from a managed child's handshake) is checked with
//! `weft_taxonomy::bind` under the node's `taxonomy` mode before the registry sees it.
//!
//! The rule lives in `weft-taxonomy`; this module only turns its answers into the API's
//! error (`taxonomy_mismatch`, 422, every problem in `details.problems`) and warnings.
//! Doing it here keeps `weft-registry` free of taxonomy knowledge: the registry stores
//! whatever descriptors it is handed, the edge decides which ones may be handed over.

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;
use weft_contract::Descriptor;
use weft_taxonomy::{BindingError, BindingMode, bind};

use crate::error::ApiError;

/// A descriptor accepted under advisory mode although its id breaks the rule
/// "non-standard ids in a standard domain must use `custom.`".
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaxonomyWarning {
    /// Index of the descriptor in the request.
    pub index: usize,
    /// Its id.
    pub id: String,
    /// JSON pointer into the request (`/descriptors/0/id`).
    pub pointer: String,
    /// Why the id is not a taxonomy id (`no_matching_row`, `unknown_action`, …).
    pub code: String,
    /// The reason in one sentence.
    pub message: String,
}

/// Checks every descriptor; all problems are collected. `Ok` carries the warnings of
/// advisory mode; `Err` is `taxonomy_mismatch` (or `internal` for a defect in the table).
pub fn check(
    mode: BindingMode,
    descriptors: &[Descriptor],
) -> Result<Vec<TaxonomyWarning>, ApiError> {
    let mut problems: Vec<Value> = Vec::new();
    let mut warnings = Vec::new();
    for (index, descriptor) in descriptors.iter().enumerate() {
        let base = format!("/descriptors/{index}");
        match bind(descriptor, mode) {
            Ok(binding) => {
                if let Some(invalid) = binding.warning() {
                    warnings.push(TaxonomyWarning {
                        index,
                        id: invalid.id.clone(),
                        pointer: format!("{base}/id"),
                        code: invalid.reason.code().to_owned(),
                        message: invalid.reason.to_string(),
                    });
                }
            }
            Err(BindingError::SchemaMismatch { id, row, findings }) => {
                problems.extend(findings.iter().map(|f| {
                    json!({"index": index, "id": id, "row": row,
                           "pointer": format!("{base}{}", f.path), "code": f.change,
                           "effect": f.effect.as_str(), "message": f.reason})
                }));
            }
            Err(BindingError::NonStandard(invalid)) => problems.push(json!({
                "index": index, "id": invalid.id, "pointer": format!("{base}/id"),
                "code": invalid.reason.code(), "message": invalid.reason.to_string(),
            })),
            Err(error @ BindingError::Table { .. }) => {
                tracing::error!(%error, "a standard descriptor failed weft's rules");
                return Err(ApiError::new(
                    "internal",
                    "internal error; see the server log",
                ));
            }
        }
    }
    if problems.is_empty() {
        return Ok(warnings);
    }
    Err(ApiError::new(
        "taxonomy_mismatch",
        format!(
            "{} problem(s) with the standard capability taxonomy (docs/taxonomy.md); nothing was \
             published",
            problems.len()
        ),
    )
    .with_details(json!({ "problems": problems })))
}
