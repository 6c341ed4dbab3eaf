//! The verifiers and the taxonomy agree: one verifier per table row, the same placeholders,
//! and capability ids resolve to the right row through `verify_capability`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use weft_verify::{Verifier, VerifyOptions, placeholders, rows, verify_capability};

#[test]
fn every_taxonomy_row_has_a_verifier_and_every_verifier_a_row() {
    let table: Vec<&str> = weft_taxonomy::rows().iter().map(|r| r.pattern).collect();
    let verifiers: Vec<&str> = rows().collect();
    assert_eq!(table, verifiers, "same rows, same order");
    for row in weft_taxonomy::rows() {
        let mut declared: Vec<&str> = row.placeholders.iter().map(|p| p.name).collect();
        let mut read = placeholders(row.pattern);
        declared.sort_unstable();
        read.sort_unstable();
        assert_eq!(declared, read, "{}", row.pattern);
    }
}

#[test]
fn a_capability_id_runs_its_rows_verifier_with_its_bindings() {
    let options = VerifyOptions::default();
    let report = verify_capability(
        "compute.statistics.median",
        &json!({"data": [3, 1, 2]}),
        &json!({"result": 2}),
        &options,
    )
    .unwrap();
    assert_eq!(report.verifier, Verifier::Builtin);
    assert_eq!(report.row.as_deref(), Some("compute.statistics.{op}"));
    assert_eq!(report.bindings["op"], "median");
    assert!(report.passed, "{report:?}");
    // The mean of the same data would be 2 too; 3 is neither.
    let wrong = verify_capability(
        "compute.statistics.median",
        &json!({"data": [3, 1, 2]}),
        &json!({"result": 3}),
        &options,
    )
    .unwrap();
    assert!(!wrong.passed);
}

#[test]
fn ids_without_a_verifier_say_so_and_never_pass() {
    let options = VerifyOptions::default();
    for id in [
        "custom.acme.handwriting-ocr",
        "image.generate.cartoon.png",
        "echo",
    ] {
        let report = verify_capability(id, &json!({}), &json!({}), &options).unwrap();
        assert_eq!(report.verifier, Verifier::None, "{id}");
        assert!(!report.passed, "{id}");
        assert_eq!(report.checks.len(), 1, "{id}");
        assert_eq!(report.checks[0].name, weft_verify::NO_VERIFIER_CHECK);
        assert!(report.checks[0].detail.contains(id), "{id}");
    }
}
