//! weft's benchmark harness: `weft bench SCENARIO`.
//!
//! Every scenario runs the real thing — a `weft serve` child process, real sockets — and
//! measures it against a baseline taken in the same run on the same machine, because these
//! machines are noisy and only ratios measured side by side mean anything. The load
//! generator ([`load`]) is deliberately lean (hand-written HTTP/1.1 keep-alive client,
//! TCP_NODELAY, an HDR histogram per connection) and shares the machine's cores with the
//! servers under test; the figures say so.
//!
//! Each scenario returns one JSON object per measured row ([`Row`]) with stable keys, so
//! results can be compared across commits, and prints a human table.

pub mod catalog;
pub mod load;
pub mod mcp;
pub mod node;
pub mod registry;
pub mod report;
pub mod servers;
pub mod stream;
pub mod unary;
pub mod validate;
pub mod ws;

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

/// One row of results: a flat JSON object whose keys a scenario documents.
pub type Row = serde_json::Map<String, serde_json::Value>;

/// Why a benchmark could not run to the end.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The node under test did not start or answered something unexpected.
    #[error("node under test: {0}")]
    Node(String),
    /// A load-generating connection failed (the run is void: a failed request would
    /// flatter the throughput).
    #[error("{target} at concurrency {concurrency}: {failed} connection(s) failed; first: {first}")]
    Load {
        /// Which target.
        target: String,
        /// Concurrency level.
        concurrency: usize,
        /// How many connections failed.
        failed: usize,
        /// The first failure.
        first: String,
    },
    /// Local I/O (sockets, temp dirs, runtimes).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// A bad option.
    #[error("{0}")]
    Usage(String),
    /// A scenario's fixture could not be built or disagrees with itself (a descriptor, a
    /// validator, a generated catalog).
    #[error("setting up: {0}")]
    Setup(String),
}

impl BenchError {
    pub(crate) fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Self {
        move |source| Self::Io { what, source }
    }
}

/// What every scenario is told.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The `weft` executable to start as the node under test.
    pub weft: PathBuf,
    /// Concurrency levels (closed-loop clients), where the scenario has levels.
    pub levels: Vec<usize>,
    /// Measured time per cell (after a warm-up).
    pub measure: Duration,
    /// Warm-up per cell, not recorded.
    pub warm_up: Duration,
    /// Independent runs; figures are the median across them.
    pub runs: usize,
    /// `registry`: descriptors registered with the node.
    pub descriptors: usize,
    /// `registry`: nodes the descriptors are spread over.
    pub nodes: usize,
    /// `catalog`: capability record files generated.
    pub files: usize,
}

impl BenchOptions {
    /// Defaults: levels 1, 64 and 256; 3 s measured after 1 s of warm-up; 3 runs;
    /// 100,000 descriptors on 1,000 nodes; 10,000 catalog files.
    pub fn new(weft: PathBuf) -> Self {
        Self {
            weft,
            levels: vec![1, 64, 256],
            measure: Duration::from_secs(3),
            warm_up: Duration::from_secs(1),
            runs: 3,
            descriptors: 100_000,
            nodes: 1_000,
            files: 10_000,
        }
    }
}

/// The scenarios `weft bench` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Built-in echo through the node vs. a bare echo, and a remote provider through the
    /// node vs. called directly.
    Unary,
    /// Streamed chunks through the node vs. a bare WebSocket producer, and the node's
    /// memory with many streams open.
    Stream,
    /// The built-in echo through the node vs. the same echo as an `rmcp` MCP tool.
    McpPeer,
    /// Discovery latency of a node holding a large registry, its RSS and cold start.
    Registry,
    /// weft's validation path vs. the raw validator configured identically.
    Validate,
    /// Loading an agent catalog of many record files vs. merely reading them.
    Catalog,
}

impl Scenario {
    /// Every scenario, in the order `weft bench all` runs them.
    pub const ALL: [Scenario; 6] = [
        Scenario::Unary,
        Scenario::Stream,
        Scenario::McpPeer,
        Scenario::Registry,
        Scenario::Validate,
        Scenario::Catalog,
    ];

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Unary => "unary",
            Scenario::Stream => "stream",
            Scenario::McpPeer => "mcp-peer",
            Scenario::Registry => "registry",
            Scenario::Validate => "validate",
            Scenario::Catalog => "catalog",
        }
    }

    /// Runs the scenario (progress goes to stderr); returns what it measured.
    pub fn run(self, options: &BenchOptions) -> Result<report::Report, BenchError> {
        match self {
            Scenario::Unary => unary::run(options),
            Scenario::Stream => stream::run(options),
            Scenario::McpPeer => mcp::run(options),
            Scenario::Registry => registry::run(options),
            Scenario::Validate => validate::run(options),
            Scenario::Catalog => catalog::run(options),
        }
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}
