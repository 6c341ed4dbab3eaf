//! The official JSON Schema Test Suite (draft 2020-12, required tests) through weft's own
//! compile-and-validate path.
//!
//! The suite lives beside the project, not in it: set `WEFT_JSON_SCHEMA_SUITE` to its root
//! (`.ci/run` sets `../shared/data/json-schema-test-suite`). Without the variable the test
//! prints why and passes, so a fresh clone's `cargo test` still works.
//!
//! weft never fetches references, so a case whose schema needs a document outside itself
//! (the suite serves those from `http://localhost:1234`) must be *rejected at build time*
//! with `remote_reference` (or, for a custom meta-schema served from there,
//! `unsupported_dialect`); such cases are counted and printed apart. Every other case must
//! compile and give the expected verdict for every instance.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_contract::Limits;
use weft_contract::schema::{CompiledSchema, SchemaError};

const SUITE_VAR: &str = "WEFT_JSON_SCHEMA_SUITE";

/// Where the suite's remote documents would be served from.
const REMOTES_BASE: &str = "http://localhost:1234/";

#[derive(Default)]
struct Tally {
    files: usize,
    cases: usize,
    tests: usize,
    passed: usize,
    remote_cases: Vec<String>,
    failures: Vec<String>,
}

fn required_files(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("tests").join("draft2020-12");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

fn run_case(file: &str, case: &Value, limits: &Limits, tally: &mut Tally) {
    tally.cases += 1;
    let description = case["description"].as_str().unwrap_or("?");
    let label = format!("{file}: {description}");
    let tests = case["tests"].as_array().cloned().unwrap_or_default();
    match CompiledSchema::compile(&case["schema"], limits) {
        Ok(schema) => {
            for test in tests {
                tally.tests += 1;
                let expected = test["valid"].as_bool().unwrap();
                let strict = schema.validate(&test["data"], limits.max_validation_errors);
                let quick = schema.is_valid(&test["data"]);
                if strict.is_ok() == expected && quick == expected {
                    tally.passed += 1;
                } else {
                    tally.failures.push(format!(
                        "{label} / {}: expected valid={expected}, got validate={} is_valid={quick}",
                        test["description"].as_str().unwrap_or("?"),
                        strict.is_ok()
                    ));
                }
            }
        }
        Err(SchemaError::RemoteReference { uri }) => {
            tally.tests += tests.len();
            tally.remote_cases.push(format!("{label} (needs {uri})"));
        }
        // A custom meta-schema is a remote document too; weft refuses the dialect it defines.
        Err(SchemaError::UnsupportedDialect { found, .. }) if found.starts_with(REMOTES_BASE) => {
            tally.tests += tests.len();
            tally.remote_cases.push(format!(
                "{label} (needs meta-schema {found}; unsupported_dialect)"
            ));
        }
        Err(other) => {
            tally.tests += tests.len();
            tally
                .failures
                .push(format!("{label}: schema refused: {other}"));
        }
    }
}

#[test]
fn json_schema_test_suite_draft2020_12_required() {
    let Some(root) = std::env::var_os(SUITE_VAR) else {
        eprintln!(
            "skipping the JSON Schema Test Suite: set {SUITE_VAR} to the suite's root (.ci/run does)"
        );
        return;
    };
    let root = PathBuf::from(root);
    let limits = Limits::default();
    let mut tally = Tally::default();
    for path in required_files(&root) {
        tally.files += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
        for case in &cases {
            run_case(&name, case, &limits, &mut tally);
        }
    }
    eprintln!(
        "JSON Schema Test Suite draft2020-12 (required): {} files, {} cases, {} tests; {} tests passed",
        tally.files, tally.cases, tally.tests, tally.passed
    );
    eprintln!(
        "{} case(s) need a remote reference and were rejected at build time, as weft requires:",
        tally.remote_cases.len()
    );
    for case in &tally.remote_cases {
        eprintln!("  remote: {case}");
    }
    for failure in &tally.failures {
        eprintln!("  FAIL: {failure}");
    }
    assert!(
        tally.files >= 40,
        "suite looks incomplete: {} files",
        tally.files
    );
    assert!(
        tally.failures.is_empty(),
        "{} conformance failure(s)",
        tally.failures.len()
    );
}
