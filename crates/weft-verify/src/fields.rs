//! Reading the output under verification: each accessor returns the failure detail a check
//! reports when the field is missing or of the wrong kind.

use serde_json::Value;

use crate::ctx::{as_integer, expected};
use crate::report::Outcome;

/// What kind a field of the output must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string.
    Str,
    /// An integer (`5.0` counts, as in JSON Schema).
    Int,
    /// Any number.
    Num,
    /// `true` or `false`.
    Bool,
    /// An array.
    Arr,
    /// An object.
    Obj,
    /// An array whose every item is a number.
    NumArr,
    /// An array whose every item is a string.
    StrArr,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Int => "an integer",
            Kind::Num => "a number",
            Kind::Bool => "a boolean",
            Kind::Arr => "an array",
            Kind::Obj => "an object",
            Kind::NumArr => "an array of numbers",
            Kind::StrArr => "an array of strings",
        }
    }

    fn admits(self, value: &Value) -> bool {
        match self {
            Kind::Str => value.is_string(),
            Kind::Int => as_integer(value).is_some(),
            Kind::Num => value.is_number(),
            Kind::Bool => value.is_boolean(),
            Kind::Arr => value.is_array(),
            Kind::Obj => value.is_object(),
            Kind::NumArr => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_number)),
            Kind::StrArr => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
        }
    }
}

/// One field of an output shape: a JSON pointer, its kind, and whether it must be present.
pub(crate) type Field = (&'static str, Kind, bool);

/// The `output_shape` check: the output is an object and every listed field is present (when
/// required) and of its kind (when present and not null for optional fields).
pub(crate) fn shape(output: &Value, fields: &[Field]) -> Outcome {
    if !output.is_object() {
        return Err(format!("output: {}", expected("an object", output)));
    }
    let mut problems = Vec::new();
    for &(pointer, kind, required) in fields {
        match output.pointer(pointer) {
            None if required => problems.push(format!("{pointer} is missing")),
            Some(Value::Null) if !required => {}
            Some(value) if !kind.admits(value) => {
                problems.push(format!("{pointer}: {}", expected(kind.describe(), value)));
            }
            _ => {}
        }
    }
    if problems.is_empty() {
        Ok(format!(
            "object with {}",
            fields
                .iter()
                .map(|(pointer, kind, _)| format!("{pointer} ({})", kind.describe()))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    } else {
        Err(problems.join("; "))
    }
}

/// The value at `pointer`, or why there is none.
pub(crate) fn field<'v>(output: &'v Value, pointer: &str) -> Result<&'v Value, String> {
    output
        .pointer(pointer)
        .ok_or_else(|| format!("{pointer} is missing"))
}

/// The string at `pointer`.
pub(crate) fn string<'v>(output: &'v Value, pointer: &str) -> Result<&'v str, String> {
    let value = field(output, pointer)?;
    value
        .as_str()
        .ok_or_else(|| format!("{pointer}: {}", expected("a string", value)))
}

/// The integer at `pointer`.
pub(crate) fn integer(output: &Value, pointer: &str) -> Result<i64, String> {
    let value = field(output, pointer)?;
    as_integer(value).ok_or_else(|| format!("{pointer}: {}", expected("an integer", value)))
}

/// The number at `pointer`.
pub(crate) fn number(output: &Value, pointer: &str) -> Result<f64, String> {
    let value = field(output, pointer)?;
    value
        .as_f64()
        .ok_or_else(|| format!("{pointer}: {}", expected("a number", value)))
}

/// The boolean at `pointer`.
pub(crate) fn boolean(output: &Value, pointer: &str) -> Result<bool, String> {
    let value = field(output, pointer)?;
    value
        .as_bool()
        .ok_or_else(|| format!("{pointer}: {}", expected("a boolean", value)))
}

/// The array at `pointer`.
pub(crate) fn array<'v>(output: &'v Value, pointer: &str) -> Result<&'v Vec<Value>, String> {
    let value = field(output, pointer)?;
    value
        .as_array()
        .ok_or_else(|| format!("{pointer}: {}", expected("an array", value)))
}

/// A check that the string at `pointer` has at least one non-whitespace character.
pub(crate) fn nonempty_text(output: &Value, pointer: &str) -> Outcome {
    let text = string(output, pointer)?;
    if text.trim().is_empty() {
        Err(format!("{pointer} is empty or only whitespace"))
    } else {
        Ok(format!("{pointer} has {} characters", text.chars().count()))
    }
}

/// A check that the number at `pointer` lies in [0, 1].
pub(crate) fn unit_interval(output: &Value, pointer: &str) -> Outcome {
    let value = number(output, pointer)?;
    if (0.0..=1.0).contains(&value) {
        Ok(format!("{pointer} = {value}"))
    } else {
        Err(format!("{pointer} = {value}, outside [0, 1]"))
    }
}
