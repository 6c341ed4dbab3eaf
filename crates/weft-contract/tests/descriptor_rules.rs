//! Every descriptor rule, checked through the public API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use weft_contract::{Descriptor, IoMode, Limits, SchemaRole};

fn echo() -> Value {
    json!({
        "id": "echo",
        "version": "1.0.0",
        "title": "Echo",
        "description": "Return the supplied text unchanged.",
        "io_mode": "unary",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        },
        "output_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        }
    })
}

fn build(value: &Value) -> Result<Descriptor, Vec<(String, &'static str)>> {
    Descriptor::from_value(value, &Limits::default())
        .map_err(|e| e.iter().map(|e| (e.pointer.clone(), e.code())).collect())
}

fn with(field: &str, value: Value) -> Value {
    let mut d = echo();
    d[field] = value;
    d
}

fn codes_of(value: &Value) -> Vec<(String, &'static str)> {
    build(value).expect_err("descriptor should be rejected")
}

#[test]
fn the_seed_echo_descriptor_builds() {
    let d = build(&echo()).unwrap();
    assert_eq!(d.qualified_id().to_string(), "echo@1.0.0");
    assert_eq!(d.io_mode(), IoMode::Unary);
    assert!(d.revision().as_str().starts_with("sha256:"));
    assert_eq!(d.revision().as_str().len(), 7 + 64);
}

#[test]
fn each_bad_id_is_rejected_at_id() {
    for bad in [
        "",
        "Has Space",
        "UPPER",
        "-leading",
        "\t",
        "a\tb",
        "a/b",
        "a@b",
    ] {
        assert_eq!(
            codes_of(&with("id", json!(bad))),
            vec![("/id".to_owned(), "invalid_id")],
            "{bad:?}"
        );
    }
    assert_eq!(
        codes_of(&with("id", json!("a".repeat(129)))),
        vec![("/id".to_owned(), "invalid_id")]
    );
    assert!(build(&with("id", json!("a".repeat(128)))).is_ok());
    for good in [
        "stt.realtime",
        "embeddings:bge-m3",
        "feature:tool-use",
        "image.generate.photorealistic.png",
    ] {
        assert!(build(&with("id", json!(good))).is_ok(), "{good}");
    }
}

#[test]
fn each_bad_version_is_rejected_at_version() {
    for bad in ["1", "1.0", "v1.0.0", "", "1.0.0+b1", "1.0.0-", "01.0.0"] {
        assert_eq!(
            codes_of(&with("version", json!(bad))),
            vec![("/version".to_owned(), "invalid_version")],
            "{bad:?}"
        );
    }
    for good in ["0.1.0", "1.0.0-beta", "2.3.4-rc.1"] {
        assert!(build(&with("version", json!(good))).is_ok(), "{good}");
    }
}

#[test]
fn blank_title_and_description_are_rejected() {
    for field in ["title", "description"] {
        for blank in ["", " ", "\t\n  "] {
            assert_eq!(
                codes_of(&with(field, json!(blank))),
                vec![(format!("/{field}"), "blank_field")],
                "{field} = {blank:?}"
            );
        }
    }
}

#[test]
fn missing_required_fields_are_each_named() {
    for field in ["id", "version", "title", "description", "input_schema"] {
        let mut d = echo();
        d.as_object_mut().unwrap().remove(field);
        assert_eq!(codes_of(&d), vec![(format!("/{field}"), "missing_field")]);
        // null means the same as absent.
        assert_eq!(
            codes_of(&with(field, Value::Null)),
            vec![(format!("/{field}"), "missing_field")]
        );
    }
}

#[test]
fn wrong_types_are_reported() {
    assert_eq!(
        codes_of(&with("id", json!(7))),
        vec![("/id".to_owned(), "invalid_type")]
    );
    assert_eq!(
        codes_of(&with("input_schema", json!(true))),
        vec![("/input_schema".to_owned(), "invalid_type")]
    );
    assert_eq!(
        codes_of(&with("output_schema", json!("x"))),
        vec![("/output_schema".to_owned(), "invalid_type")]
    );
    assert_eq!(
        codes_of(&with("io_mode", json!(1))),
        vec![("/io_mode".to_owned(), "invalid_type")]
    );
    assert_eq!(
        codes_of(&with("annotations", json!([]))),
        vec![("/annotations".to_owned(), "invalid_type")]
    );
    assert_eq!(
        codes_of(&with("annotations", json!({"ok": "x", "bad": 1}))),
        vec![("/annotations/bad".to_owned(), "invalid_type")]
    );
    let top = build(&json!([1])).unwrap_err();
    assert_eq!(top, vec![(String::new(), "invalid_type")]);
}

#[test]
fn unknown_fields_are_errors_and_every_problem_is_listed() {
    let mut d = echo();
    d["streaming"] = json!(true);
    d["a/b"] = json!(1);
    d["id"] = json!("UPPER");
    d["title"] = json!(" ");
    let mut got = codes_of(&d);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("/a~1b".to_owned(), "unknown_field"),
            ("/id".to_owned(), "invalid_id"),
            ("/streaming".to_owned(), "unknown_field"),
            ("/title".to_owned(), "blank_field"),
        ]
    );
}

#[test]
fn io_mode_must_be_one_of_four() {
    assert_eq!(
        codes_of(&with("io_mode", json!("streaming"))),
        vec![("/io_mode".to_owned(), "invalid_io_mode")]
    );
    let mut d = echo();
    d.as_object_mut().unwrap().remove("io_mode");
    assert_eq!(build(&d).unwrap().io_mode(), IoMode::Unary);
}

#[test]
fn chunk_schemas_pair_with_every_io_mode() {
    let chunk = json!({"type": "object"});
    for mode in IoMode::ALL {
        for input_chunk in [false, true] {
            for output_chunk in [false, true] {
                let mut d = with("io_mode", json!(mode.as_str()));
                if input_chunk {
                    d["input_chunk_schema"] = chunk.clone();
                }
                if output_chunk {
                    d["output_chunk_schema"] = chunk.clone();
                }
                let mut expected = Vec::new();
                match (mode.has_input_chunks(), input_chunk) {
                    (true, false) => {
                        expected.push(("/input_chunk_schema".to_owned(), "chunk_schema_required"))
                    }
                    (false, true) => {
                        expected.push(("/input_chunk_schema".to_owned(), "chunk_schema_forbidden"))
                    }
                    _ => {}
                }
                match (mode.has_output_chunks(), output_chunk) {
                    (true, false) => {
                        expected.push(("/output_chunk_schema".to_owned(), "chunk_schema_required"))
                    }
                    (false, true) => {
                        expected.push(("/output_chunk_schema".to_owned(), "chunk_schema_forbidden"))
                    }
                    _ => {}
                }
                let got = build(&d).err().unwrap_or_default();
                assert_eq!(got, expected, "{mode} in={input_chunk} out={output_chunk}");
                if expected.is_empty() {
                    let built = build(&d).unwrap();
                    assert_eq!(built.schema(SchemaRole::InputChunk).is_some(), input_chunk);
                    assert_eq!(
                        built.schema(SchemaRole::OutputChunk).is_some(),
                        output_chunk
                    );
                }
            }
        }
    }
    // A null chunk schema is absent, so it satisfies "forbidden".
    assert!(build(&with("input_chunk_schema", Value::Null)).is_ok());
}

#[test]
fn null_absent_and_empty_annotations_are_the_same_descriptor() {
    let base = build(&echo()).unwrap();
    let mut d = echo();
    d["annotations"] = json!({});
    d["input_chunk_schema"] = Value::Null;
    assert_eq!(build(&d).unwrap().revision(), base.revision());
    d["annotations"] = Value::Null;
    assert_eq!(build(&d).unwrap().revision(), base.revision());
    let mut no_output = echo();
    no_output.as_object_mut().unwrap().remove("output_schema");
    let mut null_output = echo();
    null_output["output_schema"] = Value::Null;
    assert_eq!(
        build(&no_output).unwrap().revision(),
        build(&null_output).unwrap().revision()
    );
    assert_ne!(build(&no_output).unwrap().revision(), base.revision());
}

#[test]
fn annotations_are_kept_verbatim() {
    let d = build(&with(
        "annotations",
        json!({"latency": "interactive", "Odd Key": ""}),
    ))
    .unwrap();
    assert_eq!(
        d.annotations().get("latency").map(String::as_str),
        Some("interactive")
    );
    assert_eq!(d.annotations().get("Odd Key").map(String::as_str), Some(""));
}

#[test]
fn descriptor_size_limit_is_inclusive() {
    let d = build(&echo()).unwrap();
    let size = d.canonical_json().len();
    // The input's canonical form equals the descriptor's here (io_mode present, nothing null).
    let at = Limits {
        max_descriptor_bytes: size,
        ..Limits::default()
    };
    assert!(Descriptor::from_value(&echo(), &at).is_ok());
    let under = Limits {
        max_descriptor_bytes: size - 1,
        ..Limits::default()
    };
    let err = Descriptor::from_value(&echo(), &under).unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].code(), "descriptor_too_large");
    assert!(err.0[0].to_string().contains(&size.to_string()));
}

fn nested_schema(depth: usize) -> Value {
    // {"type":"object"} is depth 1; each {"not": ...} wrapper adds one level.
    let mut schema = json!({"type": "object"});
    for _ in 1..depth {
        schema = json!({ "not": schema });
    }
    schema
}

#[test]
fn schema_depth_limit_is_inclusive() {
    let limits = Limits::default();
    for depth in [limits.max_schema_depth - 1, limits.max_schema_depth] {
        let schema = nested_schema(depth);
        assert_eq!(weft_contract::schema::json_depth(&schema), depth);
        assert!(
            Descriptor::from_value(&with("input_schema", schema), &limits).is_ok(),
            "{depth}"
        );
    }
    let too_deep = nested_schema(limits.max_schema_depth + 1);
    assert_eq!(
        weft_contract::schema::json_depth(&too_deep),
        limits.max_schema_depth + 1
    );
    assert_eq!(
        codes_of(&with("input_schema", too_deep)),
        vec![("/input_schema".to_owned(), "schema_too_deep")]
    );
    let small = Limits {
        max_schema_depth: 3,
        ..Limits::default()
    };
    assert!(Descriptor::from_value(&with("input_schema", nested_schema(3)), &small).is_ok());
    assert!(Descriptor::from_value(&with("input_schema", nested_schema(4)), &small).is_err());
}
