//! `weft diff`, run as the real binary on temporary files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-diff-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn descriptor(version: &str, age_type: &str) -> Value {
    json!({
        "id": "person", "version": version, "title": "Person", "description": "Stores a person.",
        "input_schema": {
            "type": "object",
            "properties": {"age": {"type": age_type}},
            "required": ["age"]
        }
    })
}

fn write(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn a_narrowed_input_breaks_a_minor_release() {
    let dir = scratch("narrow");
    let old = write(&dir, "old.json", &descriptor("1.0.0", "number"));
    let new = write(&dir, "new.json", &descriptor("1.1.0", "integer"));
    let out = weft(&["diff", &old, &new]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("breaking (1):"), "{stdout}");
    assert!(
        stdout.contains("/input_schema/properties/age/type  type_narrowed"),
        "{stdout}"
    );
    assert!(stdout.contains("`/age` is 1.5"), "{stdout}");
    assert!(stdout.contains("required bump: major"), "{stdout}");
    assert!(
        stdout.contains("breaks: 1.0.0 -> 1.1.0 is a minor step"),
        "{stdout}"
    );
    // The same change under a new major is allowed.
    let major = write(&dir, "major.json", &descriptor("2.0.0", "integer"));
    let out = weft(&["diff", &old, &major]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("allowed: 1.0.0 -> 2.0.0 is a major step"));
}

#[test]
fn a_widened_input_is_a_minor_change_in_json() {
    let dir = scratch("widen");
    let old = write(&dir, "old.json", &descriptor("1.0.0", "integer"));
    let new = write(&dir, "new.json", &descriptor("1.1.0", "number"));
    let out = weft(&["diff", &old, &new, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], true);
    let c = &doc["comparisons"][0];
    assert_eq!(c["required_bump"], "minor");
    assert_eq!(c["allowed"], true);
    let f = &c["findings"][0];
    assert_eq!(f["path"], "/input_schema/properties/age/type");
    assert_eq!(f["change"], "type_widened");
    assert_eq!(f["effect"], "compatible");
    assert!(f["reason"].as_str().unwrap().contains("`type`"));
    // A patch release is not enough for it.
    let patch = write(&dir, "patch.json", &descriptor("1.0.1", "number"));
    let out = weft(&["diff", &old, &patch, "--json"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn documentation_changes_are_grouped_apart() {
    let dir = scratch("docs");
    let old = write(&dir, "old.json", &descriptor("1.0.0", "integer"));
    let mut changed = descriptor("1.0.1", "integer");
    changed["title"] = json!("A person");
    let new = write(&dir, "new.json", &changed);
    let out = weft(&["diff", &old, &new]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("documentation (1):"), "{stdout}");
    assert!(stdout.contains("required bump: patch"), "{stdout}");
}

#[test]
fn files_with_several_descriptors_pair_by_id() {
    let dir = scratch("pairs");
    let mut other = descriptor("1.0.0", "string");
    other["id"] = json!("other");
    let old = write(
        &dir,
        "old.json",
        &json!({"descriptors": [descriptor("1.0.0", "integer"), other]}),
    );
    let new = write(
        &dir,
        "new.json",
        &json!({"descriptors": [descriptor("1.0.0", "integer")]}),
    );
    let out = weft(&["diff", &old, &new, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["removed"], json!(["other"]));
    assert_eq!(doc["comparisons"][0]["required_bump"], "none");
}

#[test]
fn usage_and_file_errors_exit_2() {
    let dir = scratch("errors");
    let old = write(&dir, "old.json", &descriptor("1.0.0", "integer"));
    let mut other = descriptor("1.0.0", "integer");
    other["id"] = json!("other");
    let different = write(&dir, "other.json", &other);
    let out = weft(&["diff", &old, &different]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("person"));
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"id\": ").unwrap();
    let out = weft(&["diff", &old, broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("broken.json:"),
        "{}",
        text(&out.stderr)
    );
    let out = weft(&["diff", &old]);
    assert_eq!(out.status.code(), Some(2));
}
