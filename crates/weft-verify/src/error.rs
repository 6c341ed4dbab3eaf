//! The one error type: why a verification could not be run at all.
//!
//! A failed check is not an error — it is a report with `passed: false`. These errors mean the
//! question itself was malformed: an unknown row, bindings that do not fit the row, or an input
//! the verifier needs but cannot read.

/// Why [`crate::verify`] could not produce a report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The row pattern is not one of [`crate::ROWS`]; the caller should say "no built-in
    /// verifier" (custom capabilities land here too).
    #[error("no built-in verifier for row `{row}`")]
    UnknownRow {
        /// The row pattern as given.
        row: String,
    },
    /// A placeholder of the row has no bound value.
    #[error("row `{row}` needs a value for placeholder `{placeholder}`")]
    MissingBinding {
        /// The row pattern.
        row: String,
        /// The placeholder name, without braces.
        placeholder: String,
    },
    /// A binding names a placeholder the row does not have.
    #[error("row `{row}` has no placeholder `{placeholder}`")]
    UnexpectedBinding {
        /// The row pattern.
        row: String,
        /// The unexpected placeholder name.
        placeholder: String,
    },
    /// A bound value is outside the placeholder's value set.
    #[error("placeholder `{placeholder}` of row `{row}` cannot be `{value}`: {reason}")]
    InvalidBinding {
        /// The row pattern.
        row: String,
        /// The placeholder name.
        placeholder: String,
        /// The rejected value.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The call's input lacks something the verifier needs, or has it in the wrong form.
    #[error("input {pointer}: {reason}")]
    InvalidInput {
        /// JSON pointer into the input (`""` for the whole input).
        pointer: String,
        /// What is wrong there.
        reason: String,
    },
}

impl VerifyError {
    /// A stable machine-readable code for the error kind.
    pub fn code(&self) -> &'static str {
        match self {
            VerifyError::UnknownRow { .. } => "unknown_row",
            VerifyError::MissingBinding { .. } => "missing_binding",
            VerifyError::UnexpectedBinding { .. } => "unexpected_binding",
            VerifyError::InvalidBinding { .. } => "invalid_binding",
            VerifyError::InvalidInput { .. } => "invalid_input",
        }
    }

    /// An [`VerifyError::InvalidInput`] at `pointer`.
    pub(crate) fn input(pointer: &str, reason: impl Into<String>) -> Self {
        VerifyError::InvalidInput {
            pointer: pointer.to_owned(),
            reason: reason.into(),
        }
    }
}
