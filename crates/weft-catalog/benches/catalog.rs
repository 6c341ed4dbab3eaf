//! Loading a `capabilities/` directory of 10,000 record files, measured against a baseline
//! in the same run:
//!
//! - `catalog_10k/load_agent_catalog`: probe the layout, list the directory, read every file
//!   without following symlinks, decode strictly, normalize, validate and digest each record;
//! - `catalog_10k/read_files_baseline`: merely `std::fs::read` the same 10,000 files.
//!
//! The directory is generated once in a temporary folder before measuring.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use weft_catalog::load_agent_catalog;

const RECORDS: usize = 10_000;

fn record_json(id: &str, i: usize) -> String {
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
        (i + 1) % RECORDS
    )
}

fn generate(agent: &Path) -> Vec<PathBuf> {
    let dir = agent.join("capabilities");
    fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::with_capacity(RECORDS);
    for i in 0..RECORDS {
        let id = format!("capability-{i:05}");
        let path = dir.join(format!("{id}.json"));
        fs::write(&path, record_json(&id, i)).unwrap();
        files.push(path);
    }
    files
}

fn catalog(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let files = generate(&agent);
    let loaded = load_agent_catalog(&agent).unwrap();
    assert_eq!(loaded.records.len(), RECORDS);

    let mut group = c.benchmark_group("catalog_10k");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.bench_function("load_agent_catalog", |b| {
        b.iter(|| black_box(load_agent_catalog(black_box(&agent)).unwrap()))
    });
    group.bench_function("read_files_baseline", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for file in &files {
                bytes += fs::read(black_box(file)).unwrap().len();
            }
            black_box(bytes)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = catalog
}
criterion_main!(benches);
