//! Why an id is not a taxonomy id: one variant per rule, each with a stable code.

use thiserror::Error;

use crate::{CUSTOM_FORM, DOMAINS, MAX_ID_LEN};

/// The sentence every "not in the table" reason ends with.
pub const USE_CUSTOM: &str = "non-standard capabilities must use custom.<provider>.<capability>";

/// Why an id is not a standard or custom taxonomy id.
///
/// Segment indexes are zero-based positions in the dot-separated id (`0` is the domain).
/// [`InvalidReason::is_malformed`] separates ids that break the grammar from well-formed ids
/// that name nothing in the table.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InvalidReason {
    /// The id is empty.
    #[error("the id is empty")]
    Empty,
    /// The id is longer than [`MAX_ID_LEN`] characters.
    #[error("the id is {len} characters long; the limit is {MAX_ID_LEN}")]
    TooLong {
        /// Its length, in characters.
        len: usize,
    },
    /// A segment is empty (a leading, trailing or doubled dot).
    #[error("segment {segment} is empty (a leading, trailing or doubled '.')")]
    EmptySegment {
        /// Which segment.
        segment: usize,
    },
    /// A segment has an uppercase letter.
    #[error("segment {segment} `{text}` has uppercase letters; taxonomy ids are lowercase")]
    Uppercase {
        /// Which segment.
        segment: usize,
        /// The segment.
        text: String,
    },
    /// A segment has a character outside `a-z`, `0-9`, `-` and `_`.
    #[error(
        "segment {segment} `{text}` contains {found:?}; segments are made of a-z, 0-9, '-' and '_'"
    )]
    BadCharacter {
        /// Which segment.
        segment: usize,
        /// The segment.
        text: String,
        /// The offending character.
        found: char,
    },
    /// A segment starts with `-` or `_`.
    #[error("segment {segment} `{text}` must start with a letter or digit")]
    BadSegmentStart {
        /// Which segment.
        segment: usize,
        /// The segment.
        text: String,
    },
    /// Only a domain, no action.
    #[error(
        "`{domain}` is a domain without an action: ids are <domain>.<action>[.<modifier>]*[.<format>]"
    )]
    MissingAction {
        /// The domain.
        domain: String,
    },
    /// `custom.` without a provider and a capability.
    #[error("custom ids are {CUSTOM_FORM}, with a provider and at least one capability segment")]
    CustomIncomplete,
    /// The provider of a custom id is not a slug.
    #[error(
        "the provider `{provider}` of a custom id must be a slug (a-z, 0-9 and single '-' between them)"
    )]
    BadProvider {
        /// The provider segment.
        provider: String,
    },
    /// The first segment is neither a standard domain nor `custom`.
    #[error("unknown domain `{domain}`: the standard domains are {}; out-of-tree capabilities use {CUSTOM_FORM}", DOMAINS.join(", "))]
    UnknownDomain {
        /// The first segment.
        domain: String,
    },
    /// A standard domain with no rows in this version (`exec`).
    #[error("the {domain} domain has no standard capabilities in taxonomy v0.1; {USE_CUSTOM}")]
    EmptyDomain {
        /// The domain.
        domain: String,
    },
    /// The action is not one of the domain's.
    #[error("`{action}` is not an action of the {domain} domain (its actions: {}); {USE_CUSTOM}", actions.join(", "))]
    UnknownAction {
        /// The domain.
        domain: String,
        /// The second segment.
        action: String,
        /// The domain's actions.
        actions: Vec<&'static str>,
    },
    /// A placeholder value is outside its set.
    #[error(
        "`{value}` (segment {segment}) is not a valid {{{placeholder}}} for {row}: {rule}; {USE_CUSTOM}"
    )]
    PlaceholderValue {
        /// The segment where the value starts.
        segment: usize,
        /// The row whose placeholder it is.
        row: &'static str,
        /// The placeholder name.
        placeholder: &'static str,
        /// The value found.
        value: String,
        /// What the placeholder accepts, and why this value is not it.
        rule: String,
    },
    /// Two placeholders that must differ are equal (`src` = `tgt`).
    #[error("{{{first}}} and {{{second}}} of {row} must differ; both are `{value}`")]
    SameValue {
        /// The row.
        row: &'static str,
        /// The first placeholder.
        first: &'static str,
        /// The second placeholder.
        second: &'static str,
        /// Their common value.
        value: String,
    },
    /// A standard domain and action, but no row matches.
    #[error("`{id}` matches no row of {domain}.{action} ({}); {USE_CUSTOM}", rows.join(", "))]
    NoMatchingRow {
        /// The id.
        id: String,
        /// The domain.
        domain: String,
        /// The action.
        action: String,
        /// The rows of that domain and action.
        rows: Vec<&'static str>,
    },
}

impl InvalidReason {
    /// The stable code (snake_case).
    pub fn code(&self) -> &'static str {
        match self {
            InvalidReason::Empty => "empty",
            InvalidReason::TooLong { .. } => "too_long",
            InvalidReason::EmptySegment { .. } => "empty_segment",
            InvalidReason::Uppercase { .. } => "uppercase",
            InvalidReason::BadCharacter { .. } => "bad_character",
            InvalidReason::BadSegmentStart { .. } => "bad_segment_start",
            InvalidReason::MissingAction { .. } => "missing_action",
            InvalidReason::CustomIncomplete => "custom_incomplete",
            InvalidReason::BadProvider { .. } => "bad_provider",
            InvalidReason::UnknownDomain { .. } => "unknown_domain",
            InvalidReason::EmptyDomain { .. } => "empty_domain",
            InvalidReason::UnknownAction { .. } => "unknown_action",
            InvalidReason::PlaceholderValue { .. } => "placeholder_value",
            InvalidReason::SameValue { .. } => "same_value",
            InvalidReason::NoMatchingRow { .. } => "no_matching_row",
        }
    }

    /// The segment the reason points at, when it points at one.
    pub fn segment(&self) -> Option<usize> {
        match self {
            InvalidReason::EmptySegment { segment }
            | InvalidReason::Uppercase { segment, .. }
            | InvalidReason::BadCharacter { segment, .. }
            | InvalidReason::BadSegmentStart { segment, .. }
            | InvalidReason::PlaceholderValue { segment, .. } => Some(*segment),
            InvalidReason::UnknownDomain { .. }
            | InvalidReason::EmptyDomain { .. }
            | InvalidReason::MissingAction { .. } => Some(0),
            InvalidReason::UnknownAction { .. } => Some(1),
            InvalidReason::BadProvider { .. } => Some(1),
            InvalidReason::Empty
            | InvalidReason::TooLong { .. }
            | InvalidReason::CustomIncomplete
            | InvalidReason::SameValue { .. }
            | InvalidReason::NoMatchingRow { .. } => None,
        }
    }

    /// Whether the id breaks the grammar (as opposed to being well-formed but naming no row
    /// of the table).
    pub fn is_malformed(&self) -> bool {
        matches!(
            self,
            InvalidReason::Empty
                | InvalidReason::TooLong { .. }
                | InvalidReason::EmptySegment { .. }
                | InvalidReason::Uppercase { .. }
                | InvalidReason::BadCharacter { .. }
                | InvalidReason::BadSegmentStart { .. }
                | InvalidReason::MissingAction { .. }
                | InvalidReason::CustomIncomplete
                | InvalidReason::BadProvider { .. }
        )
    }
}
