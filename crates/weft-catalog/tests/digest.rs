//! The runtime digest: Go escaping goldens, exact payload bytes and digests, TOML/JSON
//! equivalence, and which changes do or do not change it.
//!
//! Expected bytes were written out by hand from the rules of Go's `encoding/json`
//! (`appendString`, Go 1.22+) and the digests computed independently over those exact bytes
//! with Python's `hashlib.sha256`; they also equal what Go's `json.Marshal` +
//! `crypto/sha256` produce for the same payload struct.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Agent;
use weft_catalog::digest::push_go_json_string;
use weft_catalog::{CapabilityRecord, canonical_digest, canonical_payload};

fn go(value: &str) -> String {
    let mut out = Vec::new();
    push_go_json_string(&mut out, value);
    String::from_utf8(out).unwrap()
}

fn record(id: &str, summary: &str, outcome: &str) -> CapabilityRecord {
    CapabilityRecord {
        id: id.to_owned(),
        summary: summary.to_owned(),
        outcome: outcome.to_owned(),
        version: None,
        context_needed: Vec::new(),
        artifacts_expected: Vec::new(),
        execution_outline: Vec::new(),
        constraints: Vec::new(),
        examples: Vec::new(),
        requirements: Vec::new(),
        digest: String::new(),
    }
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

#[test]
fn go_escaping_goldens() {
    assert_eq!(go(""), r#""""#);
    assert_eq!(go("plain / text"), r#""plain / text""#);
    assert_eq!(go("\"quoted\" back\\slash"), r#""\"quoted\" back\\slash""#);
    // Go >= 1.22 writes \b and \f as short escapes; other C0 controls as \u00xx lowercase.
    assert_eq!(go("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
    assert_eq!(
        go("\u{0}\u{1}\u{b}\u{e}\u{1b}\u{1f}"),
        r#""\u0000\u0001\u000b\u000e\u001b\u001f""#
    );
    assert_eq!(
        go("<a href=x>&amp;</a>"),
        r#""\u003ca href=x\u003e\u0026amp;\u003c/a\u003e""#
    );
    assert_eq!(go("a\u{2028}b\u{2029}c"), r#""a\u2028b\u2029c""#);
    // DEL and every other non-ASCII character are written raw.
    assert_eq!(go("\u{7f}"), "\"\u{7f}\"");
    assert_eq!(
        go("é ü 中 😀 \u{85} \u{FFFD} \u{2027}\u{202a}"),
        "\"é ü 中 😀 \u{85} \u{FFFD} \u{2027}\u{202a}\""
    );
    assert_eq!(go(" \u{20}~"), r#""  ~""#);
}

#[test]
fn minimal_record_payload_and_digest() {
    let r = record(
        "build-site",
        "Build the landing page.",
        "A finished landing page.",
    );
    assert_eq!(
        canonical_payload(&r),
        br#"{"id":"build-site","summary":"Build the landing page.","outcome":"A finished landing page."}"#
    );
    assert_eq!(
        canonical_digest(&r),
        "sha256:fb0d891863cc1b3a8977d5b0510dd4b4e4ced55f2338503fda725fcebbc38bbd"
    );
}

const FULL_DIGEST: &str = "sha256:73de741f02ba92df706c2d7131687aca4001b0fafb0c9c5663285ce65f511a3d";

#[test]
fn full_record_payload_keeps_struct_field_order() {
    let mut r = record(
        "fix-go-migration-tests",
        "Repair failing Go migration tests and explain the change.",
        "A validated patch summary with the corrected assertions.",
    );
    r.version = Some("1.2.0".to_owned());
    r.context_needed = strings(&["repo", "incident bundle"]);
    r.artifacts_expected = strings(&["patch summary", "verification notes"]);
    r.execution_outline = strings(&[
        "inspect failure",
        "patch assertions",
        "rerun targeted tests",
    ]);
    r.constraints = strings(&["Keep fixes scoped to the reported failure"]);
    r.examples = strings(&["sessiondb migration regressions"]);
    r.requirements = strings(&["collect-failing-tests"]);
    assert_eq!(
        String::from_utf8(canonical_payload(&r)).unwrap(),
        concat!(
            r#"{"id":"fix-go-migration-tests","summary":"Repair failing Go migration tests and explain the change.","#,
            r#""outcome":"A validated patch summary with the corrected assertions.","version":"1.2.0","#,
            r#""context_needed":["repo","incident bundle"],"artifacts_expected":["patch summary","verification notes"],"#,
            r#""execution_outline":["inspect failure","patch assertions","rerun targeted tests"],"#,
            r#""constraints":["Keep fixes scoped to the reported failure"],"examples":["sessiondb migration regressions"],"#,
            r#""requirements":["collect-failing-tests"]}"#
        )
    );
    assert_eq!(canonical_digest(&r), FULL_DIGEST);
}

#[test]
fn escaping_record_payload_and_digest() {
    let mut r = record(
        "esc",
        "say \"hi\" \\ back\\slash / ok",
        "\u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1b}\u{1f} end",
    );
    r.version = Some("<1.0>&".to_owned());
    r.context_needed = strings(&["x\u{2028}line\u{2029}y", "é ü 中 😀", "\u{7f}del"]);
    r.requirements = strings(&["b", "a"]);
    let mut expected = br#"{"id":"esc","summary":"say \"hi\" \\ back\\slash / ok","outcome":"\u0000\u0001\b\t\n\u000b\f\r\u001b\u001f end","version":"\u003c1.0\u003e\u0026","context_needed":["x\u2028line\u2029y",""#.to_vec();
    expected.extend_from_slice("é ü 中 😀".as_bytes());
    expected.extend_from_slice(b"\",\"\x7fdel\"],\"requirements\":[\"a\",\"b\"]}");
    assert_eq!(canonical_payload(&r), expected);
    assert_eq!(
        canonical_digest(&r),
        "sha256:4463af8effbfb6c715d911aa5dbedef22ed3ed78a2de3ab2e4e259dfa4db4200"
    );
}

#[test]
fn line_and_paragraph_separators_are_trimmed_at_the_edges() {
    let mut r = record("a", "\u{2028}s\u{2029}", "\u{3000}o\u{85}");
    r.examples = strings(&["\u{2028}"]);
    assert_eq!(
        canonical_payload(&r),
        br#"{"id":"a","summary":"s","outcome":"o"}"#
    );
}

#[test]
fn canonical_digest_normalizes_and_ignores_the_stored_digest() {
    let base = record("a", "s", "o");
    let mut messy = record(" a ", "\ts\n", "o ");
    messy.version = Some("   ".to_owned());
    messy.examples = strings(&[" ", ""]);
    messy.digest = "sha256:not-this".to_owned();
    assert_eq!(canonical_payload(&messy), canonical_payload(&base));
    assert_eq!(canonical_digest(&messy), canonical_digest(&base));
}

const FULL_TOML: &str = r#"
[[capabilities]]
id = "collect-failing-tests"
summary = "Collect the exact failing package path and test output."
outcome = "A normalized incident bundle for a debugging follow-up."

[[capabilities]]
id = "fix-go-migration-tests"
summary = "Repair failing Go migration tests and explain the change."
outcome = "A validated patch summary with the corrected assertions."
version = "1.2.0"
context_needed = ["repo", "incident bundle"]
artifacts_expected = ["patch summary", "verification notes"]
execution_outline = ["inspect failure", "patch assertions", "rerun targeted tests"]
constraints = ["Keep fixes scoped to the reported failure"]
examples = ["sessiondb migration regressions"]
requirements = ["collect-failing-tests"]
"#;

const FULL_JSON: &str = r#"{
  "capabilities": [
    {
      "id": "collect-failing-tests",
      "summary": "Collect the exact failing package path and test output.",
      "outcome": "A normalized incident bundle for a debugging follow-up."
    },
    {
      "id": "fix-go-migration-tests",
      "summary": "Repair failing Go migration tests and explain the change.",
      "outcome": "A validated patch summary with the corrected assertions.",
      "version": "1.2.0",
      "context_needed": ["repo", "incident bundle"],
      "artifacts_expected": ["patch summary", "verification notes"],
      "execution_outline": ["inspect failure", "patch assertions", "rerun targeted tests"],
      "constraints": ["Keep fixes scoped to the reported failure"],
      "examples": ["sessiondb migration regressions"],
      "requirements": ["collect-failing-tests"]
    }
  ]
}"#;

#[test]
fn equivalent_toml_and_json_give_the_same_records_and_digests() {
    let toml = Agent::new();
    toml.write("capabilities.toml", FULL_TOML);
    let json = Agent::new();
    json.write("capabilities.json", FULL_JSON);
    let dir = Agent::new();
    dir.write(
        "capabilities/fix-go-migration-tests.toml",
        FULL_TOML
            .split("\n\n")
            .nth(1)
            .unwrap()
            .replace("[[capabilities]]\n", ""),
    );
    let from_toml = toml.ok().records;
    let from_json = json.ok().records;
    assert_eq!(from_toml, from_json);
    assert_eq!(from_toml[1].digest, FULL_DIGEST);
    assert_eq!(dir.ok().records[0], from_toml[1]);
    for record in &from_toml {
        assert_eq!(record.digest, canonical_digest(record));
    }
}

fn digest_of(json_record: &str) -> String {
    let agent = Agent::new();
    agent.write("capabilities/a.json", json_record);
    agent.ok().records.remove(0).digest
}

#[test]
fn digest_ignores_whitespace_blank_entries_and_requirement_order() {
    let base = digest_of(
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e1", "e2"], "requirements": ["x", "y"]}"#,
    );
    for variant in [
        r#"{"id": " a ", "summary": "s\n", "outcome": "\to", "examples": [" e1", "", "e2 ", "  "], "requirements": [" y", "x "]}"#,
        r#"{"requirements": ["y", "x"], "examples": ["e1", "e2"], "outcome": "o", "summary": "s", "id": "a", "version": "", "constraints": ["", " "]}"#,
    ] {
        assert_eq!(digest_of(variant), base, "{variant}");
    }
}

#[test]
fn digest_changes_when_a_meaningful_field_changes() {
    let base_json = r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e1", "e2"], "requirements": ["x"]}"#;
    let base = digest_of(base_json);
    let variants = [
        r#"{"id": "a", "summary": "S", "outcome": "o", "examples": ["e1", "e2"], "requirements": ["x"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o.", "examples": ["e1", "e2"], "requirements": ["x"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "version": "1", "examples": ["e1", "e2"], "requirements": ["x"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e2", "e1"], "requirements": ["x"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e1"], "requirements": ["x"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e1", "e2"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e1", "e2"], "requirements": ["x", "z"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "constraints": ["e1", "e2"], "requirements": ["x"]}"#,
        r#"{"id": "a", "summary": "s", "outcome": "o", "examples": ["e1 e2"], "requirements": ["x"]}"#,
    ];
    let mut seen = std::collections::HashSet::from([base]);
    for variant in variants {
        assert!(
            seen.insert(digest_of(variant)),
            "digest did not change: {variant}"
        );
    }
    // The id is meaningful too (a different file name is needed for the basename rule).
    let agent = Agent::new();
    agent.write("capabilities/b.json", base_json.replace("\"a\"", "\"b\""));
    assert!(seen.insert(agent.ok().records.remove(0).digest));
}
