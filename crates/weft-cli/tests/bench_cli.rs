//! `weft bench` as a user runs it: a real node, real load, JSON rows with the documented
//! keys. Figures are not asserted (machines are noisy); shape and failure modes are.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

#[test]
fn unary_prints_one_json_row_per_level_with_the_documented_keys() {
    let out = weft()
        .args(["bench", "unary", "--json", "--levels", "1,4"])
        .args(["--seconds", "0.3", "--warm-up", "0", "--runs", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (row, level) in rows.iter().zip([1, 4]) {
        assert_eq!(row["scenario"], "unary");
        assert_eq!(row["concurrency"], level);
        for key in [
            "limit_rps",
            "fabric_rps",
            "ratio",
            "remote_ratio",
            "fabric_p50_us",
            "fabric_p99_us",
            "added_p50_us",
        ] {
            assert!(row[key].is_number(), "{key} missing in {row}");
        }
        assert!(row["fabric_rps"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["fabric_remote_rps"].as_f64().unwrap() > 0.0, "{row}");
    }
    // The human table went to stderr.
    assert!(stderr.contains("| concurrency |"), "{stderr}");
}

fn json_rows(args: &[&str]) -> (Vec<Value>, String) {
    let out = weft().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let rows = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (rows, stderr)
}

#[test]
fn stream_prints_throughput_and_open_rows_with_the_documented_keys() {
    let (rows, stderr) = json_rows(&[
        "bench",
        "stream",
        "--json",
        "--chunks",
        "1000",
        "--parallel",
        "2",
        "--open-streams",
        "50",
        "--warm-up",
        "0",
        "--runs",
        "1",
    ]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let throughput = &rows[0];
    assert_eq!(throughput["scenario"], "stream");
    assert_eq!(throughput["part"], "throughput");
    assert_eq!(throughput["parallel"], 2);
    assert_eq!(throughput["chunks"], 1000);
    for key in [
        "direct_cps",
        "fabric_cps",
        "ratio",
        "fabric_bytes_per_chunk",
    ] {
        assert!(
            throughput[key].as_f64().unwrap() > 0.0,
            "{key} in {throughput}"
        );
    }
    let open = &rows[1];
    assert_eq!(open["scenario"], "stream");
    assert_eq!(open["part"], "open");
    assert_eq!(open["streams"], 50);
    assert_eq!(open["active_streams"], 50, "{open}");
    for key in ["idle_rss_mb", "rss_mb", "open_s"] {
        assert!(open[key].as_f64().unwrap() > 0.0, "{key} in {open}");
    }
    assert!(open["kib_per_stream"].is_number(), "{open}");
    assert!(stderr.contains("| part |"), "{stderr}");
}

#[test]
fn mcp_peer_prints_one_json_row_per_level_with_the_documented_keys() {
    let (rows, stderr) = json_rows(&[
        "bench",
        "mcp-peer",
        "--json",
        "--levels",
        "1,4",
        "--seconds",
        "0.3",
        "--warm-up",
        "0",
        "--runs",
        "1",
    ]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (row, level) in rows.iter().zip([1, 4]) {
        assert_eq!(row["scenario"], "mcp-peer");
        assert_eq!(row["concurrency"], level);
        for key in [
            "mcp_rps",
            "fabric_rps",
            "ratio",
            "mcp_p50_us",
            "fabric_p50_us",
        ] {
            assert!(row[key].as_f64().unwrap() > 0.0, "{key} in {row}");
        }
    }
    assert!(stderr.contains("| concurrency |"), "{stderr}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        vec!["bench", "nope"],
        vec!["bench", "unary", "--levels", "0"],
        vec!["bench", "unary", "--seconds", "0"],
        vec!["bench", "unary", "--seconds", "-1"],
        vec!["bench", "stream", "--chunks", "0"],
        vec!["bench", "stream", "--open-streams", "0"],
        vec!["bench", "registry", "--nodes", "0"],
        vec!["bench", "catalog", "--files", "0"],
    ] {
        let out = weft().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    let out = weft().args(["bench", "nope"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown scenario \"nope\"") && stderr.contains("unary"),
        "{stderr}"
    );
}

/// Runs `weft bench ARGS --json --warm-up 0 --runs 1` and returns its JSON rows.
fn bench_rows(args: &[&str]) -> Vec<Value> {
    let out = weft()
        .arg("bench")
        .args(args)
        .args(["--json", "--warm-up", "0", "--runs", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("|"),
        "the human table goes to stderr: {stderr}"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn positive(row: &Value, key: &str) -> f64 {
    let value = row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {row}"));
    assert!(value > 0.0, "{key} not positive in {row}");
    value
}

#[test]
fn registry_prints_a_row_per_request_kind_and_one_for_the_node() {
    let rows = bench_rows(&[
        "registry",
        "--descriptors",
        "500",
        "--nodes",
        "10",
        "--seconds",
        "0.2",
    ]);
    let requests: Vec<&str> = rows
        .iter()
        .map(|r| r["request"].as_str().unwrap())
        .collect();
    assert_eq!(
        requests,
        [
            "healthz",
            "get-node",
            "describe-node",
            "list-first",
            "list-cursor",
            "search",
            "node"
        ]
    );
    for row in &rows {
        assert_eq!(row["scenario"], "registry");
        assert_eq!(row["descriptors"], 500);
        assert_eq!(row["nodes"], 10);
    }
    for row in &rows[..6] {
        let p50 = positive(row, "p50_us");
        assert!(positive(row, "p99_us") >= p50, "{row}");
        positive(row, "floor_ratio");
    }
    assert_eq!(rows[0]["floor_ratio"], 1);
    let node = &rows[6];
    for key in ["load_seconds", "rss_mb", "restart_rss_mb", "cold_start_ms"] {
        positive(node, key);
    }
}

#[test]
fn validate_prints_weft_against_raw_per_case() {
    let rows = bench_rows(&["validate", "--seconds", "0.3"]);
    let cases: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    assert_eq!(
        cases,
        ["order-valid", "order-invalid", "echo-small", "revision"]
    );
    for row in &rows {
        assert_eq!(row["scenario"], "validate");
        for key in ["weft_ns", "raw_ns", "ratio"] {
            positive(row, key);
        }
    }
}

#[test]
fn catalog_prints_load_against_read() {
    let rows = bench_rows(&["catalog", "--files", "200"]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["scenario"], "catalog");
    assert_eq!(row["files"], 200);
    for key in ["seconds", "read_seconds", "ratio"] {
        positive(row, key);
    }
}
