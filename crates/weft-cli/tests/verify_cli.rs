//! `weft verify ID --input IN --output OUT`, run as the real binary (offline: no node).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_remote;

use std::path::{Path, PathBuf};

use common_remote::{run, run_stdin};
use serde_json::{Value, json};

/// Writes `value` as a JSON file in `dir`.
fn file(dir: &tempfile::TempDir, name: &str, value: &Value) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, serde_json::to_vec(value).unwrap()).unwrap();
    path
}

fn verify(id: &str, input: &Path, output: &Path, json_out: bool) -> common_remote::Run {
    let mut args = vec![
        "verify",
        id,
        "--input",
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    if json_out {
        args.push("--json");
    }
    run(&args, &[])
}

#[test]
fn a_passing_output_exits_0_and_a_failing_one_1_with_every_check() {
    let dir = tempfile::tempdir().unwrap();
    let input = file(
        &dir,
        "in.json",
        &json!({"text": "The weather is lovely today and we are going to the beach with friends."}),
    );
    let italian = file(
        &dir,
        "it.json",
        &json!({"text": "Il tempo è bellissimo oggi e andiamo in spiaggia con gli amici."}),
    );
    let french = file(
        &dir,
        "fr.json",
        &json!({"text": "Le temps est magnifique aujourd'hui et nous allons à la plage avec des amis."}),
    );
    let id = "text.translate.en.it.fluent";
    let good = verify(id, &input, &italian, false);
    assert_eq!(good.code, 0, "{}{}", good.stdout, good.stderr);
    assert!(good.stdout.contains("passed"), "{}", good.stdout);
    assert!(
        good.stdout
            .contains("row text.translate.{src}.{tgt}.{level}"),
        "{}",
        good.stdout
    );

    let bad = verify(id, &input, &french, true);
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    let report: Value = serde_json::from_str(&bad.stdout).unwrap();
    assert_eq!(report["passed"], false);
    let checks = report["checks"].as_array().unwrap();
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["language_detected"], "{report}");
    assert!(checks.len() > 1, "every check is reported: {report}");
}

#[test]
fn a_custom_id_is_not_verified_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let any = file(&dir, "any.json", &json!({"x": 1}));
    let r = verify("custom.acme.handwriting-ocr", &any, &any, false);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("no built-in verifier"), "{}", r.stdout);
}

#[test]
fn unreadable_files_and_unusable_inputs_are_usage_errors_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\n  \"data\": [1, 2,\n").unwrap();
    let output = file(&dir, "out.json", &json!({"result": 1}));
    let r = verify("compute.statistics.mean", &broken, &output, false);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("broken.json:3:"), "{}", r.stderr);

    // The verifier needs `/data` to recompute the mean.
    let no_data = file(&dir, "nodata.json", &json!({"values": [1]}));
    let r = verify("compute.statistics.mean", &no_data, &output, false);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("invalid_input") && r.stderr.contains("/data"),
        "{}",
        r.stderr
    );

    let missing = dir.path().join("missing.json");
    let r = verify("compute.statistics.mean", &missing, &output, false);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
}

#[test]
fn the_output_can_come_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let input = file(&dir, "in.json", &json!({"data": [2, 4, 9]}));
    let r = run_stdin(
        &[
            "verify",
            "compute.statistics.mean",
            "--input",
            input.to_str().unwrap(),
            "--output",
            "-",
        ],
        &[],
        Some(r#"{"result": 5}"#),
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
