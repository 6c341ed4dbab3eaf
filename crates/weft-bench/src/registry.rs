//! `weft bench registry`: discovery latency of a node holding a large registry, its memory,
//! and how long it takes to come back after a restart.
//!
//! A real node (`weft serve --no-builtins`) is loaded over HTTP with
//! [`BenchOptions::descriptors`] descriptors spread evenly over [`BenchOptions::nodes`]
//! nodes (default 100,000 over 1,000), by `PUT /v1/providers/{id}` from
//! [`REGISTER_CLIENTS`] parallel clients, one provider per 100 descriptors of a node. Then,
//! in each run, every request kind is timed in turn by one closed-loop keep-alive client
//! (warm-up, then the measured window): `healthz` (the floor of the HTTP stack and
//! loopback), `get-node` (`GET /v1/nodes/{id}`), `describe-node`
//! (`GET /v1/capabilities?node_id={id}&limit=100`, every descriptor the node serves),
//! `list-first` (first page of 100), `list-cursor` (the page of 100 half-way through the
//! registry, by cursor) and `search` (`q=` substring, a scan of every descriptor). At the end
//! of each run the node is stopped (SIGTERM) and restarted on the same data directory: the
//! cold start is the time from spawn until `/readyz` answers 200 and the last node's
//! descriptors are served (after the first restart, every descriptor and node is counted).
//!
//! Rows: one per request kind, keys `descriptors, nodes, request, p50_us, p99_us,
//! floor_ratio` (floor_ratio = p50 ÷ the `healthz` p50 of the same run), then one row with
//! `request: "node"` and keys `descriptors, nodes, load_seconds` (registration wall time),
//! `rss_mb` (node RSS right after loading), `restart_rss_mb` (RSS after a cold start),
//! `cold_start_ms`. Latencies and ratios are medians over the runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::load::{Measured, Target, measure, runtime};
use crate::node::NodeUnderTest;
use crate::report::{Column, Report, row};
use crate::{BenchError, BenchOptions, Row, median};

/// Descriptors per registered provider (a node with more has several providers).
pub const PER_PROVIDER: usize = 100;
/// Parallel registration clients.
pub const REGISTER_CLIENTS: usize = 4;
/// Arguments of the node under test.
const SERVE_ARGS: [&str; 1] = ["--no-builtins"];
/// How long a cold start may take before the run is void.
const COLD_START_LIMIT: Duration = Duration::from_secs(300);

/// The columns of the human table.
pub const COLUMNS: [Column; 8] = [
    ("request", "request"),
    ("p50_us", "p50 µs"),
    ("p99_us", "p99 µs"),
    ("floor_ratio", "p50 ÷ floor"),
    ("load_seconds", "load s"),
    ("rss_mb", "RSS MiB"),
    ("restart_rss_mb", "RSS after restart MiB"),
    ("cold_start_ms", "cold start ms"),
];

/// A registry of `descriptors` spread over `nodes`: who serves what.
#[derive(Debug, Clone, Copy)]
struct Layout {
    descriptors: usize,
    nodes: usize,
}

impl Layout {
    /// Descriptors on node `n` (the remainder goes to the first nodes).
    fn on_node(self, n: usize) -> usize {
        self.descriptors / self.nodes + usize::from(n < self.descriptors % self.nodes)
    }

    fn node_id(n: usize) -> String {
        format!("node{n}")
    }

    fn capability_id(n: usize, i: usize) -> String {
        format!("bench.node{n}.cap{i}")
    }

    /// Every registration: (provider id, node, first descriptor index, count).
    fn registrations(self) -> Vec<(String, usize, usize, usize)> {
        let mut all = Vec::new();
        for n in 0..self.nodes {
            let total = self.on_node(n);
            for (chunk, first) in (0..total).step_by(PER_PROVIDER).enumerate() {
                let count = PER_PROVIDER.min(total - first);
                all.push((format!("provider{n}-{chunk}"), n, first, count));
            }
        }
        all
    }
}

fn descriptor(n: usize, i: usize) -> Value {
    json!({
        "id": Layout::capability_id(n, i),
        "version": "1.0.0",
        "title": format!("Capability {i} on node {n}"),
        "description": "Transforms a document; returns the transformed text and a confidence score between 0 and 1.",
        "input_schema": {"type": "object", "required": ["text"], "additionalProperties": false,
            "properties": {"text": {"type": "string", "maxLength": 10000}, "lang": {"enum": ["en", "de", "fr"]}}},
        "output_schema": {"type": "object", "required": ["text", "confidence"],
            "properties": {"text": {"type": "string"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}}},
        "annotations": {"latency": "interactive"}
    })
}

/// Registers the whole layout over HTTP from [`REGISTER_CLIENTS`] threads.
fn register(node: &NodeUnderTest, layout: Layout) -> Result<(), BenchError> {
    let registrations = layout.registrations();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let step = (registrations.len() / 10).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..REGISTER_CLIENTS)
            .map(|_| {
                scope.spawn(|| -> Result<(), BenchError> {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some((provider, n, first, count)) = registrations.get(index) else {
                            return Ok(());
                        };
                        let descriptors: Vec<Value> =
                            (*first..first + count).map(|i| descriptor(*n, i)).collect();
                        node.send(
                            "PUT",
                            &format!("/v1/providers/{provider}"),
                            &json!({"node_id": Layout::node_id(*n), "descriptors": descriptors}),
                        )?;
                        let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if finished.is_multiple_of(step) {
                            eprintln!(
                                "registry: registered {finished}/{} providers",
                                registrations.len()
                            );
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|_| {
                    Err(BenchError::Node("a registering thread panicked".into()))
                })
            })
            .collect::<Result<Vec<()>, BenchError>>()
    })?;
    Ok(())
}

/// One request kind: its name, path and a string its answer contains.
struct Kind {
    name: &'static str,
    path: String,
    expect: String,
}

impl Kind {
    fn target(&self, node: &NodeUnderTest) -> Target {
        let head = format!(
            "GET {} HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer {}\r\n\r\n",
            self.path, node.addr, node.token
        );
        Target {
            name: self.name.to_owned(),
            addr: node.addr,
            request: Arc::new(head.into_bytes()),
            expect: Arc::new(self.expect.as_bytes().to_vec()),
        }
    }
}

/// The cursor of the page half-way through the listing, found by walking the pages.
fn middle_cursor(node: &NodeUnderTest, layout: Layout) -> Result<String, BenchError> {
    let pages = layout.descriptors.div_ceil(100) / 2;
    let mut cursor = String::new();
    for _ in 0..pages.max(1) {
        let page = node.get(&format!("/v1/capabilities?limit=100&cursor={cursor}"))?;
        match page["nextCursor"].as_str() {
            Some(next) => cursor = next.to_owned(),
            None => break,
        }
    }
    if cursor.is_empty() {
        return Err(BenchError::Node("the listing has a single page".into()));
    }
    Ok(cursor)
}

fn kinds(node: &NodeUnderTest, layout: Layout) -> Result<Vec<Kind>, BenchError> {
    let middle = layout.nodes / 2;
    let last = layout.nodes - 1;
    let node_id = Layout::node_id(middle);
    let cursor = middle_cursor(node, layout)?;
    // Every descriptor of the last node whose index starts with 9: a short, real answer.
    let needle = format!("node{last}.cap9");
    Ok(vec![
        Kind {
            name: "healthz",
            path: "/healthz".into(),
            expect: "ok".into(),
        },
        Kind {
            name: "get-node",
            path: format!("/v1/nodes/{node_id}"),
            expect: format!("\"{node_id}\""),
        },
        Kind {
            name: "describe-node",
            path: format!("/v1/capabilities?node_id={node_id}&limit=100"),
            expect: format!("\"node_id\":\"{node_id}\""),
        },
        Kind {
            name: "list-first",
            path: "/v1/capabilities?limit=100".into(),
            expect: "\"capabilities\"".into(),
        },
        Kind {
            name: "list-cursor",
            path: format!("/v1/capabilities?limit=100&cursor={cursor}"),
            expect: "\"capabilities\"".into(),
        },
        Kind {
            name: "search",
            path: format!("/v1/capabilities?q={needle}&limit=100"),
            expect: "\"capabilities\"".into(),
        },
    ])
}

fn count_pages(node: &NodeUnderTest, path: &str, key: &str) -> Result<usize, BenchError> {
    let mut total = 0;
    let mut cursor = String::new();
    loop {
        let page = node.get(&format!("{path}?limit=100&cursor={cursor}"))?;
        total += page[key].as_array().map_or(0, Vec::len);
        match page["nextCursor"].as_str() {
            Some(next) => cursor = next.to_owned(),
            None => return Ok(total),
        }
    }
}

/// Checks that the node serves every descriptor and node of `layout`.
fn verify_all(node: &NodeUnderTest, layout: Layout) -> Result<(), BenchError> {
    let descriptors = count_pages(node, "/v1/capabilities", "capabilities")?;
    let nodes = count_pages(node, "/v1/nodes", "nodes")?;
    if descriptors != layout.descriptors || nodes != layout.nodes {
        return Err(BenchError::Node(format!(
            "after a restart the node serves {descriptors} descriptors on {nodes} nodes, \
             not {} on {}",
            layout.descriptors, layout.nodes
        )));
    }
    Ok(())
}

/// Restarts a stopped node on `data`; returns it and the milliseconds from spawn until it is
/// ready and serves the last node's descriptors.
fn cold_start(
    options: &BenchOptions,
    data: tempfile::TempDir,
    layout: Layout,
) -> Result<(NodeUnderTest, f64), BenchError> {
    let last = layout.nodes - 1;
    let started = Instant::now();
    let node = NodeUnderTest::start_in(&options.weft, data, &SERVE_ARGS)?;
    while node.status_of("/readyz") != 200 {
        if started.elapsed() > COLD_START_LIMIT {
            return Err(BenchError::Node("not ready after a restart".into()));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let page = node.get(&format!(
        "/v1/capabilities?node_id={}&limit=100",
        Layout::node_id(last)
    ))?;
    let served = page["capabilities"].as_array().map_or(0, Vec::len);
    let last_id = Layout::capability_id(last, layout.on_node(last) - 1);
    node.get(&format!("/v1/capabilities/{last_id}/versions/1.0.0"))?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    if served != layout.on_node(last).min(100) {
        return Err(BenchError::Node(format!(
            "after a restart node{last} serves {served} descriptors"
        )));
    }
    Ok((node, elapsed))
}

/// Runs the scenario (see the module documentation).
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let layout = Layout {
        descriptors: options.descriptors,
        nodes: options.nodes,
    };
    if layout.nodes == 0 || layout.descriptors < layout.nodes || layout.descriptors <= 100 {
        return Err(BenchError::Usage(format!(
            "registry needs more than 100 descriptors and at least one per node, got {} on {} nodes",
            layout.descriptors, layout.nodes
        )));
    }
    let runs = options.runs.max(1);
    let mut node = NodeUnderTest::start(&options.weft, &SERVE_ARGS)?;
    eprintln!(
        "registry: registering {} descriptors on {} nodes ({REGISTER_CLIENTS} clients)",
        layout.descriptors, layout.nodes
    );
    let started = Instant::now();
    register(&node, layout)?;
    let load_seconds = started.elapsed().as_secs_f64();
    let rss_mb = node.rss_mib();
    eprintln!("registry: loaded in {load_seconds:.1} s; node RSS {rss_mb:.1} MiB");
    let kinds = kinds(&node, layout)?;
    let load = runtime("load-generator", 1)?;
    // measured[kind][run]
    let mut measured: Vec<Vec<Measured>> = kinds.iter().map(|_| Vec::new()).collect();
    let mut cold_starts = Vec::new();
    let mut restart_rss = Vec::new();
    for run in 0..runs {
        for (kind, samples) in kinds.iter().zip(&mut measured) {
            let m = measure(
                &load,
                &kind.target(&node),
                1,
                options.warm_up,
                options.measure,
            )?;
            eprintln!(
                "registry run {}: {:<13} p50 {:>7.0} µs  p99 {:>7.0} µs",
                run + 1,
                kind.name,
                m.p50_us,
                m.p99_us
            );
            samples.push(m);
        }
        let data = node.stop(Duration::from_secs(60))?;
        let (restarted, ms) = cold_start(options, data, layout)?;
        if run == 0 {
            verify_all(&restarted, layout)?;
        }
        restart_rss.push(restarted.rss_mib());
        eprintln!("registry run {}: cold start {ms:.0} ms", run + 1);
        cold_starts.push(ms);
        node = restarted;
    }
    let sizes = [
        ("descriptors", layout.descriptors as f64),
        ("nodes", layout.nodes as f64),
    ];
    let mut rows: Vec<Row> = Vec::new();
    for (kind, samples) in kinds.iter().zip(&measured) {
        let med = |f: &dyn Fn(usize, &Measured) -> f64| {
            let mut values: Vec<f64> = samples.iter().enumerate().map(|(r, m)| f(r, m)).collect();
            median(&mut values)
        };
        let mut pairs = sizes.to_vec();
        pairs.extend([
            ("p50_us", med(&|_, m| m.p50_us)),
            ("p99_us", med(&|_, m| m.p99_us)),
            (
                "floor_ratio",
                med(&|r, m| m.p50_us / measured[0][r].p50_us.max(1.0)),
            ),
        ]);
        rows.push(with_request(row("registry", &pairs), kind.name));
    }
    let mut pairs = sizes.to_vec();
    pairs.extend([
        ("load_seconds", load_seconds),
        ("rss_mb", rss_mb),
        ("restart_rss_mb", median(&mut restart_rss)),
        ("cold_start_ms", median(&mut cold_starts)),
    ]);
    rows.push(with_request(row("registry", &pairs), "node"));
    Ok(Report {
        title: format!(
            "registry: {} descriptors on {} nodes; one keep-alive client per request kind, \
             /healthz as the floor (median of {runs} run(s), {} s measured per kind after {} s warm-up; \
             cold start = spawn until ready and serving, after SIGTERM)",
            layout.descriptors,
            layout.nodes,
            options.measure.as_secs_f64(),
            options.warm_up.as_secs_f64()
        ),
        columns: COLUMNS.to_vec(),
        rows,
    })
}

fn with_request(mut row: Row, request: &str) -> Row {
    row.insert("request".into(), Value::from(request));
    row
}
