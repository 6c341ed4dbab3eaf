//! `weft bench unary`: what the fabric costs on a call, and what a remote hop adds.
//!
//! Four targets, measured in one run at each concurrency level, in turn:
//! - `limit`: a bare axum JSON echo on the same stack and allocator (a child process, as
//!   many workers as the node has) given the very call envelope the node gets — the ceiling
//!   of this machine for that JSON round trip;
//! - `fabric`: the node's built-in `echo@1.0.0` through `POST /v1/calls` (bearer auth, pin
//!   checked, input and output validated);
//! - `direct-remote`: an echo served by the provider SDK's HTTP server (a child process),
//!   called directly;
//! - `fabric-remote`: the same provider registered with the node and called through it.
//!
//! Row keys: `concurrency, limit_rps, fabric_rps, ratio, remote_ratio, fabric_p50_us,
//! fabric_p99_us, added_p50_us` (ratio = fabric ÷ limit, remote_ratio = fabric-remote ÷
//! direct-remote, added_p50_us = fabric-remote p50 − direct-remote p50), plus
//! `direct_remote_rps, fabric_remote_rps, limit_p50_us, direct_remote_p50_us,
//! fabric_remote_p50_us, fabric_remote_p99_us, added_p99_us, node_rss_mib, runs`. Each
//! figure is the median over the runs; ratios are medians of the per-run ratios.

use serde_json::json;

use crate::load::{Measured, Target, measure, runtime};
use crate::node::NodeUnderTest;
use crate::report::{Column, Report, row};
use crate::servers::{Peer, PeerProcess, remote_echo_descriptor, remote_echo_revision};
use crate::{BenchError, BenchOptions, median};

const EXPECT: &str = "hello weft";

/// The columns of the human table.
pub const COLUMNS: [Column; 10] = [
    ("concurrency", "concurrency"),
    ("limit_rps", "limit rps"),
    ("fabric_rps", "fabric rps"),
    ("ratio", "ratio"),
    ("fabric_p50_us", "fabric p50 µs"),
    ("fabric_p99_us", "fabric p99 µs"),
    ("direct_remote_rps", "direct-remote rps"),
    ("fabric_remote_rps", "fabric-remote rps"),
    ("remote_ratio", "remote ratio"),
    ("added_p50_us", "added p50 µs"),
];

fn node_workers() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Runs the scenario (see the module documentation).
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let max_level = options.levels.iter().copied().max().unwrap_or(1);
    let admission = max_level.max(1024).to_string();
    let node = NodeUnderTest::start(
        &options.weft,
        &["--builtins", "--max-concurrent-calls", &admission],
    )?;
    let limit = PeerProcess::start(&options.weft, Peer::LimitEcho, node_workers())?;
    let remote = PeerProcess::start(&options.weft, Peer::RemoteEcho, 1)?;
    let remote_revision = remote_echo_revision()?;
    node.send(
        "PUT",
        "/v1/providers/remote-echo",
        &json!({"node_id": "remote-host", "descriptors": [remote_echo_descriptor()],
                "transport": {"kind": "http", "url": format!("http://{}", remote.addr), "lease_seconds": 300}}),
    )?;
    let echo_revision = node.revision("echo", "1.0.0")?;
    let call = |id: &str, revision: &str| {
        json!({"capability_id": id, "version": "1.0.0", "descriptor_revision": revision,
               "payload": {"text": "hello weft"}})
        .to_string()
    };
    // The bare echo gets the very bytes the node gets (the call envelope), so both parse
    // and write back the same amount of JSON; only what the fabric does with it differs.
    let echo_call = call("echo", &echo_revision);
    let targets = [
        Target::post("limit", limit.addr, "/echo", None, &echo_call, EXPECT),
        Target::post(
            "fabric",
            node.addr,
            "/v1/calls",
            Some(&node.token),
            &echo_call,
            EXPECT,
        ),
        Target::post(
            "direct-remote",
            remote.addr,
            weft_provider::http::CALL_PATH,
            None,
            &json!({"call_id": "bench", "capability_id": "remote.echo", "version": "1.0.0",
                    "revision": remote_revision, "deadline_ms": 30000, "payload": {"text": "hello weft"}})
            .to_string(),
            EXPECT,
        ),
        Target::post(
            "fabric-remote",
            node.addr,
            "/v1/calls",
            Some(&node.token),
            &call("remote.echo", &remote_revision),
            EXPECT,
        ),
    ];
    let load = runtime("load-generator", 2)?;
    let mut rows = Vec::new();
    for &concurrency in &options.levels {
        // cells[run][target]
        let mut cells: Vec<[Measured; 4]> = Vec::new();
        for run in 0..options.runs.max(1) {
            let mut measured = [Measured {
                rps: 0.0,
                p50_us: 0.0,
                p99_us: 0.0,
            }; 4];
            for (slot, target) in measured.iter_mut().zip(&targets) {
                *slot = measure(&load, target, concurrency, options.warm_up, options.measure)?;
                eprintln!(
                    "unary c={concurrency} run {}: {:<13} {:>9.0} rps  p50 {:>6.0} µs  p99 {:>7.0} µs",
                    run + 1,
                    target.name,
                    slot.rps,
                    slot.p50_us,
                    slot.p99_us
                );
            }
            cells.push(measured);
        }
        let med = |f: &dyn Fn(&[Measured; 4]) -> f64| {
            let mut values: Vec<f64> = cells.iter().map(f).collect();
            median(&mut values)
        };
        rows.push(row(
            "unary",
            &[
                ("concurrency", concurrency as f64),
                ("limit_rps", med(&|c| c[0].rps)),
                ("fabric_rps", med(&|c| c[1].rps)),
                ("ratio", med(&|c| c[1].rps / c[0].rps)),
                ("remote_ratio", med(&|c| c[3].rps / c[2].rps)),
                ("fabric_p50_us", med(&|c| c[1].p50_us)),
                ("fabric_p99_us", med(&|c| c[1].p99_us)),
                ("added_p50_us", med(&|c| c[3].p50_us - c[2].p50_us)),
                ("direct_remote_rps", med(&|c| c[2].rps)),
                ("fabric_remote_rps", med(&|c| c[3].rps)),
                ("limit_p50_us", med(&|c| c[0].p50_us)),
                ("direct_remote_p50_us", med(&|c| c[2].p50_us)),
                ("fabric_remote_p50_us", med(&|c| c[3].p50_us)),
                ("fabric_remote_p99_us", med(&|c| c[3].p99_us)),
                ("added_p99_us", med(&|c| c[3].p99_us - c[2].p99_us)),
                ("node_rss_mib", node.rss_mib()),
                ("runs", options.runs.max(1) as f64),
            ],
        ));
    }
    Ok(Report {
        title: format!(
            "unary: echo through the node vs a bare echo, and a remote provider through the node vs directly \
             (median of {} run(s), {} s measured per cell after {} s warm-up; the load generator shares the cores)",
            options.runs.max(1),
            options.measure.as_secs_f64(),
            options.warm_up.as_secs_f64()
        ),
        columns: COLUMNS.to_vec(),
        rows,
    })
}
