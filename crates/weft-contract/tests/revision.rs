//! The revision: reproducible, order-insensitive, drift-sensitive.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};

fn echo() -> Value {
    json!({
        "id": "echo", "version": "1.0.0", "title": "Echo",
        "description": "Return the supplied text unchanged.", "io_mode": "unary",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"], "additionalProperties": false},
        "output_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                          "required": ["text"], "additionalProperties": false}
    })
}

fn revision(value: &Value) -> String {
    Descriptor::from_value(value, &Limits::default())
        .unwrap()
        .revision()
        .to_string()
}

/// Computed outside Rust: Python's `json.dumps(d, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=False)` equals RFC 8785 for these documents (integers and ASCII keys only),
/// then `hashlib.sha256`.
#[test]
fn revision_matches_an_independent_implementation() {
    assert_eq!(
        revision(&echo()),
        "sha256:4aa96578e44d75552600eda339ea978306720ec7d30e807da5fe457c80f56575"
    );
    let tricky = json!({
        "id": "t", "version": "1.0.0", "title": "Ünïcødé ☃",
        "description": "line\nbreak \"q\" \u{2028} <&>",
        "input_schema": {"minimum": 0.5, "maximum": 100.0}
    });
    assert_eq!(
        revision(&tricky),
        "sha256:5e740426b1e2d07ae2cb3542773a6738f75a7595b937fc76c71dd5a5f1a46d8e"
    );
}

#[test]
fn canonical_json_is_the_documented_form() {
    let d = Descriptor::from_value(&echo(), &Limits::default()).unwrap();
    let text = String::from_utf8(d.canonical_json()).unwrap();
    assert!(text.starts_with(r#"{"description":"Return the supplied text unchanged.","id":"echo","input_schema":{"additionalProperties":false,"#));
    assert!(text.contains(r#""io_mode":"unary""#));
    assert!(!text.contains("annotations"));
}

#[test]
fn io_mode_is_always_part_of_the_revision() {
    let mut implicit = echo();
    implicit.as_object_mut().unwrap().remove("io_mode");
    assert_eq!(revision(&implicit), revision(&echo()));
}

#[test]
fn key_order_whitespace_and_number_spelling_do_not_matter() {
    let reordered = r#"
    {
        "output_schema": {"additionalProperties": false, "required": ["text"],
                          "properties": {"text": {"type": "string"}}, "type": "object"},
        "input_schema":  {"required": ["text"], "type": "object", "additionalProperties": false,
                          "properties": {"text": {"type": "string"}}},
        "io_mode": "unary",
        "description": "Return the supplied text unchanged.",
        "title": "Echo", "version": "1.0.0", "id": "echo"
    }"#;
    assert_eq!(
        revision(&serde_json::from_str(reordered).unwrap()),
        revision(&echo())
    );

    let mut a = echo();
    a["input_schema"]["properties"]["text"]["maxLength"] = serde_json::from_str("1.0").unwrap();
    let mut b = echo();
    b["input_schema"]["properties"]["text"]["maxLength"] = serde_json::from_str("1").unwrap();
    let mut c = echo();
    c["input_schema"]["properties"]["text"]["maxLength"] = serde_json::from_str("1e0").unwrap();
    assert_eq!(revision(&a), revision(&b));
    assert_eq!(revision(&a), revision(&c));
}

#[test]
fn any_change_to_any_field_changes_the_revision() {
    let base = revision(&echo());
    let edits: Vec<(&str, Value)> = vec![
        ("id", json!("echo2")),
        ("version", json!("1.0.1")),
        ("title", json!("Echo ")),
        ("description", json!("Return the supplied text, unchanged.")),
        ("input_schema", json!({"type": "object"})),
        ("output_schema", json!({"type": "object"})),
        ("annotations", json!({"latency": "interactive"})),
    ];
    let mut seen = std::collections::HashSet::new();
    seen.insert(base.clone());
    for (field, value) in edits {
        let mut d = echo();
        d[field] = value;
        let r = revision(&d);
        assert!(
            seen.insert(r),
            "editing {field} must give a new, distinct revision"
        );
    }
    // io_mode and the chunk schemas that come with it.
    let mut streaming = echo();
    streaming["io_mode"] = json!("server_streaming");
    streaming["output_chunk_schema"] = json!({"type": "object"});
    assert!(seen.insert(revision(&streaming)));
    let mut other_chunk = streaming.clone();
    other_chunk["output_chunk_schema"] = json!({"type": "object", "required": ["t"]});
    assert!(seen.insert(revision(&other_chunk)));
    let mut annotated = echo();
    annotated["annotations"] = json!({"latency": "batch"});
    assert!(seen.insert(revision(&annotated)));
}

#[test]
fn revision_survives_round_trips() {
    let d = Descriptor::from_value(&echo(), &Limits::default()).unwrap();
    // Through the canonical value.
    let again = Descriptor::from_value(&d.canonical_value(), &Limits::default()).unwrap();
    assert_eq!(again.revision(), d.revision());
    // Through serde serialization and text.
    let text = serde_json::to_string_pretty(&d).unwrap();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    let third = Descriptor::from_value(&parsed, &Limits::default()).unwrap();
    assert_eq!(third.revision(), d.revision());
    assert_eq!(third.canonical_json(), d.canonical_json());
}
