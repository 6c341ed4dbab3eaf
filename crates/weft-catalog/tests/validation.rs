//! Normalization and every validation rule, with exact messages, positions, record indexes
//! and fields, in CompozyOS's order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Agent, json_record, q, toml_record};
use weft_catalog::error::RecordLayout;
use weft_catalog::{CatalogError, Position};

fn pos(line: usize, column: usize) -> Option<Position> {
    Some(Position { line, column })
}

#[test]
fn toml_normalization_trims_drops_blanks_and_sorts_requirements() {
    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        r#"
[[capabilities]]
id = "  fix-go-migration-tests "
summary = "	Repair failing Go migration tests.  "
outcome = " A validated patch summary. "
version = " 1.2.0 "
context_needed = [" repo ", "", "   ", "incident bundle"]
artifacts_expected = ["  ", ""]
execution_outline = ["b step", " a step"]
constraints = []
examples = ["　ideographic space trimmed　"]
requirements = [" zeta ", "alpha", "Mid"]
"#,
    );
    let record = agent.ok().records.remove(0);
    assert_eq!(record.id, "fix-go-migration-tests");
    assert_eq!(record.summary, "Repair failing Go migration tests.");
    assert_eq!(record.outcome, "A validated patch summary.");
    assert_eq!(record.version.as_deref(), Some("1.2.0"));
    assert_eq!(record.context_needed, ["repo", "incident bundle"]);
    assert!(record.artifacts_expected.is_empty());
    assert_eq!(record.execution_outline, ["b step", "a step"]);
    assert!(record.constraints.is_empty());
    assert_eq!(record.examples, ["ideographic space trimmed"]);
    assert_eq!(record.requirements, ["Mid", "alpha", "zeta"]);
    assert!(record.digest.starts_with("sha256:"));
    assert_eq!(record.digest.len(), 7 + 64);
}

#[test]
fn record_serializes_with_digest_and_without_empty_optionals() {
    let agent = Agent::new();
    agent.write(
        "capabilities.json",
        r#"{"capabilities": [{"id": "a", "summary": "s", "outcome": "o", "examples": [" ", ""], "version": ""}]}"#,
    );
    let record = agent.ok().records.remove(0);
    assert_eq!(
        record.version, None,
        "an authored empty version means not provided"
    );
    let value = serde_json::to_value(&record).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"id": "a", "summary": "s", "outcome": "o", "digest": record.digest})
    );
}

#[test]
fn missing_required_fields_single_file_toml_with_positions() {
    let cases = [
        ("summary = \"s\"\noutcome = \"o\"\n", "id", pos(2, 1)),
        (
            "id = \"   \"\nsummary = \"s\"\noutcome = \"o\"\n",
            "id",
            pos(3, 6),
        ),
        ("id = \"a\"\noutcome = \"o\"\n", "summary", pos(2, 1)),
        (
            "id = \"a\"\nsummary = \"s\"\noutcome = \" \t \"\n",
            "outcome",
            pos(5, 11),
        ),
    ];
    for (body, field, position) in cases {
        let agent = Agent::new();
        let path = agent.write("capabilities.toml", format!("\n[[capabilities]]\n{body}"));
        let err = agent.err();
        assert_eq!(err.code(), "missing_field", "{body}");
        assert_eq!(err.field().as_deref(), Some(field));
        assert_eq!(err.record(), Some(0));
        assert_eq!(err.position(), position, "{body}");
        let p = position.unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "validate capability catalog {}: capabilities[0].{field} is required (line {}, column {})",
                q(&path),
                p.line,
                p.column
            )
        );
    }
}

#[test]
fn missing_required_fields_single_file_json_second_record() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.json",
        format!(
            "{{\"capabilities\": [\n  {},\n  {{\"id\": \"b\", \"summary\": \"s\"}}\n]}}",
            json_record("a")
        ),
    );
    let err = agent.err();
    assert_eq!(err.code(), "missing_field");
    assert_eq!(err.record(), Some(1));
    assert_eq!(err.position(), pos(3, 3));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: capabilities[1].outcome is required (line 3, column 3)",
            q(&path)
        )
    );
}

#[test]
fn missing_fields_are_checked_in_order_id_summary_outcome() {
    let agent = Agent::new();
    agent.write("capabilities/x.json", r#"{"outcome": ""}"#);
    let err = agent.err();
    assert_eq!(err.field().as_deref(), Some("id"));
    let agent = Agent::new();
    agent.write("capabilities/x.json", r#"{"id": "x", "outcome": ""}"#);
    assert_eq!(agent.err().field().as_deref(), Some("summary"));
}

#[test]
fn directory_mode_messages_use_the_record_file() {
    let agent = Agent::new();
    let path = agent.write("capabilities/a.json", r#"{"id": "a", "summary": "s"}"#);
    let err = agent.err();
    assert_eq!(err.code(), "missing_field");
    assert_eq!(err.path(), path);
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability {}: outcome is required (line 1, column 1)",
            q(&path)
        )
    );
    assert!(matches!(
        &err,
        CatalogError::MissingField { at, .. } if at.layout == RecordLayout::Directory && at.index == 0
    ));

    let agent = Agent::new();
    let path = agent.write("capabilities/a.toml", "id = \"a\"\nsummary = \"s\"\n");
    assert_eq!(
        agent.err().to_string(),
        format!("validate capability {}: outcome is required", q(&path))
    );
}

#[test]
fn basename_must_match_normalized_id_case_sensitively() {
    let agent = Agent::new();
    let path = agent.write("capabilities/Build-Site.toml", toml_record("build-site"));
    let err = agent.err();
    assert_eq!(err.code(), "basename_mismatch");
    assert_eq!(err.field().as_deref(), Some("id"));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability {}: basename \"Build-Site\" must match id \"build-site\" (line 1, column 6)",
            q(&path)
        )
    );

    // The basename is trimmed for the comparison, the message shows it raw.
    let agent = Agent::new();
    agent.write("capabilities/ padded .json", json_record("padded"));
    assert_eq!(agent.ok().records[0].id, "padded");
    let agent = Agent::new();
    agent.write("capabilities/ other .json", json_record("padded"));
    assert!(
        agent
            .err()
            .to_string()
            .contains("basename \" other \" must match id \"padded\"")
    );

    // Only the last extension is removed.
    let agent = Agent::new();
    agent.write("capabilities/a.b.json", json_record("a.b"));
    assert_eq!(agent.ok().records[0].id, "a.b");
}

#[test]
fn directory_check_order_outcome_then_basename_then_version() {
    let agent = Agent::new();
    agent.write(
        "capabilities/x.json",
        r#"{"id": "y", "summary": "s", "outcome": " "}"#,
    );
    assert_eq!(agent.err().code(), "missing_field");
    let agent = Agent::new();
    agent.write(
        "capabilities/x.json",
        r#"{"id": "y", "summary": "s", "outcome": "o", "version": " "}"#,
    );
    assert_eq!(agent.err().code(), "basename_mismatch");
}

#[test]
fn blank_version_is_rejected_but_empty_version_is_absent() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\noutcome = \"o\"\nversion = \"  \"\n",
    );
    let err = agent.err();
    assert_eq!(err.code(), "blank_version");
    assert_eq!(err.field().as_deref(), Some("version"));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: capabilities[0].version must not be blank when provided (line 5, column 11)",
            q(&path)
        )
    );

    let agent = Agent::new();
    let path = agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "version": "\t"}"#,
    );
    assert_eq!(
        agent.err().to_string(),
        format!(
            "validate capability {}: version must not be blank when provided (line 1, column 56)",
            q(&path)
        )
    );

    let agent = Agent::new();
    agent.write(
        "capabilities.toml",
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\noutcome = \"o\"\nversion = \"\"\n",
    );
    assert_eq!(agent.ok().records[0].version, None);
}

#[test]
fn blank_requirement_is_reported_with_its_index() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\noutcome = \"o\"\nrequirements = [\"b\", \"  \"]\n",
    );
    let err = agent.err();
    assert_eq!(err.code(), "blank_requirement");
    assert_eq!(err.field().as_deref(), Some("requirements[1]"));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: capabilities[0].requirements[1] is required (line 5, column 22)",
            q(&path)
        )
    );

    let agent = Agent::new();
    let path = agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "requirements": [""]}"#,
    );
    assert_eq!(
        agent.err().to_string(),
        format!(
            "validate capability {}: requirements[0] is required (line 1, column 62)",
            q(&path)
        )
    );
}

#[test]
fn duplicate_requirement_after_normalization() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.json",
        r#"{"capabilities": [{"id": "a", "summary": "s", "outcome": "o", "requirements": ["x", "b", " x "]}]}"#,
    );
    let err = agent.err();
    assert_eq!(err.code(), "duplicate_requirement");
    assert_eq!(err.field().as_deref(), Some("requirements[2]"));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: capabilities[0].requirements duplicate value \"x\" after normalization at indexes 0 and 2 (line 1, column 90)",
            q(&path)
        )
    );

    let agent = Agent::new();
    let path = agent.write(
        "capabilities/a.toml",
        "id = \"a\"\nsummary = \"s\"\noutcome = \"o\"\nrequirements = [\"y\", \"y\"]\n",
    );
    assert_eq!(
        agent.err().to_string(),
        format!(
            "validate capability {}: requirements duplicate value \"y\" after normalization at indexes 0 and 1 (line 4, column 22)",
            q(&path)
        )
    );
}

#[test]
fn requirement_checks_come_after_version_and_blank_before_duplicate() {
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "version": " ", "requirements": [""]}"#,
    );
    assert_eq!(agent.err().code(), "blank_version");
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "requirements": ["x", "x", ""]}"#,
    );
    assert_eq!(agent.err().code(), "duplicate_requirement");
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "requirements": ["x", "", "x"]}"#,
    );
    assert_eq!(agent.err().code(), "blank_requirement");
}

#[test]
fn requirements_are_never_resolved_locally() {
    let agent = Agent::new();
    agent.write(
        "capabilities/a.json",
        r#"{"id": "a", "summary": "s", "outcome": "o", "requirements": ["remote:elsewhere", "not-in-this-catalog"]}"#,
    );
    assert_eq!(
        agent.ok().records[0].requirements,
        ["not-in-this-catalog", "remote:elsewhere"]
    );
}

#[test]
fn duplicate_ids_in_single_file_name_both_indexes() {
    let agent = Agent::new();
    let path = agent.write(
        "capabilities.toml",
        format!(
            "[[capabilities]]\n{}\n[[capabilities]]\n{}\n[[capabilities]]\nid = \" a \"\nsummary = \"s\"\noutcome = \"o\"\n",
            toml_record("a"),
            toml_record("b")
        ),
    );
    let err = agent.err();
    assert_eq!(err.code(), "duplicate_id");
    assert_eq!(err.record(), Some(2));
    assert_eq!(err.path(), path);
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: duplicate capability id \"a\" after normalization at indexes 0 and 2 (line 12, column 6)",
            q(&path)
        )
    );
    match err {
        CatalogError::DuplicateId { first, .. } => {
            assert_eq!(first.index, 0);
            assert_eq!(first.position, pos(2, 6));
        }
        other => panic!("{other}"),
    }
}

#[test]
fn duplicate_ids_in_directory_name_both_files() {
    let agent = Agent::new();
    let plain = agent.write("capabilities/build-site.toml", toml_record("build-site"));
    let padded = agent.write("capabilities/ build-site.toml", toml_record("build-site"));
    let err = agent.err();
    assert_eq!(err.code(), "duplicate_id");
    assert_eq!(err.path(), plain);
    assert_eq!(err.record(), Some(1));
    assert_eq!(
        err.to_string(),
        format!(
            "validate capability catalog {}: duplicate capability id \"build-site\" after normalization in {} and {} (line 1, column 6)",
            q(&agent.path("capabilities")),
            q(&padded),
            q(&plain)
        )
    );
}

#[test]
fn record_errors_come_before_a_later_duplicate_and_in_catalog_order() {
    let agent = Agent::new();
    agent.write(
        "capabilities.json",
        format!(
            r#"{{"capabilities": [{}, {{"id": "b", "summary": "", "outcome": "o"}}, {}]}}"#,
            json_record("a"),
            json_record("a")
        ),
    );
    let err = agent.err();
    assert_eq!(err.code(), "missing_field");
    assert_eq!(err.record(), Some(1));
}

#[test]
fn directory_mode_decodes_every_file_before_validating_any() {
    let agent = Agent::new();
    agent.write("capabilities/a.json", r#"{"summary": "no id"}"#);
    let broken = agent.write("capabilities/b.json", r#"{"id": "b","#);
    let err = agent.err();
    assert_eq!(err.code(), "invalid_json");
    assert_eq!(err.path(), broken);
}
