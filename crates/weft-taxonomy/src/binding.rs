//! The publish binding: what publishing a descriptor under a taxonomy id commits to.
//!
//! A descriptor published under a **standard** id must honour the standard's contract:
//! its input schema accepts every payload the standard input allows (standard ⊆ published)
//! and its output schema allows only results the standard output allows (published ⊆
//! standard: every field the standard requires is promised, with a compatible type). The
//! check is `weft_compat::compare(standard, published)` — the same directional inclusion
//! engine `weft diff` uses, read as "is the published descriptor a compatible successor of
//! the standard one" — and every finding that is not `compatible` (breaking or unknown)
//! refuses the descriptor. `io_mode` must be `unary`, like the standard's.
//!
//! An id in the taxonomy's namespace that is not a taxonomy id (`image.generate.cartoon.png`,
//! `custom.acme`) breaks the rule "non-standard capabilities must use `custom.`": refused in
//! [`BindingMode::Enforced`], accepted with a warning in [`BindingMode::Advisory`]. Ids
//! outside the namespace (`echo`) and custom ids are not checked.

use serde::{Deserialize, Serialize};
use thiserror::Error;
use weft_compat::{Effect, Finding};
use weft_contract::{Descriptor, DescriptorErrors};

use crate::resolve::{CustomId, InvalidId, Resolution, StandardId, in_namespace, resolve};

/// How the rule "non-standard ids in a standard domain must use `custom.`" is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindingMode {
    /// Refuse the descriptor.
    Enforced,
    /// Accept it and report a warning (the default: ids are opaque tags in weft, and a node
    /// must not start refusing ids it accepted before the taxonomy existed).
    #[default]
    Advisory,
}

impl BindingMode {
    /// Both modes.
    pub const ALL: [BindingMode; 2] = [BindingMode::Enforced, BindingMode::Advisory];

    /// The setting's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            BindingMode::Enforced => "enforced",
            BindingMode::Advisory => "advisory",
        }
    }

    /// Parses `enforced` or `advisory`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// What the binding found for an accepted descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// The id is outside the taxonomy's namespace: nothing to check.
    Outside,
    /// A custom id: its schemas are its own.
    Custom(CustomId),
    /// A standard id whose schemas honour the standard.
    Standard(StandardId),
    /// In the namespace but not a taxonomy id, accepted because the mode is advisory.
    NonStandard(InvalidId),
}

impl Binding {
    /// The warning to report, for [`Binding::NonStandard`].
    pub fn warning(&self) -> Option<&InvalidId> {
        match self {
            Binding::NonStandard(invalid) => Some(invalid),
            _ => None,
        }
    }
}

/// Why a descriptor may not be published under its id.
#[derive(Debug, Clone, Error)]
pub enum BindingError {
    /// A standard id whose schemas do not honour the standard.
    #[error(
        "{id} is the standard capability {row} but its descriptor does not honour the standard \
         contract ({} problem(s))",
        findings.len()
    )]
    SchemaMismatch {
        /// The id.
        id: String,
        /// The row's pattern.
        row: &'static str,
        /// Every breaking or undecided finding, with descriptor pointers.
        findings: Vec<Finding>,
    },
    /// In the namespace but not a taxonomy id, and the mode is enforced.
    #[error("{}: {}", .0.id, .0.reason)]
    NonStandard(InvalidId),
    /// The standard descriptor itself failed weft's rules (a defect in the table).
    #[error("the standard descriptor for {id} is invalid: {errors}")]
    Table {
        /// The id.
        id: String,
        /// What weft's rules found.
        errors: DescriptorErrors,
    },
}

/// Checks what publishing `descriptor` under its id commits to.
pub fn bind(descriptor: &Descriptor, mode: BindingMode) -> Result<Binding, BindingError> {
    let id = descriptor.id().as_str();
    if !in_namespace(id) {
        return Ok(Binding::Outside);
    }
    match resolve(id) {
        Resolution::Custom(custom) => Ok(Binding::Custom(custom)),
        Resolution::Invalid(invalid) => match mode {
            BindingMode::Enforced => Err(BindingError::NonStandard(invalid)),
            BindingMode::Advisory => Ok(Binding::NonStandard(invalid)),
        },
        Resolution::Standard(standard) => {
            let findings = conformance(&standard, descriptor)?;
            if findings.is_empty() {
                Ok(Binding::Standard(standard))
            } else {
                Err(BindingError::SchemaMismatch {
                    id: standard.id.clone(),
                    row: standard.row.pattern,
                    findings,
                })
            }
        }
    }
}

/// Every way `published` fails to honour the standard contract of `standard` (empty when
/// it honours it): the non-compatible findings of `compare(standard, published)`.
pub fn conformance(
    standard: &StandardId,
    published: &Descriptor,
) -> Result<Vec<Finding>, BindingError> {
    let reference = standard
        .descriptor()
        .map_err(|errors| BindingError::Table {
            id: standard.id.clone(),
            errors,
        })?;
    Ok(weft_compat::compare(&reference, published)
        .findings
        .into_iter()
        .filter(|f| f.effect != Effect::Compatible)
        .collect())
}
