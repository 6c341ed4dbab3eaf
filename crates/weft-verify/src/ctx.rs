//! What a verifier sees: the row, its bindings, the input, the output and the options — and
//! typed access to each.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::VerifyError;
use crate::options::VerifyOptions;

/// One verification request, handed to a row's verifier.
pub(crate) struct Ctx<'a> {
    /// The row pattern (`"text.translate.{src}.{tgt}.{level}"`).
    pub row: &'a str,
    /// Placeholder values, keyed by name without braces.
    pub bindings: &'a BTreeMap<String, String>,
    /// The call's input.
    pub input: &'a Value,
    /// The output under verification.
    pub output: &'a Value,
    /// Limits and tolerances.
    pub options: &'a VerifyOptions,
}

impl<'a> Ctx<'a> {
    /// The value bound to `placeholder` (its presence is checked before dispatch).
    pub fn binding(&self, placeholder: &str) -> Result<&'a str, VerifyError> {
        self.bindings
            .get(placeholder)
            .map(String::as_str)
            .ok_or_else(|| VerifyError::MissingBinding {
                row: self.row.to_owned(),
                placeholder: placeholder.to_owned(),
            })
    }

    /// An [`VerifyError::InvalidBinding`] for `placeholder`.
    pub fn invalid_binding(&self, placeholder: &str, reason: impl Into<String>) -> VerifyError {
        VerifyError::InvalidBinding {
            row: self.row.to_owned(),
            placeholder: placeholder.to_owned(),
            value: self.bindings.get(placeholder).cloned().unwrap_or_default(),
            reason: reason.into(),
        }
    }

    /// The input member `key`, if present and not null.
    pub fn input_opt(&self, key: &str) -> Option<&'a Value> {
        self.input.get(key).filter(|value| !value.is_null())
    }

    /// The required string input member `key`.
    pub fn input_str(&self, key: &str) -> Result<&'a str, VerifyError> {
        match self.input_opt(key) {
            Some(value) => value
                .as_str()
                .ok_or_else(|| VerifyError::input(&pointer(key), expected("a string", value))),
            None => Err(self.missing(key)),
        }
    }

    /// The optional string input member `key`.
    pub fn input_opt_str(&self, key: &str) -> Result<Option<&'a str>, VerifyError> {
        self.input_opt(key)
            .map(|value| {
                value
                    .as_str()
                    .ok_or_else(|| VerifyError::input(&pointer(key), expected("a string", value)))
            })
            .transpose()
    }

    /// The required integer input member `key`.
    pub fn input_int(&self, key: &str) -> Result<i64, VerifyError> {
        self.input_opt_int(key)?.ok_or_else(|| self.missing(key))
    }

    /// The optional integer input member `key`.
    pub fn input_opt_int(&self, key: &str) -> Result<Option<i64>, VerifyError> {
        self.input_opt(key)
            .map(|value| {
                as_integer(value)
                    .ok_or_else(|| VerifyError::input(&pointer(key), expected("an integer", value)))
            })
            .transpose()
    }

    /// The required array input member `key`.
    pub fn input_array(&self, key: &str) -> Result<&'a Vec<Value>, VerifyError> {
        match self.input_opt(key) {
            Some(value) => value
                .as_array()
                .ok_or_else(|| VerifyError::input(&pointer(key), expected("an array", value))),
            None => Err(self.missing(key)),
        }
    }

    fn missing(&self, key: &str) -> VerifyError {
        if self.input.is_object() {
            VerifyError::input(&pointer(key), "is required")
        } else {
            VerifyError::input("", expected("an object", self.input))
        }
    }
}

/// The JSON pointer of a top-level member.
pub(crate) fn pointer(key: &str) -> String {
    format!("/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// "expected X, found Y" for a value of the wrong kind.
pub(crate) fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {}", kind_name(found))
}

/// The JSON kind of a value, for details.
pub(crate) fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(number) if number.is_f64() => "a non-integer number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An integer value: a JSON integer, or a number with no fractional part (as JSON Schema's
/// `integer` accepts `5.0`).
pub(crate) fn as_integer(value: &Value) -> Option<i64> {
    if let Some(integer) = value.as_i64() {
        return Some(integer);
    }
    let float = value.as_f64()?;
    // Beyond ±2^53 a float has no fractional part but is no faithful integer either.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    (float.fract() == 0.0 && float.abs() <= EXACT).then_some(float as i64)
}
