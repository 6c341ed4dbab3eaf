//! JSON types as bit sets, and the `type` keyword (`integer` is a subset of `number`).

use serde_json::{Map, Value};

use super::{Ctx, Loc, Side, child, resolve};

pub(crate) const NULL: u8 = 1;
pub(crate) const BOOLEAN: u8 = 1 << 1;
/// Numbers with no fractional part (`integer`).
pub(crate) const INTEGER: u8 = 1 << 2;
/// Numbers with a fractional part.
pub(crate) const FRACTION: u8 = 1 << 3;
pub(crate) const NUMBER: u8 = INTEGER | FRACTION;
pub(crate) const STRING: u8 = 1 << 4;
pub(crate) const ARRAY: u8 = 1 << 5;
pub(crate) const OBJECT: u8 = 1 << 6;
pub(crate) const ALL: u8 = NULL | BOOLEAN | NUMBER | STRING | ARRAY | OBJECT;

/// The bits of one `type` name.
fn bits_of(name: &str) -> u8 {
    match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "integer" => INTEGER,
        "number" => NUMBER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => 0,
    }
}

/// The type bit of a value.
pub(crate) fn type_of(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                INTEGER
            } else {
                FRACTION
            }
        }
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

/// The types a schema can accept, from `type`, `enum`/`const`, and the types of its
/// `$ref`, `allOf`, `anyOf` and `oneOf` subschemas. An over-approximation: any type the
/// schema accepts is in the set.
pub(crate) fn types(root: &Value, schema: &Value, depth: usize) -> u8 {
    let map = match schema {
        Value::Bool(false) => return 0,
        Value::Object(map) => map,
        _ => return ALL,
    };
    if depth > 16 {
        return ALL;
    }
    let mut set = match map.get("type") {
        Some(Value::String(name)) => bits_of(name),
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .fold(0, |acc, n| acc | bits_of(n)),
        _ => ALL,
    };
    if let Some(values) = super::scalar::finite(map) {
        set &= values.iter().fold(0, |acc, v| acc | type_of(v));
    }
    if let Some(Value::String(reference)) = map.get("$ref")
        && let Some((target, _)) = resolve(root, reference, "")
    {
        set &= types(root, target, depth + 1);
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(keyword) {
            set &= branches
                .iter()
                .fold(0, |acc, b| acc | types(root, b, depth + 1));
        }
    }
    if let Some(Value::Array(branches)) = map.get("allOf") {
        for branch in branches {
            set &= types(root, branch, depth + 1);
        }
    }
    set
}

/// Names a type set (`number`, `integer`, `string or null`).
pub(crate) fn render(set: u8) -> String {
    if set == ALL {
        return "any type".to_owned();
    }
    if set == 0 {
        return "no type".to_owned();
    }
    let mut names = Vec::new();
    for (bits, name) in [
        (NULL, "null"),
        (BOOLEAN, "boolean"),
        (STRING, "string"),
        (ARRAY, "array"),
        (OBJECT, "object"),
    ] {
        if set & bits != 0 {
            names.push(name);
        }
    }
    match set & NUMBER {
        NUMBER => names.push("number"),
        INTEGER => names.push("integer"),
        FRACTION => names.push("non-integer number"),
        _ => {}
    }
    names.join(" or ")
}

/// A value of the first type in `set`, described for a witness.
fn example(set: u8) -> &'static str {
    for (bits, text) in [
        (FRACTION, "1.5"),
        (INTEGER, "1"),
        (STRING, "a string"),
        (NULL, "null"),
        (BOOLEAN, "true"),
        (OBJECT, "an object"),
        (ARRAY, "an array"),
    ] {
        if set & bits != 0 {
            return text;
        }
    }
    "a value"
}

impl Ctx<'_> {
    /// Compares the type sets of the pair.
    pub(super) fn type_keyword(
        &mut self,
        old_t: u8,
        new_t: u8,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        loc: &Loc,
    ) {
        if old_t == new_t {
            return;
        }
        let lost = old_t & !new_t;
        let gained = new_t & !old_t;
        let side = |bits: u8, at: &str| {
            if bits == 0 {
                Side::Empty
            } else {
                Side::Witness(format!("{at} is {}", example(bits)))
            }
        };
        let at = self.at();
        let change = match (lost != 0, gained != 0) {
            (true, false) => "type_narrowed",
            (false, true) => "type_widened",
            _ => "type_changed",
        };
        let path = if n.contains_key("type") || !o.contains_key("type") {
            child(&loc.new, "type")
        } else {
            child(&loc.old, "type")
        };
        self.judge(
            path,
            change,
            format!("`type` changed from {} to {}", render(old_t), render(new_t)),
            side(lost, &at),
            side(gained, &at),
        );
    }
}
