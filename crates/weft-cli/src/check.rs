//! `weft check`: validate descriptor files and folders.

use std::path::PathBuf;

use clap::Args;
use weft_contract::file::read_descriptor_file;
use weft_contract::{Descriptor, Limits};

use crate::agent::problem_of;
use crate::inputs::{expand, format_of, read_text};
use crate::report::{Found, FoundCapability, Problem, Report};

/// Arguments of `weft check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or folders to check (folders are searched for .json and .toml files).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Limits a user may raise or lower for one run (defaults in `docs/contract.md`).
#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Largest descriptor, in bytes of canonical JSON.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT_MAX_DESCRIPTOR_BYTES)]
    pub max_descriptor_bytes: usize,
    /// Deepest nesting of objects and arrays in one schema.
    #[arg(long, value_name = "LEVELS", default_value_t = Limits::DEFAULT_MAX_SCHEMA_DEPTH)]
    pub max_schema_depth: usize,
    /// Largest file read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_file_bytes: usize,
}

impl LimitArgs {
    /// The limits these arguments describe.
    pub fn limits(&self) -> Limits {
        Limits {
            max_descriptor_bytes: self.max_descriptor_bytes,
            max_schema_depth: self.max_schema_depth,
            max_document_bytes: self.max_file_bytes,
            ..Limits::default()
        }
    }
}

/// Runs the check; `Ok(true)` when everything passed.
pub fn run(args: &CheckArgs) -> std::io::Result<bool> {
    let report = check_paths(&args.paths, &args.limits.limits());
    if args.json {
        report.print_json()?;
    } else {
        report.print_human()?;
    }
    Ok(report.ok)
}

/// Checks every descriptor file under `paths`.
pub fn check_paths(paths: &[PathBuf], limits: &Limits) -> Report {
    let mut report = Report::default();
    let inputs = expand(paths, &mut report.errors);
    if inputs.files.is_empty() && inputs.agent_dirs.is_empty() && report.errors.is_empty() {
        for path in paths {
            report.errors.push(Problem::io(
                path,
                "no_input",
                "no .json or .toml descriptor files or agent directories found".into(),
            ));
        }
    }
    for path in &inputs.files {
        check_file(path, limits, &mut report);
    }
    for dir in &inputs.agent_dirs {
        check_agent(dir, &mut report);
    }
    report.ok = report.errors.is_empty();
    report
}

fn check_file(path: &std::path::Path, limits: &Limits, report: &mut Report) {
    let first_problem = report.errors.len();
    for descriptor in load_file(path, limits, &mut report.errors) {
        report.descriptors.push(Found {
            path: path.display().to_string(),
            qualified_id: descriptor.qualified_id().to_string(),
            revision: descriptor.revision().to_string(),
        });
    }
    // Within one file, report problems top to bottom.
    report.errors[first_problem..].sort_by_key(|p| (p.line, p.column));
}

/// Reads every valid descriptor in one descriptor file; every problem goes to `problems`.
pub fn load_file(
    path: &std::path::Path,
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> Vec<Descriptor> {
    let Some(format) = format_of(path) else {
        problems.push(Problem::io(
            path,
            "unsupported_file",
            "descriptor files end in .json or .toml".into(),
        ));
        return Vec::new();
    };
    let text = match read_text(path, limits.max_document_bytes) {
        Ok(text) => text,
        Err(problem) => {
            problems.push(problem);
            return Vec::new();
        }
    };
    let entries = match read_descriptor_file(&text, format, limits) {
        Ok(entries) => entries,
        Err(found) => {
            for p in found {
                problems.push(Problem::at(path, p.position, p.code, p.message));
            }
            return Vec::new();
        }
    };
    let mut descriptors = Vec::new();
    for entry in entries {
        match entry.result {
            Ok(descriptor) => descriptors.push(descriptor),
            Err(found) => {
                for p in found {
                    problems.push(Problem::at(path, p.position, p.code, p.message));
                }
            }
        }
    }
    descriptors
}

fn check_agent(dir: &std::path::Path, report: &mut Report) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    match weft_catalog::load_agent_catalog(dir) {
        Ok(catalog) => {
            for record in catalog.records {
                report.agent_capabilities.push(FoundCapability {
                    agent: name.clone(),
                    path: dir.display().to_string(),
                    id: record.id,
                    digest: record.digest,
                });
            }
        }
        Err(error) => report.errors.push(problem_of(&error)),
    }
}
