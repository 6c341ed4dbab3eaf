//! Discovery latency of a real node with 10,000 descriptors registered.
//!
//! Starts `weft serve` (the real binary) on a free port with an empty data directory,
//! registers 100 providers on 100 nodes with 100 descriptors each over HTTP, then times
//! sequential requests over one keep-alive connection: `/healthz` (the floor of the HTTP
//! stack and loopback, measured in the same run), describe-node, the first list page, a list
//! page reached by cursor, and a substring search. Prints p50/p99 per request kind, the
//! ratio to the floor, and the server's RSS. Run: `cargo bench -p weft-cli --bench registry_latency`.
//! `WEFT_BENCH_REQUESTS` sets the requests per kind (default 2000).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn descriptor(node: usize, index: usize) -> Value {
    json!({
        "id": format!("bench.node{node}.cap{index}"),
        "version": "1.0.0",
        "title": format!("Capability {index} on node {node}"),
        "description": "Transforms a document; returns the transformed text and a confidence score between 0 and 1.",
        "input_schema": {"type": "object", "required": ["text"], "additionalProperties": false,
            "properties": {"text": {"type": "string", "maxLength": 10000}, "lang": {"enum": ["en", "de", "fr"]}}},
        "output_schema": {"type": "object", "required": ["text", "confidence"],
            "properties": {"text": {"type": "string"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}}},
        "annotations": {"latency": "interactive"}
    })
}

fn main() {
    let requests: usize = std::env::var("WEFT_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .env("WEFT_NO_BUILTINS", "true")
        .arg(dir.path())
        .env("WEFT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let pid = child.id();
    let node = Node(child);
    let mut lines = BufReader::new(stdout).lines();
    let url = lines
        .next()
        .unwrap()
        .unwrap()
        .trim_start_matches("weft: listening on ")
        .to_owned();
    let token_line = lines.next().unwrap().unwrap();
    let token = token_line.rsplit(' ').next().unwrap().to_owned();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let auth = format!("Bearer {token}");

    let started = Instant::now();
    for n in 0..100 {
        let descriptors: Vec<Value> = (0..100).map(|i| descriptor(n, i)).collect();
        let response = agent
            .put(&format!("{url}/v1/providers/provider{n}"))
            .header("authorization", &auth)
            .send_json(json!({"node_id": format!("node{n}"), "descriptors": descriptors}))
            .unwrap();
        assert_eq!(response.status().as_u16(), 201);
    }
    let setup = started.elapsed();
    let rss_loaded = rss_kib(pid);

    // A cursor into the middle of the listing.
    let mut cursor = String::new();
    for _ in 0..40 {
        let mut r = agent
            .get(&format!("{url}/v1/capabilities?limit=100&cursor={cursor}"))
            .header("authorization", &auth)
            .call()
            .unwrap();
        let page: Value = r.body_mut().read_json().unwrap();
        cursor = page["nextCursor"].as_str().unwrap().to_owned();
    }
    let kinds: Vec<(&str, String)> = vec![
        ("floor: GET /healthz", format!("{url}/healthz")),
        (
            "describe node (100 descriptors)",
            format!("{url}/v1/capabilities?node_id=node57&limit=100"),
        ),
        (
            "list, first page of 100",
            format!("{url}/v1/capabilities?limit=100"),
        ),
        (
            "list, page 41 by cursor",
            format!("{url}/v1/capabilities?limit=100&cursor={cursor}"),
        ),
        (
            "search q= (scans 10,000)",
            format!("{url}/v1/capabilities?q=node99.cap9&limit=100"),
        ),
        ("GET one node", format!("{url}/v1/nodes/node57")),
    ];
    println!(
        "weft registry latency: 10,000 descriptors, 100 providers on 100 nodes; {requests} sequential requests per kind over one keep-alive connection"
    );
    println!(
        "setup (100 PUTs of 100 descriptors): {:.2} s; server RSS after load: {:.1} MiB",
        setup.as_secs_f64(),
        rss_loaded as f64 / 1024.0
    );
    println!("| request | p50 µs | p99 µs | p50 ÷ floor |");
    println!("|---|---:|---:|---:|");
    let mut floor_p50 = 0.0;
    for (name, target) in &kinds {
        for _ in 0..200 {
            let mut r = agent
                .get(target)
                .header("authorization", &auth)
                .call()
                .unwrap();
            let _ = r.body_mut().read_to_vec().unwrap();
        }
        let mut samples = Vec::with_capacity(requests);
        for _ in 0..requests {
            let t = Instant::now();
            let mut r = agent
                .get(target)
                .header("authorization", &auth)
                .call()
                .unwrap();
            let body = r.body_mut().read_to_vec().unwrap();
            samples.push(t.elapsed());
            assert_eq!(
                r.status().as_u16(),
                200,
                "{name}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        samples.sort();
        let p50 = percentile(&samples, 0.50).as_secs_f64() * 1e6;
        let p99 = percentile(&samples, 0.99).as_secs_f64() * 1e6;
        if floor_p50 == 0.0 {
            floor_p50 = p50;
        }
        println!("| {name} | {p50:.0} | {p99:.0} | {:.1} |", p50 / floor_p50);
    }
    println!(
        "server RSS after the run: {:.1} MiB",
        rss_kib(pid) as f64 / 1024.0
    );
    drop(node);
}
