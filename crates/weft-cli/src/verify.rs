//! `weft verify ID --input IN.json --output OUT.json`: check one output against the standard
//! rule of capability `ID`, offline (the taxonomy and its verifiers are compiled in). The
//! rules live in `weft-verify`; this module reads the two files, prints and exits.

use std::io::Write;
use std::path::{Path, PathBuf};

use anstyle::{AnsiColor, Style};
use clap::Args;
use serde_json::Value;
use weft_contract::source::Position;
use weft_verify::{CapabilityReport, Verifier, VerifyOptions, verify_capability};

use crate::inputs::read_text;
use crate::report::{Problem, Report};

/// Largest input or output file read by default: a 16 MiB base64 image in a JSON document,
/// with room to spare.
const DEFAULT_MAX_FILE_BYTES: usize = 32 * 1024 * 1024;

/// Arguments of `weft verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The capability id (a concrete taxonomy id, e.g. `text.translate.en.it.fluent`).
    pub id: String,
    /// The call's input (a JSON file, or `-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// The output to verify (a JSON file, or `-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Largest file read, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    pub max_file_bytes: usize,
}

/// Reads one JSON document; problems carry file:line:col.
fn read_json(path: &Path, limit: usize) -> Result<Value, Problem> {
    let text = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::io::stdin(), limit as u64 + 1),
            &mut text,
        )
        .map_err(|e| Problem::io(path, "io_error", e.to_string()))?;
        if text.len() > limit {
            return Err(Problem::io(
                path,
                "document_too_large",
                format!("stdin is larger than the limit of {limit} bytes"),
            ));
        }
        text
    } else {
        read_text(path, limit)?
    };
    serde_json::from_str(&text).map_err(|e| {
        Problem::at(
            path,
            Position {
                line: e.line(),
                column: e.column(),
            },
            "invalid_json",
            e.to_string(),
        )
    })
}

/// Runs the verification; `Ok(true)` when a built-in verifier ran and every check passed.
pub fn run(args: &VerifyArgs) -> std::io::Result<bool> {
    if args.input.as_os_str() == "-" && args.output.as_os_str() == "-" {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "--input and --output cannot both be stdin",
        ));
    }
    let (input, output) = match (
        read_json(&args.input, args.max_file_bytes),
        read_json(&args.output, args.max_file_bytes),
    ) {
        (Ok(input), Ok(output)) => (input, output),
        (input, output) => {
            Report {
                errors: [input.err(), output.err()].into_iter().flatten().collect(),
                ..Report::default()
            }
            .print_human()?;
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "--input or --output is not a readable JSON file",
            ));
        }
    };
    let report =
        verify_capability(&args.id, &input, &output, &VerifyOptions::default()).map_err(|e| {
            let at = match &e {
                weft_verify::VerifyError::InvalidInput { pointer, .. } => {
                    format!(" ({} at {pointer})", args.input.display())
                }
                _ => String::new(),
            };
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("cannot verify {}: {}: {e}{at}", args.id, e.code()),
            )
        })?;
    let mut out = anstream::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_human(&mut out, &report)?;
    }
    Ok(report.passed)
}

fn print_human(out: &mut impl Write, report: &CapabilityReport) -> std::io::Result<()> {
    let bold = Style::new().bold();
    let pass = Style::new().fg_color(Some(AnsiColor::Green.into()));
    let fail = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
    match &report.row {
        Some(row) => {
            let bindings: Vec<String> = report
                .bindings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            writeln!(
                out,
                "{bold}{}{bold:#}  row {row}{}",
                report.capability_id,
                if bindings.is_empty() {
                    String::new()
                } else {
                    format!("  {}", bindings.join(" "))
                }
            )?;
        }
        None => writeln!(out, "{bold}{}{bold:#}", report.capability_id)?,
    }
    let width = report
        .checks
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0);
    for check in &report.checks {
        let (mark, style) = if check.passed {
            ("ok  ", pass)
        } else {
            ("FAIL", fail)
        };
        writeln!(
            out,
            "  {style}{mark}{style:#}  {:width$}  {}",
            check.name, check.detail
        )?;
    }
    let failed = report.checks.iter().filter(|c| !c.passed).count();
    match (report.verifier, report.passed) {
        (Verifier::None, _) => writeln!(out, "{fail}not verified{fail:#}: no built-in verifier"),
        (Verifier::Builtin, true) => writeln!(
            out,
            "{pass}passed{pass:#}: {} check(s)",
            report.checks.len()
        ),
        (Verifier::Builtin, false) => writeln!(
            out,
            "{fail}failed{fail:#}: {failed} of {} check(s)",
            report.checks.len()
        ),
    }
}
