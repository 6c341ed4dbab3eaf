//! Descriptor files in JSON and TOML: layouts, strictness, and line:column positions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use weft_contract::Limits;
use weft_contract::file::{FileEntry, FileProblem, read_descriptor_file};
use weft_contract::source::{Position, SourceFormat};

const ECHO_JSON: &str = r#"{
  "id": "echo",
  "version": "1.0.0",
  "title": "Echo",
  "description": "Return the supplied text unchanged.",
  "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
}"#;

const ECHO_TOML: &str = r#"id = "echo"
version = "1.0.0"
title = "Echo"
description = "Return the supplied text unchanged."

[input_schema]
type = "object"
required = ["text"]

[input_schema.properties.text]
type = "string"
"#;

fn read(text: &str, format: SourceFormat) -> Result<Vec<FileEntry>, Vec<FileProblem>> {
    read_descriptor_file(text, format, &Limits::default())
}

fn at(line: usize, column: usize) -> Position {
    Position { line, column }
}

fn one_problem(text: &str, format: SourceFormat) -> FileProblem {
    match read(text, format) {
        Err(mut problems) => {
            assert_eq!(problems.len(), 1, "{problems:?}");
            problems.remove(0)
        }
        Ok(entries) => {
            assert_eq!(entries.len(), 1);
            let mut problems = entries.into_iter().next().unwrap().result.unwrap_err();
            assert_eq!(problems.len(), 1, "{problems:?}");
            problems.remove(0)
        }
    }
}

#[test]
fn json_and_toml_single_descriptors_have_the_same_revision() {
    let json = read(ECHO_JSON, SourceFormat::Json).unwrap();
    let toml = read(ECHO_TOML, SourceFormat::Toml).unwrap();
    let (a, b) = (
        json[0].result.as_ref().unwrap(),
        toml[0].result.as_ref().unwrap(),
    );
    assert_eq!(a.qualified_id().to_string(), "echo@1.0.0");
    assert_eq!(a.revision(), b.revision());
}

#[test]
fn list_files_hold_several_descriptors_each_judged_alone() {
    let json = format!(
        r#"{{"descriptors": [{ECHO_JSON}, {{"id": "BAD", "version": "1.0.0", "title": "t", "description": "d", "input_schema": {{}}}}]}}"#
    );
    let entries = read(&json, SourceFormat::Json).unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries[0].result.is_ok());
    assert_eq!(entries[1].pointer, "/descriptors/1");
    let problems = entries[1].result.as_ref().unwrap_err();
    assert_eq!(problems[0].code, "invalid_id");
    assert_eq!(problems[0].pointer, "/descriptors/1/id");
    assert_eq!(problems[0].position, at(7, 11));

    let toml = r#"
[[descriptors]]
id = "echo"
version = "1.0.0"
title = "Echo"
description = "Echo."
input_schema = { type = "object" }

[[descriptors]]
id = "echo"
version = "2.0.0"
title = "Echo"
description = "Echo, again."
io_mode = "server_streaming"
input_schema = { type = "object" }
output_chunk_schema = { type = "object" }
"#;
    let entries = read(toml, SourceFormat::Toml).unwrap();
    let ids: Vec<String> = entries
        .iter()
        .map(|e| e.result.as_ref().unwrap().qualified_id().to_string())
        .collect();
    assert_eq!(ids, ["echo@1.0.0", "echo@2.0.0"]);
    assert_eq!(entries[1].position, at(9, 1));
}

#[test]
fn rule_violations_point_at_the_field() {
    let text = ECHO_JSON.replace(r#""version": "1.0.0""#, r#""version": "v1""#);
    let p = one_problem(&text, SourceFormat::Json);
    assert_eq!((p.code, p.position), ("invalid_version", at(3, 14)));
    let text = ECHO_TOML.replace("title = \"Echo\"", "title = \"  \"");
    let p = one_problem(&text, SourceFormat::Toml);
    assert_eq!((p.code, p.position), ("blank_field", at(3, 1)));
    let text = ECHO_TOML.replace("type = \"string\"", "type = \"strung\"");
    let p = one_problem(&text, SourceFormat::Toml);
    assert_eq!(p.code, "invalid_schema");
    assert_eq!(p.position, at(11, 1), "{p:?}");
}

#[test]
fn unknown_keys_are_errors_with_positions() {
    let text = ECHO_JSON.replace(r#""title""#, r#""streaming": true, "title""#);
    let p = one_problem(&text, SourceFormat::Json);
    assert_eq!((p.code, p.position), ("unknown_field", at(4, 16)));
    let text = format!("{ECHO_TOML}\n[extra]\nx = 1\n");
    let p = one_problem(&text, SourceFormat::Toml);
    assert_eq!((p.code, p.position), ("unknown_field", at(13, 2)));
    let p = one_problem(r#"{"descriptors": [{}], "x": 1}"#, SourceFormat::Json);
    assert_eq!(p.code, "unknown_field");
}

#[test]
fn duplicate_keys_are_errors() {
    let text = ECHO_JSON.replace(
        r#""title": "Echo","#,
        r#""title": "Echo", "title": "Again","#,
    );
    let p = one_problem(&text, SourceFormat::Json);
    assert_eq!(p.code, "duplicate_key");
    assert_eq!(p.position.line, 4);
    assert!(p.message.contains("title"));
    let p = one_problem(
        &ECHO_TOML.replacen('\n', "\ntitle = \"again\"\n", 1),
        SourceFormat::Toml,
    );
    assert_eq!(p.code, "invalid_toml");
    assert!(p.message.contains("duplicate"), "{p:?}");
    let nested = r#"{"id": "a", "input_schema": {"properties": {"x": {}, "x": {}}}}"#;
    let p = one_problem(nested, SourceFormat::Json);
    assert_eq!((p.code, p.position.line), ("duplicate_key", 1));
}

#[test]
fn trailing_data_and_syntax_errors_have_positions() {
    let p = one_problem(&format!("{ECHO_JSON}\n{{}}"), SourceFormat::Json);
    assert_eq!((p.code, p.position), ("trailing_data", at(8, 1)));
    let p = one_problem("{\n  \"id\": \"echo\",\n}", SourceFormat::Json);
    assert_eq!((p.code, p.position.line), ("invalid_json", 3));
    let p = one_problem("id = \"echo\"\nversion = \n", SourceFormat::Toml);
    assert_eq!((p.code, p.position.line), ("invalid_toml", 2));
    let p = one_problem("", SourceFormat::Json);
    assert_eq!(p.code, "invalid_json");
}

#[test]
fn values_without_json_meaning_are_refused() {
    let p = one_problem(
        &format!("{ECHO_TOML}\n[annotations]\nwhen = 1979-05-27\n"),
        SourceFormat::Toml,
    );
    assert_eq!((p.code, p.position), ("not_json", at(14, 8)));
    let p = one_problem(
        &format!("{ECHO_TOML}\n[annotations]\nx = nan\n"),
        SourceFormat::Toml,
    );
    assert_eq!(p.code, "not_json");
}

#[test]
fn document_shape_is_checked() {
    assert_eq!(
        one_problem("[1, 2]", SourceFormat::Json).code,
        "invalid_type"
    );
    assert_eq!(
        one_problem(r#"{"descriptors": []}"#, SourceFormat::Json).code,
        "no_descriptors"
    );
    assert_eq!(
        one_problem(r#"{"descriptors": {}}"#, SourceFormat::Json).code,
        "invalid_type"
    );
    let p = one_problem(r#"{"descriptors": [7]}"#, SourceFormat::Json);
    assert_eq!(
        (p.code, p.pointer.as_str()),
        ("invalid_type", "/descriptors/0")
    );
}

#[test]
fn nesting_and_size_limits_are_enforced() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(one_problem(&deep, SourceFormat::Json).code, "too_deep");
    let deep_toml = format!("x = {}1{}", "[".repeat(200), "]".repeat(200));
    let p = one_problem(&deep_toml, SourceFormat::Toml);
    assert_eq!(p.code, "too_deep", "{p:?}");
    let limits = Limits {
        max_document_bytes: ECHO_JSON.len(),
        ..Limits::default()
    };
    assert!(read_descriptor_file(ECHO_JSON, SourceFormat::Json, &limits).is_ok());
    let limits = Limits {
        max_document_bytes: ECHO_JSON.len() - 1,
        ..Limits::default()
    };
    let problems = read_descriptor_file(ECHO_JSON, SourceFormat::Json, &limits).unwrap_err();
    assert_eq!(problems[0].code, "document_too_large");
}
