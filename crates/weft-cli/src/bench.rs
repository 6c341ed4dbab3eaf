//! `weft bench`: run the benchmark scenarios of `weft-bench` against this very binary.

use std::time::Duration;

use clap::Args;
use weft_bench::servers::Peer;
use weft_bench::stream::StreamOptions;
use weft_bench::{BenchOptions, Scenario};

/// Arguments of `weft bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Scenarios to run (`all` for every one): unary, stream, mcp-peer, registry, validate,
    /// catalog.
    #[arg(required = true, value_name = "SCENARIO")]
    pub scenarios: Vec<String>,
    /// Print one JSON object per measured row on stdout (the tables go to stderr).
    #[arg(long)]
    pub json: bool,
    /// Concurrency levels, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,64,256")]
    pub levels: Vec<usize>,
    /// Seconds measured per cell (unary: per level and target; registry: per request kind;
    /// validate: per case and run; catalog ignores it).
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Seconds of warm-up per cell (not recorded).
    #[arg(long, default_value_t = 1.0)]
    pub warm_up: f64,
    /// Independent runs; figures are medians across them.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// stream: chunks read per throughput cell.
    #[arg(long, default_value_t = 100_000)]
    pub chunks: u64,
    /// stream: streams read in parallel, one throughput row each, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    pub parallel: Vec<usize>,
    /// stream: streams held open at once, one memory row each, comma-separated.
    #[arg(
        long = "open-streams",
        value_delimiter = ',',
        default_value = "1000,10000"
    )]
    pub open_streams: Vec<usize>,
    /// `registry`: descriptors to register with the node.
    #[arg(long, default_value_t = 100_000)]
    pub descriptors: usize,
    /// `registry`: nodes to spread the descriptors over.
    #[arg(long, default_value_t = 1_000)]
    pub nodes: usize,
    /// `catalog`: capability record files to generate.
    #[arg(long, default_value_t = 10_000)]
    pub files: usize,
}

/// Arguments of the hidden `weft bench-peer`.
#[derive(Debug, Args)]
pub struct BenchPeerArgs {
    /// limit-echo, remote-echo or mcp-echo.
    pub peer: String,
    /// Runtime worker threads.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
}

/// Serves a bench peer until stdin closes.
pub fn run_peer(args: &BenchPeerArgs) -> std::io::Result<bool> {
    let peer = Peer::from_name(&args.peer).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("unknown bench peer {:?}", args.peer),
        )
    })?;
    weft_bench::servers::serve_peer(peer, args.workers.max(1))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(true)
}

fn seconds(value: f64, what: &str) -> std::io::Result<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero() || what == "--warm-up")
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{what} must be a positive number of seconds, got {value}"),
            )
        })
}

/// Runs the scenarios in order; a failed scenario stops the run (exit 1).
pub fn run(args: &BenchArgs) -> std::io::Result<bool> {
    let usage = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, message);
    let mut scenarios = Vec::new();
    for name in &args.scenarios {
        if name == "all" {
            scenarios.extend(Scenario::ALL);
            continue;
        }
        let scenario = Scenario::from_name(name).ok_or_else(|| {
            let known: Vec<_> = Scenario::ALL.iter().map(|s| s.name()).collect();
            usage(format!(
                "unknown scenario {name:?}; known: {}, all",
                known.join(", ")
            ))
        })?;
        scenarios.push(scenario);
    }
    if args.levels.is_empty() || args.levels.contains(&0) {
        return Err(usage("--levels must be positive numbers".into()));
    }
    if args.descriptors == 0 || args.nodes == 0 || args.files == 0 {
        return Err(usage(
            "--descriptors, --nodes and --files must be positive".into(),
        ));
    }
    // The stream scenario holds thousands of sockets open in this process too.
    crate::serve::raise_open_file_limit();
    let mut options = BenchOptions::new(std::env::current_exe()?);
    options.levels = args.levels.clone();
    options.measure = seconds(args.seconds, "--seconds")?;
    options.warm_up = seconds(args.warm_up, "--warm-up")?;
    options.runs = args.runs.max(1);
    let stream = StreamOptions {
        chunks: args.chunks,
        parallel: args.parallel.clone(),
        open: args.open_streams.clone(),
    };
    let positive = |v: &[usize]| !v.is_empty() && !v.contains(&0);
    if stream.chunks == 0 || !positive(&stream.parallel) || !positive(&stream.open) {
        return Err(usage(
            "--chunks, --parallel and --open-streams must be positive numbers".into(),
        ));
    }
    options.descriptors = args.descriptors;
    options.nodes = args.nodes;
    options.files = args.files;
    for scenario in scenarios {
        let result = match scenario {
            Scenario::Stream => weft_bench::stream::run_with(&options, &stream),
            other => other.run(&options),
        };
        match result {
            Ok(report) => {
                if args.json {
                    eprint!("{}", report.human());
                    print!("{}", report.json_lines());
                } else {
                    print!("{}", report.human());
                }
            }
            Err(error) => {
                eprintln!("weft: bench {}: {error}", scenario.name());
                return Ok(false);
            }
        }
    }
    Ok(true)
}
