//! Regressions found while fuzzing the catalog decoders (see `docs/fuzzing.md`).
//!
//! Validating each record used to compute the line and column of the record and of its id
//! up front (the id's is kept for a later duplicate-id error) by scanning the catalog text
//! from its start: loading a single-file catalog was quadratic in its size (20 000 records
//! in 1 MB did not finish in five minutes). Positions now come from an index of line
//! starts built once per text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use weft_catalog::error::Format;
use weft_catalog::{parse_catalog_file, parse_record_files};

/// Far above what linear work needs even in a debug build, far below the quadratic cost.
const BUDGET: Duration = Duration::from_secs(60);

#[test]
fn a_large_json_catalog_loads_in_linear_time() {
    let records: Vec<String> = (0..20_000)
        .map(|i| format!("{{\"id\": \"r{i}\", \"summary\": \"s\", \"outcome\": \"o\"}}"))
        .collect();
    let text = format!("{{\"capabilities\": [\n{}\n]}}", records.join(",\n"));
    let started = Instant::now();
    let catalog = parse_catalog_file(
        Path::new("/agent/capabilities.json"),
        text.as_bytes(),
        Format::Json,
    )
    .unwrap();
    assert!(started.elapsed() < BUDGET, "took {:?}", started.elapsed());
    assert_eq!(catalog.records.len(), 20_000);
}

#[test]
fn a_large_toml_catalog_loads_in_linear_time() {
    let records: Vec<String> = (0..20_000)
        .map(|i| format!("[[capabilities]]\nid = \"r{i}\"\nsummary = \"s\"\noutcome = \"o\"\n"))
        .collect();
    let text = records.join("\n");
    let started = Instant::now();
    let catalog = parse_catalog_file(
        Path::new("/agent/capabilities.toml"),
        text.as_bytes(),
        Format::Toml,
    )
    .unwrap();
    assert!(started.elapsed() < BUDGET, "took {:?}", started.elapsed());
    assert_eq!(catalog.records.len(), 20_000);
}

#[test]
fn the_last_records_error_still_names_its_position() {
    let mut records: Vec<String> = (0..1_000)
        .map(|i| format!("{{\"id\": \"r{i}\", \"summary\": \"s\", \"outcome\": \"o\"}}"))
        .collect();
    records.push("{\"id\": \"r0\", \"summary\": \"s\", \"outcome\": \"o\"}".to_owned());
    let text = format!("{{\"capabilities\": [\n{}\n]}}", records.join(",\n"));
    let error = parse_catalog_file(
        Path::new("/agent/capabilities.json"),
        text.as_bytes(),
        Format::Json,
    )
    .unwrap_err();
    assert_eq!(error.record(), Some(1_000));
    assert_eq!(error.position().map(|p| p.line), Some(1_002));
}

#[test]
fn record_files_in_memory_load_in_name_order_and_skip_others() {
    let a = br#"{"id": "a", "summary": "s", "outcome": "o"}"#;
    let b = br#"{"id": "b", "summary": "s", "outcome": "o"}"#;
    let catalog = parse_record_files(
        Path::new("/agent/capabilities"),
        &[
            ("b.json", b),
            (".hidden.json", b"x"),
            ("a.json", a),
            ("notes.txt", b"x"),
        ],
    )
    .unwrap();
    let ids: Vec<&str> = catalog.ids().collect();
    assert_eq!(ids, ["a", "b"]);
}
