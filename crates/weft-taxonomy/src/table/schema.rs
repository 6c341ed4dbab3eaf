//! A small vocabulary for writing the table's JSON Schemas the way the seed writes them.
//!
//! Inputs are closed (`additionalProperties: false`): a standard input schema states exactly
//! the payloads the standard allows, and a seller's schema must accept at least those (it may
//! accept more). Outputs are open: sellers may return more than the standard names (the seed:
//! "sellers are free to extract beyond the requested set"; "within a major version,
//! capabilities only gain optional fields"), so consumers must tolerate extra fields.

use serde_json::{Map, Value, json};
use weft_contract::schema::DIALECT_2020_12;

/// `{"type": "string"}`.
pub(crate) fn string() -> Value {
    json!({"type": "string"})
}

/// `{"type": "integer"}` (the seed's `int`).
pub(crate) fn integer() -> Value {
    json!({"type": "integer"})
}

/// `{"type": "number"}`.
pub(crate) fn number() -> Value {
    json!({"type": "number"})
}

/// `{"type": "boolean"}`.
pub(crate) fn boolean() -> Value {
    json!({"type": "boolean"})
}

/// `{"type": "object"}` (the seed's bare `object`: any object).
pub(crate) fn any_object() -> Value {
    json!({"type": "object"})
}

/// An array of `items`.
pub(crate) fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// A string from a listed set.
pub(crate) fn one_of(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// A base64 string of the given media type (both keywords are annotations).
pub(crate) fn base64(media_type: Option<&str>) -> Value {
    let mut schema = json!({"type": "string", "contentEncoding": "base64"});
    if let Some(media) = media_type {
        schema["contentMediaType"] = json!(media);
    }
    schema
}

/// Adds a `description` annotation.
pub(crate) fn described(mut schema: Value, text: &str) -> Value {
    schema["description"] = json!(text);
    schema
}

/// Adds any keyword.
pub(crate) fn with(mut schema: Value, keyword: &str, value: Value) -> Value {
    schema[keyword] = value;
    schema
}

/// One property of an object schema.
pub(crate) struct Field {
    name: &'static str,
    required: bool,
    schema: Value,
}

/// A required property (the seed's `name: type`).
pub(crate) fn req(name: &'static str, schema: Value) -> Field {
    Field {
        name,
        required: true,
        schema,
    }
}

/// An optional property (the seed's `name?: type`).
pub(crate) fn opt(name: &'static str, schema: Value) -> Field {
    Field {
        name,
        required: false,
        schema,
    }
}

fn object(fields: Vec<Field>, closed: bool) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        if field.required {
            required.push(Value::String(field.name.to_owned()));
        }
        properties.insert(field.name.to_owned(), field.schema);
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    if closed {
        schema["additionalProperties"] = json!(false);
    }
    schema
}

/// A closed object: exactly these properties (inputs).
pub(crate) fn closed(fields: Vec<Field>) -> Value {
    object(fields, true)
}

/// An open object: at least these properties, more allowed (outputs).
pub(crate) fn open(fields: Vec<Field>) -> Value {
    object(fields, false)
}

/// Marks a root schema as JSON Schema 2020-12.
pub(crate) fn root(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        let mut rooted = Map::new();
        rooted.insert("$schema".into(), json!(DIALECT_2020_12));
        rooted.append(map);
        return Value::Object(rooted);
    }
    schema
}
