//! `weft bench catalog`: loading an agent's capability catalog of many record files.
//!
//! Generates [`BenchOptions::files`] record files (default 10,000) in a `capabilities/`
//! directory of a temporary agent, in the shape an agent author writes
//! (every list field filled, a blank entry to drop, characters Go's JSON escapes). Each
//! round times `weft_catalog::load_agent_catalog` — probe the layout, list the directory,
//! read every file without following symlinks, decode strictly, normalize, validate and
//! digest every record — against merely `std::fs::read`-ing the same files, alternating
//! which goes first; one untimed pass of each warms the page cache. A run's figures are the
//! medians of its [`ROUNDS`] rounds, the reported ones the medians across runs.
//!
//! Row keys: `files, seconds` (load, validate, digest), `read_seconds` (read only), `ratio`
//! (seconds ÷ read_seconds, the median of the per-round ratios), `load_ms` and `read_ms`
//! (the same times in milliseconds, for the table), `runs`.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use weft_catalog::load_agent_catalog;

use crate::report::{Column, Report, row};
use crate::{BenchError, BenchOptions, median};

/// Interleaved rounds per run.
pub const ROUNDS: usize = 5;

/// The columns of the human table.
pub const COLUMNS: [Column; 4] = [
    ("files", "files"),
    ("load_ms", "load ms"),
    ("read_ms", "read ms"),
    ("ratio", "load ÷ read"),
];

fn record_json(id: &str, i: usize, files: usize) -> String {
    format!(
        r#"{{
  "id": "{id}",
  "summary": "Capability number {i}: collect, repair and report.",
  "outcome": "A validated result for request {i}, with notes.",
  "version": "1.{}.0",
  "context_needed": ["repo", "failing command", " "],
  "artifacts_expected": ["patch summary", "verification notes"],
  "execution_outline": ["inspect failure", "patch", "rerun targeted tests"],
  "constraints": ["Keep fixes scoped to the reported failure"],
  "examples": ["migration regressions <{i}> & friends"],
  "requirements": ["capability-{:05}", "remote:audit"]
}}
"#,
        i % 7,
        (i + 1) % files
    )
}

/// Writes `files` record files under `agent/capabilities/`; returns their paths.
fn generate(agent: &Path, files: usize) -> Result<Vec<PathBuf>, BenchError> {
    let dir = agent.join("capabilities");
    fs::create_dir_all(&dir).map_err(BenchError::io("creating a catalog directory"))?;
    (0..files)
        .map(|i| {
            let id = format!("capability-{i:05}");
            let path = dir.join(format!("{id}.json"));
            fs::write(&path, record_json(&id, i, files))
                .map_err(BenchError::io("writing a catalog record"))?;
            Ok(path)
        })
        .collect()
}

/// Seconds to load, validate and digest the catalog; checks every record came back.
fn time_load(agent: &Path, files: usize) -> Result<f64, BenchError> {
    let started = Instant::now();
    let catalog = load_agent_catalog(agent).map_err(|e| BenchError::Setup(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    if catalog.records.len() != files || catalog.records.iter().any(|r| r.digest.is_empty()) {
        return Err(BenchError::Setup(format!(
            "loaded {} records with digests, generated {files}",
            catalog.records.len()
        )));
    }
    black_box(catalog);
    Ok(seconds)
}

/// Seconds to merely read every file.
fn time_read(paths: &[PathBuf]) -> Result<f64, BenchError> {
    let started = Instant::now();
    let mut bytes = 0;
    for path in paths {
        bytes += fs::read(black_box(path))
            .map_err(BenchError::io("reading a catalog record"))?
            .len();
    }
    black_box(bytes);
    Ok(started.elapsed().as_secs_f64())
}

/// Runs the scenario (see the module documentation).
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let files = options.files;
    if files == 0 {
        return Err(BenchError::Usage("catalog needs at least one file".into()));
    }
    let tmp = tempfile::tempdir().map_err(BenchError::io("creating a catalog directory"))?;
    let agent = tmp.path().join("agent");
    eprintln!("catalog: generating {files} record files");
    let paths = generate(&agent, files)?;
    time_read(&paths)?;
    time_load(&agent, files)?;
    let runs = options.runs.max(1);
    let (mut loads, mut reads, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let (mut load, mut read, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let (l, r) = if round % 2 == 0 {
                let l = time_load(&agent, files)?;
                (l, time_read(&paths)?)
            } else {
                let r = time_read(&paths)?;
                (time_load(&agent, files)?, r)
            };
            load.push(l);
            read.push(r);
            ratio.push(l / r.max(f64::MIN_POSITIVE));
        }
        let (l, r, q) = (median(&mut load), median(&mut read), median(&mut ratio));
        eprintln!(
            "catalog run {}: {files} files  load {:>7.1} ms  read {:>7.1} ms  ratio {q:.2}",
            run + 1,
            l * 1000.0,
            r * 1000.0
        );
        loads.push(l);
        reads.push(r);
        ratios.push(q);
    }
    let (load, read) = (median(&mut loads), median(&mut reads));
    let mut row = row(
        "catalog",
        &[
            ("files", files as f64),
            ("ratio", median(&mut ratios)),
            ("load_ms", load * 1000.0),
            ("read_ms", read * 1000.0),
            ("runs", runs as f64),
        ],
    );
    // Seconds keep six decimals: a small catalog loads in milliseconds.
    for (key, seconds) in [("seconds", load), ("read_seconds", read)] {
        let value = (seconds * 1e6).round() / 1e6;
        row.insert(key.into(), serde_json::Value::from(value));
    }
    Ok(Report {
        title: format!(
            "catalog: load + validate + digest of {files} record files vs merely reading them \
             (median of {runs} run(s) of {ROUNDS} interleaved rounds, page cache warm)"
        ),
        columns: COLUMNS.to_vec(),
        rows: vec![row],
    })
}
