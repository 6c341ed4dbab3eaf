//! The JSON shapes the API and the CLI show, so both print the same documents.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::reason::InvalidReason;
use crate::resolve::Resolution;
use crate::table::{Bindings, Row};

/// Whether a value set lists its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SetKind {
    /// Every value is listed.
    Closed,
    /// A rule decides.
    Open,
}

/// One placeholder of a row and the values it accepts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlaceholderView {
    /// The name between the braces.
    pub name: String,
    /// The value set's name (`iso-639-1`, `programming-language`, `host`, …).
    pub set: String,
    /// `closed` (every value listed) or `open` (a rule).
    pub kind: SetKind,
    /// Every value, for a closed set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// Values the seed names for an open set (any value meeting the rule is allowed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub known: Vec<String>,
    /// The rule, in one sentence.
    pub rule: String,
    /// Whether a value may span several dot-separated segments (`1.5`, `example.com`).
    pub spans_segments: bool,
}

/// One row of the standard table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RowView {
    /// The pattern exactly as the seed writes it (`audio.transcribe.{lang}.text`).
    pub pattern: String,
    /// The domain.
    pub domain: String,
    /// The action.
    pub action: String,
    /// The title (placeholders in braces).
    pub title: String,
    /// The placeholders, in pattern order.
    pub placeholders: Vec<PlaceholderView>,
    /// Constraints between placeholders (`{src} ≠ {tgt}`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// A concrete id of the row.
    pub example_id: String,
    /// The seed's Input column.
    pub seed_input: String,
    /// The seed's Output column.
    pub seed_output: String,
    /// The verification rule, verbatim.
    pub verification: String,
    /// Further normative text for the row.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub notes: String,
    /// The input schema with no placeholder bound.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub input_schema: Value,
    /// The output schema with no placeholder bound.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub output_schema: Value,
}

impl RowView {
    /// The view of `row`.
    pub fn of(row: &Row) -> RowView {
        let none = Bindings::new();
        RowView {
            pattern: row.pattern.to_owned(),
            domain: row.domain().to_owned(),
            action: row.action().to_owned(),
            title: row.title.to_owned(),
            placeholders: row
                .placeholders
                .iter()
                .map(|p| PlaceholderView {
                    name: p.name.to_owned(),
                    set: p.set.name().to_owned(),
                    kind: if p.set.is_closed() {
                        SetKind::Closed
                    } else {
                        SetKind::Open
                    },
                    values: p
                        .set
                        .values()
                        .map(|v| v.into_iter().map(str::to_owned).collect()),
                    known: p.set.known().iter().map(|s| (*s).to_owned()).collect(),
                    rule: p.set.rule(),
                    spans_segments: p.set.spans_segments(),
                })
                .collect(),
            constraints: row
                .distinct
                .map(|(a, b)| vec![format!("{{{a}}} ≠ {{{b}}}")])
                .unwrap_or_default(),
            example_id: row.example_id(),
            seed_input: row.seed_input.to_owned(),
            seed_output: row.seed_output.to_owned(),
            verification: row.verification.to_owned(),
            notes: row.notes.to_owned(),
            input_schema: row.input_schema(&none),
            output_schema: row.output_schema(&none),
        }
    }
}

/// Why an id is invalid, for machines and people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReasonView {
    /// Stable code (`unknown_domain`, `placeholder_value`, `no_matching_row`, …).
    pub code: String,
    /// The reason in one sentence.
    pub message: String,
    /// Zero-based segment the reason points at, when it points at one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub segment: Option<usize>,
    /// True when the id breaks the grammar; false when it is well-formed but names nothing
    /// in the table.
    pub malformed: bool,
}

impl ReasonView {
    /// The view of `reason`.
    pub fn of(reason: &InvalidReason) -> ReasonView {
        ReasonView {
            code: reason.code().to_owned(),
            message: reason.to_string(),
            segment: reason.segment(),
            malformed: reason.is_malformed(),
        }
    }
}

/// What an id is to the taxonomy, as JSON (`kind` tells the variant).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClassificationView {
    /// A standard capability.
    Standard {
        /// The row's pattern, exactly as the seed writes it.
        row: String,
        /// Placeholder name (no braces) → bound value.
        bindings: BTreeMap<String, String>,
    },
    /// A custom capability.
    Custom {
        /// The provider segment.
        provider: String,
        /// The capability (everything after the provider).
        capability: String,
    },
    /// Neither.
    Invalid {
        /// Why.
        reason: ReasonView,
    },
}

impl ClassificationView {
    /// The view of `resolution`.
    pub fn of(resolution: &Resolution) -> ClassificationView {
        match resolution {
            Resolution::Standard(s) => ClassificationView::Standard {
                row: s.row.pattern.to_owned(),
                bindings: s.bindings.clone(),
            },
            Resolution::Custom(c) => ClassificationView::Custom {
                provider: c.provider.clone(),
                capability: c.capability.clone(),
            },
            Resolution::Invalid(i) => ClassificationView::Invalid {
                reason: ReasonView::of(&i.reason),
            },
        }
    }
}
