//! Schema compilation: dialect, remote references (with a network canary), regex safety,
//! and the validation API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use serde_json::{Value, json};
use weft_contract::schema::CompiledSchema;
use weft_contract::{Descriptor, Limits, SchemaRole};

fn descriptor_with_input(schema: Value) -> Value {
    json!({
        "id": "probe", "version": "1.0.0", "title": "Probe", "description": "Schema probe.",
        "input_schema": schema
    })
}

fn errors(schema: Value) -> Vec<(String, &'static str, String)> {
    Descriptor::from_value(&descriptor_with_input(schema), &Limits::default())
        .err()
        .map(|e| {
            e.iter()
                .map(|e| (e.pointer.clone(), e.code(), e.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn only_2020_12_is_accepted() {
    for ok in [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
    ] {
        assert!(
            errors(json!({"$schema": ok, "type": "object"})).is_empty(),
            "{ok}"
        );
    }
    let e = errors(json!({"$schema": "http://json-schema.org/draft-07/schema#"}));
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].0, "/input_schema/$schema");
    assert_eq!(e[0].1, "unsupported_dialect");
    assert!(e[0].2.contains("draft-07"), "{}", e[0].2);
    // A nested resource declaring another dialect is refused too.
    let nested = errors(
        json!({"$defs": {"x": {"$id": "urn:x", "$schema": "https://json-schema.org/draft/2019-09/schema"}}}),
    );
    assert_eq!(nested[0].0, "/input_schema/$defs/x/$schema");
    assert_eq!(nested[0].1, "unsupported_dialect");
    // `$schema` inside data keywords is data, not a dialect declaration.
    assert!(errors(json!({"const": {"$schema": "draft-04"}})).is_empty());
}

#[test]
fn invalid_schemas_fail_at_build_time() {
    let e = errors(json!({"type": 12}));
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].1, "invalid_schema");
    assert!(e[0].0.starts_with("/input_schema/type"), "{:?}", e[0]);
    let e = errors(json!({"properties": {"a": {"minLength": -1}}}));
    assert_eq!(e[0].1, "invalid_schema");
    assert!(
        e[0].0.starts_with("/input_schema/properties/a/minLength"),
        "{:?}",
        e[0]
    );
    // A dangling local reference is invalid, not remote.
    let e = errors(json!({"$ref": "#/$defs/missing"}));
    assert_eq!(e[0].1, "invalid_schema", "{:?}", e[0]);
}

#[test]
fn local_references_resolve() {
    assert!(
        errors(
            json!({"$defs": {"t": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/t"}}})
        )
        .is_empty()
    );
    // A subschema identified by $id inside the document.
    let by_id = json!({
        "$id": "https://example.invalid/root.json",
        "$defs": {"item": {"$id": "item.json", "type": "integer"}},
        "items": {"$ref": "item.json"}
    });
    assert!(errors(by_id.clone()).is_empty());
    let d = Descriptor::from_value(&descriptor_with_input(by_id), &Limits::default()).unwrap();
    assert!(d.validate(SchemaRole::Input, &json!([1, 2]), 10).is_ok());
    assert!(d.validate(SchemaRole::Input, &json!([1, "x"]), 10).is_err());
    // Anchors and the 2020-12 meta-schema (bundled, never fetched) are inside the fabric too.
    assert!(
        errors(json!({"$defs": {"a": {"$anchor": "num", "type": "number"}}, "$ref": "#num"}))
            .is_empty()
    );
    assert!(errors(json!({"$ref": "https://json-schema.org/draft/2020-12/schema"})).is_empty());
}

/// A tiny HTTP server that counts every connection it accepts and serves a schema.
struct Canary {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Canary {
    fn start() -> Canary {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let body = r#"{"type": "string"}"#;
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Canary { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// Proves the canary answers, so that a zero count means "never asked".
    fn self_test(&self) {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 200"));
    }
}

#[test]
fn remote_references_are_rejected_and_never_fetched() {
    let canary = Canary::start();
    let cases = [
        json!({"$ref": canary.url("schema.json")}),
        json!({"properties": {"a": {"$ref": canary.url("a.json#/x")}}}),
        json!({"$id": canary.url("root.json"), "items": {"$ref": "other.json"}}),
        json!({"$ref": "other.json"}),
        json!({"$ref": "file:///etc/passwd"}),
        json!({"$dynamicRef": canary.url("dyn.json#meta")}),
        json!({"$defs": {"x": {"$ref": canary.url("deep.json")}}}),
    ];
    for schema in cases {
        let e = errors(schema.clone());
        assert_eq!(e.len(), 1, "{schema}: {e:?}");
        assert_eq!(e[0].1, "remote_reference", "{schema}: {e:?}");
        assert!(e[0].2.contains("never fetches"), "{}", e[0].2);
        // The same refusal from the schema API directly.
        assert!(CompiledSchema::compile(&schema, &Limits::default()).is_err());
    }
    assert_eq!(
        canary.hits.load(Ordering::SeqCst),
        0,
        "a schema build reached the network"
    );
    canary.self_test();
    assert_eq!(canary.hits.load(Ordering::SeqCst), 1);
}

#[test]
fn catastrophic_backtracking_patterns_do_not_hang() {
    // With a backtracking engine `^(a+)+$` against "aaaa…b" takes exponential time; with the
    // linear-time engine this returns at once. A regression shows up as a hung test.
    let schema = json!({
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(x+x+)+y$": {"type": "integer"}}
    });
    let d = Descriptor::from_value(&descriptor_with_input(schema), &Limits::default()).unwrap();
    let evil = format!("{}b", "a".repeat(50_000));
    let key = format!("{}z", "x".repeat(50_000));
    let payload = json!({ "s": evil, key: 1 });
    let e = d.validate(SchemaRole::Input, &payload, 10).unwrap_err();
    assert_eq!(e.errors.len(), 1);
    assert_eq!(e.errors[0].instance_pointer, "/s");
    assert!(
        d.validate(SchemaRole::Input, &json!({"s": "aaaa"}), 10)
            .is_ok()
    );
    // Backtracking-only constructs have no linear-time meaning: refused at build.
    let e = errors(json!({"pattern": "^(?=a)a$"}));
    assert_eq!(e[0].1, "invalid_schema", "{e:?}");
    let e = errors(json!({"pattern": "(a)\\1"}));
    assert_eq!(e[0].1, "invalid_schema", "{e:?}");
}

#[test]
fn validation_reports_every_error_with_pointers() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 2},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["name", "id"],
        "additionalProperties": false
    });
    let d = Descriptor::from_value(&descriptor_with_input(schema), &Limits::default()).unwrap();
    let e = d
        .validate(
            SchemaRole::Input,
            &json!({"name": "x", "tags": ["ok", 3], "extra": true}),
            100,
        )
        .unwrap_err();
    let mut pointers: Vec<&str> = e
        .errors
        .iter()
        .map(|f| f.instance_pointer.as_str())
        .collect();
    pointers.sort();
    assert_eq!(pointers, vec!["", "", "/name", "/tags/1"], "{e:?}");
    assert!(!e.truncated);
    let required = e
        .errors
        .iter()
        .find(|f| f.message.contains("\"id\""))
        .unwrap();
    assert_eq!(required.schema_path, "/required");
    let item = e
        .errors
        .iter()
        .find(|f| f.instance_pointer == "/tags/1")
        .unwrap();
    assert_eq!(item.schema_path, "/properties/tags/items/type");
}

#[test]
fn error_cap_is_exact_at_the_boundary() {
    let schema = json!({"type": "array", "items": {"type": "string"}});
    let d = Descriptor::from_value(&descriptor_with_input(schema), &Limits::default()).unwrap();
    let cap = 5;
    let at_cap: Vec<i32> = (0..5).collect();
    let e = d
        .validate(SchemaRole::Input, &json!(at_cap), cap)
        .unwrap_err();
    assert_eq!((e.errors.len(), e.truncated), (5, false));
    let over: Vec<i32> = (0..6).collect();
    let e = d
        .validate(SchemaRole::Input, &json!(over), cap)
        .unwrap_err();
    assert_eq!((e.errors.len(), e.truncated), (5, true));
    assert_eq!(e.errors[4].instance_pointer, "/4");
}

#[test]
fn roles_without_a_schema_accept_anything() {
    let d = Descriptor::from_value(
        &descriptor_with_input(json!({"type": "object"})),
        &Limits::default(),
    )
    .unwrap();
    assert!(d.schema(SchemaRole::Output).is_none());
    assert!(d.validate(SchemaRole::Output, &json!([1, "x"]), 10).is_ok());
    assert!(d.validate(SchemaRole::Input, &json!([1]), 10).is_err());
}

#[test]
fn format_is_an_annotation() {
    let d = Descriptor::from_value(
        &descriptor_with_input(json!({"type": "string", "format": "email"})),
        &Limits::default(),
    )
    .unwrap();
    assert!(
        d.validate(SchemaRole::Input, &json!("not an email"), 10)
            .is_ok()
    );
}

#[test]
fn validators_are_compiled_once_and_shared_by_clones() {
    let d = Descriptor::from_value(
        &descriptor_with_input(json!({"type": "object"})),
        &Limits::default(),
    )
    .unwrap();
    let copy = d.clone();
    let first = copy.schema(SchemaRole::Input).unwrap();
    let again = d.schema(SchemaRole::Input).unwrap();
    assert!(
        std::ptr::eq(first, again),
        "one compiled validator per descriptor"
    );
    assert!(d.has_schema(SchemaRole::Input) && !d.has_schema(SchemaRole::Output));
}

#[test]
fn encoded_len_matches_the_compact_text() {
    for value in [
        json!(null),
        json!({"a": [1, 2.5, "é\n\"q"], "b": {"c": true}}),
        json!("x".repeat(1000)),
    ] {
        let text = serde_json::to_vec(&value).unwrap_or_default();
        assert_eq!(weft_contract::encoded_len(&value), text.len());
    }
}
