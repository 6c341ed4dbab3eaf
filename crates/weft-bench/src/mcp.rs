//! `weft bench mcp-peer`: the same echo as an MCP tool served by `rmcp` (the reference
//! Rust MCP server) against weft's built-in echo, under the same load.
//!
//! - `mcp`: an `rmcp` streamable-HTTP server in a child process (`weft bench-peer
//!   mcp-echo`, as many workers as the node has) with one `echo` tool — input `{"text": string}` (unknown keys refused), output the
//!   same object as `structuredContent` — in stateless mode with JSON responses, so one
//!   `POST /mcp` is one JSON-RPC `tools/call` answered with one JSON body (the
//!   configuration of `baselines.md` row 3). The body is pre-encoded with a fixed id; each
//!   POST stands alone in stateless mode.
//! - `fabric`: the node's built-in `echo@1.0.0` through `POST /v1/calls` (bearer auth, pin
//!   checked, input and output validated).
//!
//! Besides throughput and latency, the server's CPU time per call inside the window is
//! sampled from procfs (the whole rmcp process; the whole node process): it depends
//! far less on how busy the shared machine is than requests per second do.
//!
//! Row keys: `concurrency, mcp_rps, fabric_rps, ratio` (fabric ÷ mcp), `mcp_p50_us,
//! mcp_p99_us, fabric_p50_us, fabric_p99_us, mcp_cpu_us_per_call,
//! fabric_cpu_us_per_call, cpu_ratio` (mcp ÷ fabric CPU per call), `node_rss_mib, runs`.
//! Each figure is the median over the runs; ratios are medians of the per-run ratios.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{schemars, tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::load::{Measured, Target, measure, runtime};
use crate::node::NodeUnderTest;
use crate::report::{Column, Report, row};
use crate::servers::{InProcess, Peer, PeerProcess, start};
use crate::{BenchError, BenchOptions, median};

/// The MCP protocol version the requests declare (what `baselines.md` negotiated).
const PROTOCOL_VERSION: &str = "2025-11-25";

/// One run of one level: (measured, server CPU µs per call) for mcp, then fabric.
type Cell = [(Measured, f64); 2];

/// The columns of the human table.
pub const COLUMNS: [Column; 10] = [
    ("concurrency", "concurrency"),
    ("mcp_rps", "rmcp rps"),
    ("fabric_rps", "fabric rps"),
    ("ratio", "ratio"),
    ("mcp_p50_us", "rmcp p50 µs"),
    ("fabric_p50_us", "fabric p50 µs"),
    ("mcp_p99_us", "rmcp p99 µs"),
    ("fabric_p99_us", "fabric p99 µs"),
    ("mcp_cpu_us_per_call", "rmcp CPU µs/call"),
    ("fabric_cpu_us_per_call", "fabric CPU µs/call"),
];

/// The echo tool's input.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    text: String,
}

/// The echo tool's output (structured content).
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct EchoOut {
    text: String,
}

/// The MCP server: one `echo` tool.
#[derive(Debug, Clone, Copy)]
struct McpEcho;

#[tool_router(server_handler)]
impl McpEcho {
    /// Returns the supplied text unchanged.
    #[tool(
        name = "echo",
        description = "Return the supplied text unchanged. Input: {\"text\": string}."
    )]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> Json<EchoOut> {
        Json(EchoOut { text })
    }
}

/// CPU seconds (user + system) process `pid` has used so far; 0 when unreadable. Linux
/// reports clock ticks of USER_HZ, 100 per second on every architecture.
fn cpu_seconds(pid: u32) -> f64 {
    let ticks = |stat: &str| -> Option<u64> {
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace().skip(11);
        let user: u64 = fields.next()?.parse().ok()?;
        let system: u64 = fields.next()?.parse().ok()?;
        Some(user + system)
    };
    let total = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| ticks(&s))
        .unwrap_or(0);
    total as f64 / 100.0
}

/// [`measure`], plus the server's CPU time per call inside the window (µs), sampled by
/// `cpu` (cumulative CPU seconds) when the window opens and when it closes.
fn measure_with_cpu(
    load: &tokio::runtime::Runtime,
    target: &Target,
    concurrency: usize,
    options: &BenchOptions,
    cpu: &(dyn Fn() -> f64 + Sync),
) -> Result<(Measured, f64), BenchError> {
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            std::thread::sleep(options.warm_up);
            let before = cpu();
            std::thread::sleep(options.measure);
            cpu() - before
        });
        let measured = measure(load, target, concurrency, options.warm_up, options.measure);
        let used = sampler.join().unwrap_or(0.0);
        measured.map(|m| {
            let calls = m.rps * options.measure.as_secs_f64();
            (m, used * 1e6 / calls.max(1.0))
        })
    })
}

fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// The rmcp echo at `POST /mcp`: stateless, JSON responses, no SSE keep-alive.
pub fn mcp_echo(workers: usize) -> Result<InProcess, BenchError> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        || Ok(McpEcho),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    start(
        "mcp-echo",
        workers,
        Router::new().nest_service("/mcp", service),
    )
}

fn mcp_headers() -> [(&'static str, &'static str); 2] {
    [
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", PROTOCOL_VERSION),
    ]
}

/// One JSON-RPC request to the MCP server, outside the measurement; the response body.
fn mcp_post(addr: SocketAddr, body: &serde_json::Value) -> Result<String, BenchError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent.post(&format!("http://{addr}/mcp"));
    for (name, value) in mcp_headers() {
        request = request.header(name, value);
    }
    let mut response = request
        .send_json(body)
        .map_err(|e| BenchError::Node(format!("rmcp: {e}")))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .map_err(|e| BenchError::Node(format!("rmcp: {e}")))?;
    if status != 200 {
        return Err(BenchError::Node(format!("rmcp: HTTP {status}: {text}")));
    }
    Ok(text)
}

/// Runs the scenario (see the module documentation).
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let max_level = options.levels.iter().copied().max().unwrap_or(1);
    let admission = max_level.max(1024).to_string();
    let node = NodeUnderTest::start(
        &options.weft,
        &["--builtins", "--max-concurrent-calls", &admission],
    )?;
    let mcp = PeerProcess::start(&options.weft, Peer::McpEcho, workers())?;
    // The handshake a client does once (stateless mode answers it without a session),
    // then one call checked in full: the load generator checks only a substring.
    mcp_post(
        mcp.addr,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                           "clientInfo": {"name": "weft-bench", "version": "1"}}}),
    )?;
    let tool_call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"text": "hello weft"}}});
    let mcp_expect = r#""structuredContent":{"text":"hello weft"}"#;
    let answer = mcp_post(mcp.addr, &tool_call)?;
    if !answer.contains(mcp_expect) || answer.contains(r#""isError":true"#) {
        return Err(BenchError::Node(format!(
            "rmcp answered tools/call with {answer}"
        )));
    }
    let echo_revision = node.revision("echo", "1.0.0")?;
    let targets = [
        Target::post_with_headers(
            "mcp",
            mcp.addr,
            "/mcp",
            &mcp_headers(),
            &tool_call.to_string(),
            mcp_expect,
        ),
        Target::post(
            "fabric",
            node.addr,
            "/v1/calls",
            Some(&node.token),
            &json!({"capability_id": "echo", "version": "1.0.0", "descriptor_revision": echo_revision,
                    "payload": {"text": "hello weft"}})
            .to_string(),
            r#""result":{"text":"hello weft"}"#,
        ),
    ];
    // Server CPU per target: the whole rmcp process, the whole node process.
    let (mcp_pid, node_pid) = (mcp.pid(), node.pid());
    let cpu: [Box<dyn Fn() -> f64 + Sync>; 2] = [
        Box::new(move || cpu_seconds(mcp_pid)),
        Box::new(move || cpu_seconds(node_pid)),
    ];
    let load = runtime("load-generator", 2)?;
    let mut rows = Vec::new();
    for &concurrency in &options.levels {
        let mut cells: Vec<Cell> = Vec::new();
        for run in 0..options.runs.max(1) {
            let empty = Measured {
                rps: 0.0,
                p50_us: 0.0,
                p99_us: 0.0,
            };
            let mut measured = [(empty, 0.0); 2];
            for ((slot, target), cpu) in measured.iter_mut().zip(&targets).zip(&cpu) {
                *slot = measure_with_cpu(&load, target, concurrency, options, cpu.as_ref())?;
                eprintln!(
                    "mcp-peer c={concurrency} run {}: {:<6} {:>9.0} rps  p50 {:>6.0} µs  p99 {:>7.0} µs  CPU {:>5.1} µs/call",
                    run + 1,
                    target.name,
                    slot.0.rps,
                    slot.0.p50_us,
                    slot.0.p99_us,
                    slot.1
                );
            }
            cells.push(measured);
        }
        let med = |f: &dyn Fn(&Cell) -> f64| {
            let mut values: Vec<f64> = cells.iter().map(f).collect();
            median(&mut values)
        };
        rows.push(row(
            "mcp-peer",
            &[
                ("concurrency", concurrency as f64),
                ("mcp_rps", med(&|c| c[0].0.rps)),
                ("fabric_rps", med(&|c| c[1].0.rps)),
                ("ratio", med(&|c| c[1].0.rps / c[0].0.rps)),
                ("mcp_p50_us", med(&|c| c[0].0.p50_us)),
                ("mcp_p99_us", med(&|c| c[0].0.p99_us)),
                ("fabric_p50_us", med(&|c| c[1].0.p50_us)),
                ("fabric_p99_us", med(&|c| c[1].0.p99_us)),
                ("mcp_cpu_us_per_call", med(&|c| c[0].1)),
                ("fabric_cpu_us_per_call", med(&|c| c[1].1)),
                ("cpu_ratio", med(&|c| c[0].1 / c[1].1.max(f64::EPSILON))),
                ("node_rss_mib", node.rss_mib()),
                ("runs", options.runs.max(1) as f64),
            ],
        ));
    }
    Ok(Report {
        title: format!(
            "mcp-peer: echo as an rmcp tools/call (stateless, JSON responses, in its own process) vs the built-in echo through the node \
             (median of {} run(s), {} s measured per cell after {} s warm-up; the load generator shares the cores)",
            options.runs.max(1),
            options.measure.as_secs_f64(),
            options.warm_up.as_secs_f64()
        ),
        columns: COLUMNS.to_vec(),
        rows,
    })
}
