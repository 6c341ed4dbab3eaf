//! The shape `weft check` reports in, and its human and JSON renderings.

use std::io::Write;
use std::path::Path;

use anstyle::{AnsiColor, Style};
use serde::Serialize;
use weft_contract::source::Position;

/// One valid descriptor found.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// The file it came from.
    pub path: String,
    /// `id@version`.
    pub qualified_id: String,
    /// Its revision.
    pub revision: String,
}

/// One capability of an agent's catalog (checked with the CompozyOS rules).
#[derive(Debug, Clone, Serialize)]
pub struct FoundCapability {
    /// The agent's name.
    pub agent: String,
    /// The agent directory.
    pub path: String,
    /// The capability id.
    pub id: String,
    /// The catalog record's digest.
    pub digest: String,
}

/// One problem found.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// The file (or folder) it concerns.
    pub path: String,
    /// 1-based line, when the problem has a place in a file.
    pub line: Option<usize>,
    /// 1-based column, when the problem has a place in a file.
    pub column: Option<usize>,
    /// Stable error code.
    pub code: String,
    /// Explanation.
    pub message: String,
}

impl Problem {
    /// A problem at a place in a file.
    pub fn at(path: &Path, position: Position, code: &str, message: String) -> Self {
        Problem {
            path: path.display().to_string(),
            line: Some(position.line),
            column: Some(position.column),
            code: code.to_owned(),
            message,
        }
    }

    /// A problem with the file as a whole (it could not be opened, and so on).
    pub fn io(path: &Path, code: &str, message: String) -> Self {
        Problem {
            path: path.display().to_string(),
            line: None,
            column: None,
            code: code.to_owned(),
            message,
        }
    }
}

/// Everything one `weft check` run found.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// True when no problem was found.
    pub ok: bool,
    /// Valid descriptors, in input order.
    pub descriptors: Vec<Found>,
    /// Capabilities of the agent directories checked, in input order.
    pub agent_capabilities: Vec<FoundCapability>,
    /// Problems, in input order.
    pub errors: Vec<Problem>,
}

impl Report {
    /// Writes the report for people: descriptors on stdout, problems on stderr, colored when
    /// the stream is a terminal (anstream strips styles otherwise and honours `NO_COLOR`).
    pub fn print_human(&self) -> std::io::Result<()> {
        let mut out = anstream::stdout();
        let id_style = Style::new().bold();
        for found in &self.descriptors {
            writeln!(
                out,
                "{id_style}{}{id_style:#}  {}",
                found.qualified_id, found.revision
            )?;
        }
        for found in &self.agent_capabilities {
            writeln!(
                out,
                "{id_style}{}/{}{id_style:#}  {}",
                found.agent, found.id, found.digest
            )?;
        }
        let mut err = anstream::stderr();
        let place = Style::new().bold();
        let code = Style::new().fg_color(Some(AnsiColor::Red.into())).bold();
        for problem in &self.errors {
            let location = match (problem.line, problem.column) {
                (Some(line), Some(column)) => format!("{}:{line}:{column}", problem.path),
                _ => problem.path.clone(),
            };
            writeln!(
                err,
                "{place}{location}{place:#}: {code}{}{code:#}: {}",
                problem.code, problem.message
            )?;
        }
        Ok(())
    }

    /// Writes the report as one JSON document on stdout.
    pub fn print_json(&self) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, self)?;
        writeln!(out)
    }
}
