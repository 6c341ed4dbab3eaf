//! `weft bench stream`: what the fabric costs per streamed chunk, and what an open stream
//! costs the node in memory.
//!
//! Two parts, each with its own rows (`part` says which):
//!
//! - `throughput`: `chunks` chunks read through WebSockets, `parallel` streams at a time,
//!   once from the node's `GET /v1/streams` calling the built-in `count@1.0.0` (server
//!   streaming, every chunk validated against its `output_chunk_schema` and the size
//!   limit, flow-controlled queues), once from a bare axum WebSocket server that produces
//!   and frames the same chunks without the fabric (`direct`). `count` stops at 1,000
//!   chunks per call, so both sides serve the total as consecutive streams of 1,000: each
//!   pays one WebSocket handshake per 1,000 chunks. The direct server runs twice: flushing
//!   every frame (`direct`, a plain producer) and flushing 64 frames at a time
//!   (`direct-batched`, as the node coalesces up to 64 queued frames per write). Keys:
//!   `part, parallel, chunks, direct_cps, fabric_cps, ratio` (fabric ÷ direct),
//!   `direct_batched_cps, batched_ratio` (fabric ÷ direct-batched),
//!   `fabric_bytes_per_chunk, node_rss_mib, runs`.
//! - `open`: a fresh node, `streams` WebSockets each holding a client-streaming `sum@1.0.0`
//!   call open (the caller sends no chunk, so each stream is idle and stays admitted),
//!   then the node's RSS once all are open (every one has received `started`, and the
//!   node reports them as active). Keys: `part, streams, idle_rss_mb` (the fresh node),
//!   `rss_mb`, `kib_per_stream`, `active_streams`, `open_s` (time to open them all),
//!   `runs`.
//!
//! Figures are medians over the runs; ratios are medians of the per-run ratios.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::{StreamExt, TryStreamExt};
use serde_json::{Value, json};

use crate::load::runtime;
use crate::node::NodeUnderTest;
use crate::report::{Column, Report, row};
use crate::ws::{
    Client, DIRECT_BATCHED_PATH, DIRECT_PATH, WsTarget, client_config, direct_server, read_to_end,
    until_started,
};
use crate::{BenchError, BenchOptions, Row, median};

/// Chunks per `count` call (its `input_schema` maximum).
const PER_STREAM: u64 = 1000;
/// Stream opens in flight at once while opening many.
const OPENING: usize = 64;
/// File descriptors kept in reserve besides one per stream.
const FD_RESERVE: u64 = 256;

/// What the stream scenario measures, besides the common [`BenchOptions`].
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Chunks read per throughput cell.
    pub chunks: u64,
    /// Streams read in parallel, one throughput row each.
    pub parallel: Vec<usize>,
    /// Streams held open at once, one memory row each.
    pub open: Vec<usize>,
}

impl Default for StreamOptions {
    /// 100,000 chunks at 1 and 4 streams in parallel; 1,000 and 10,000 open streams.
    fn default() -> Self {
        Self {
            chunks: 100_000,
            parallel: vec![1, 4],
            open: vec![1000, 10_000],
        }
    }
}

/// The columns of the human table (throughput and open rows share it).
pub const COLUMNS: [Column; 12] = [
    ("part", "part"),
    ("parallel", "parallel"),
    ("chunks", "chunks"),
    ("direct_cps", "direct chunks/s"),
    ("fabric_cps", "fabric chunks/s"),
    ("ratio", "ratio"),
    ("direct_batched_cps", "direct-batched chunks/s"),
    ("batched_ratio", "batched ratio"),
    ("streams", "open streams"),
    ("idle_rss_mb", "idle RSS MiB"),
    ("rss_mb", "RSS MiB"),
    ("kib_per_stream", "KiB/stream"),
];

/// One throughput run: (chunks/s, bytes per chunk) for direct, direct-batched, fabric.
type Cell = [(f64, f64); 3];

fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// Runs the scenario with the default [`StreamOptions`].
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    run_with(options, &StreamOptions::default())
}

/// Runs the scenario (see the module documentation).
pub fn run_with(options: &BenchOptions, stream: &StreamOptions) -> Result<Report, BenchError> {
    if stream.chunks == 0 || stream.parallel.contains(&0) || stream.open.contains(&0) {
        return Err(BenchError::Usage(
            "chunks, parallel streams and open streams must be positive".into(),
        ));
    }
    let mut rows = throughput(options, stream)?;
    for &streams in &stream.open {
        rows.push(open(options, streams)?);
    }
    Ok(Report {
        title: format!(
            "stream: count@1.0.0 chunks through the node (validated) vs the same chunks from a bare WebSocket server, \
             {} chunks per cell; then idle sum@1.0.0 streams held open on a fresh node \
             (median of {} run(s); the client shares the cores)",
            stream.chunks,
            options.runs.max(1)
        ),
        columns: COLUMNS.to_vec(),
        rows,
    })
}

fn envelope(id: &str, revision: &str, payload: Value) -> String {
    json!({"capability_id": id, "version": "1.0.0", "descriptor_revision": revision,
           "payload": payload, "timeout_seconds": 300})
    .to_string()
}

/// Reads `chunks` chunks from `target`, `parallel` streams at a time; returns
/// (chunks per second, bytes per chunk).
async fn pass(
    target: &WsTarget,
    revision: &str,
    chunks: u64,
    parallel: usize,
) -> Result<(f64, f64), String> {
    let remaining = Arc::new(AtomicU64::new(chunks));
    let started = Instant::now();
    let tasks: Vec<_> = (0..parallel)
        .map(|_| {
            let (target, remaining) = (target.clone(), remaining.clone());
            let revision = revision.to_owned();
            tokio::spawn(async move {
                let mut bytes = 0_u64;
                loop {
                    let take = remaining
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                            (left > 0).then(|| left - left.min(PER_STREAM))
                        })
                        .map(|left| left.min(PER_STREAM));
                    let Ok(to) = take else {
                        return Ok::<u64, String>(bytes);
                    };
                    let call = envelope("count", &revision, json!({ "to": to }));
                    let mut ws = target.open(&call, client_config(128 * 1024)).await?;
                    let (_, b) = read_to_end(&mut ws, to).await?;
                    bytes += b;
                }
            })
        })
        .collect();
    let mut bytes = 0;
    for task in tasks {
        bytes += task.await.map_err(|e| format!("client task: {e}"))??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    Ok((chunks as f64 / elapsed, bytes as f64 / chunks as f64))
}

fn throughput(options: &BenchOptions, stream: &StreamOptions) -> Result<Vec<Row>, BenchError> {
    let most = stream.parallel.iter().copied().max().unwrap_or(1);
    let admission = (most + 16).to_string();
    let node = NodeUnderTest::start(
        &options.weft,
        &["--builtins", "--max-concurrent-streams", &admission],
    )?;
    let revision = node.revision("count", "1.0.0")?;
    let direct = direct_server(workers())?;
    let targets = [
        WsTarget {
            name: "direct".into(),
            addr: direct.addr,
            path: DIRECT_PATH.into(),
            token: None,
        },
        WsTarget {
            name: "direct-batched".into(),
            addr: direct.addr,
            path: DIRECT_BATCHED_PATH.into(),
            token: None,
        },
        WsTarget {
            name: "fabric".into(),
            addr: node.addr,
            path: "/v1/streams".into(),
            token: Some(node.token.clone()),
        },
    ];
    let client = runtime("stream-client", 2)?;
    let mut rows = Vec::new();
    for &parallel in &stream.parallel {
        let fail = |target: &WsTarget, first: String| BenchError::Load {
            target: target.name.clone(),
            concurrency: parallel,
            failed: 1,
            first,
        };
        let mut cells: Vec<Cell> = Vec::new();
        for run in 0..options.runs.max(1) {
            let mut measured = [(0.0, 0.0); 3];
            for (slot, target) in measured.iter_mut().zip(&targets) {
                let warm_until = Instant::now() + options.warm_up;
                while Instant::now() < warm_until {
                    let warm = PER_STREAM * parallel as u64;
                    client
                        .block_on(pass(target, &revision, warm, parallel))
                        .map_err(|e| fail(target, e))?;
                }
                *slot = client
                    .block_on(pass(target, &revision, stream.chunks, parallel))
                    .map_err(|e| fail(target, e))?;
                eprintln!(
                    "stream parallel={parallel} run {}: {:<14} {:>9.0} chunks/s  ({:.0} B/chunk)",
                    run + 1,
                    target.name,
                    slot.0,
                    slot.1
                );
            }
            cells.push(measured);
        }
        let med = |f: &dyn Fn(&Cell) -> f64| {
            let mut values: Vec<f64> = cells.iter().map(f).collect();
            median(&mut values)
        };
        let mut r = row(
            "stream",
            &[
                ("parallel", parallel as f64),
                ("chunks", stream.chunks as f64),
                ("direct_cps", med(&|c| c[0].0)),
                ("fabric_cps", med(&|c| c[2].0)),
                ("ratio", med(&|c| c[2].0 / c[0].0)),
                ("direct_batched_cps", med(&|c| c[1].0)),
                ("batched_ratio", med(&|c| c[2].0 / c[1].0)),
                ("fabric_bytes_per_chunk", med(&|c| c[2].1)),
                ("node_rss_mib", node.rss_mib()),
                ("runs", options.runs.max(1) as f64),
            ],
        );
        r.insert("part".into(), Value::from("throughput"));
        rows.push(r);
    }
    Ok(rows)
}

/// The soft limit on open files of this process (the node inherits it).
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Opens `streams` idle `sum` streams on a fresh node and reads its RSS with all open.
fn open(options: &BenchOptions, streams: usize) -> Result<Row, BenchError> {
    if let Some(limit) = open_files_limit()
        && streams as u64 + FD_RESERVE > limit
    {
        return Err(BenchError::Usage(format!(
            "holding {streams} streams open needs about {} file descriptors in this process and in the node; \
             the soft limit is {limit} (raise it with `ulimit -n`)",
            streams as u64 + FD_RESERVE
        )));
    }
    let client = runtime("stream-client", 2)?;
    // cells[run] = [idle, rss, active, seconds to open]
    let mut cells: Vec<[f64; 4]> = Vec::new();
    for run in 0..options.runs.max(1) {
        let admission = (streams + 16).to_string();
        let node = NodeUnderTest::start(
            &options.weft,
            &["--builtins", "--max-concurrent-streams", &admission],
        )?;
        let revision = node.revision("sum", "1.0.0")?;
        let idle = node.rss_mib();
        let target = WsTarget {
            name: "fabric".into(),
            addr: node.addr,
            path: "/v1/streams".into(),
            token: Some(node.token.clone()),
        };
        let call = envelope("sum", &revision, json!({}));
        let started = Instant::now();
        let held: Result<Vec<Client>, String> = client.block_on(
            futures_util::stream::iter(0..streams)
                .map(|_| {
                    let (target, call) = (&target, &call);
                    async move {
                        let mut ws = target.open(call, client_config(4096)).await?;
                        until_started(&mut ws).await?;
                        Ok::<_, String>(ws)
                    }
                })
                .buffer_unordered(OPENING)
                .try_collect(),
        );
        let held = held.map_err(|first| BenchError::Load {
            target: format!("{streams} open streams"),
            concurrency: streams,
            failed: 1,
            first,
        })?;
        let open_s = started.elapsed().as_secs_f64();
        // Let the node's tasks settle before reading its memory.
        std::thread::sleep(Duration::from_millis(500));
        let rss = node.rss_mib();
        let active = node.get("/v1/diagnostics/node")?["active_streams"]
            .as_f64()
            .unwrap_or(0.0);
        eprintln!(
            "stream open={streams} run {}: opened in {open_s:.1} s, {active} active, RSS {idle:.1} → {rss:.1} MiB",
            run + 1
        );
        cells.push([idle, rss, active, open_s]);
        client.block_on(async move { drop(held) });
        drop(node);
    }
    let med = |i: usize| {
        let mut values: Vec<f64> = cells.iter().map(|c| c[i]).collect();
        median(&mut values)
    };
    let mut r = row(
        "stream",
        &[
            ("streams", streams as f64),
            ("idle_rss_mb", med(0)),
            ("rss_mb", med(1)),
            (
                "kib_per_stream",
                (med(1) - med(0)) * 1024.0 / streams as f64,
            ),
            ("active_streams", med(2)),
            ("open_s", med(3)),
            ("runs", options.runs.max(1) as f64),
        ],
    );
    r.insert("part".into(), Value::from("open"));
    Ok(r)
}
