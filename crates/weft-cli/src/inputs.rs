//! Finding and reading input files, with bounded reads.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use weft_contract::source::{Position, SourceFormat};

use crate::report::Problem;

/// What the command-line paths expand to.
#[derive(Debug, Default)]
pub struct Inputs {
    /// Descriptor files, in a stable order.
    pub files: Vec<PathBuf>,
    /// Agent directories (checked with the catalog rules instead of walked).
    pub agent_dirs: Vec<PathBuf>,
}

/// Expands the command-line paths into descriptor files and agent directories.
///
/// A named file is taken whatever its name (its extension picks the format). A folder that
/// is an agent directory (it has a capability catalog or an `AGENT.md`) is an agent; any
/// other folder is walked recursively for `.json` and `.toml` files and agent directories,
/// skipping hidden entries and never following symlinked folders (so a link loop cannot
/// hang the walk).
pub fn expand(paths: &[PathBuf], problems: &mut Vec<Problem>) -> Inputs {
    let mut inputs = Inputs::default();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                if weft_catalog::is_agent_dir(path) {
                    inputs.agent_dirs.push(path.clone());
                } else {
                    walk(path, &mut inputs, problems);
                }
            }
            Ok(_) => inputs.files.push(path.clone()),
            Err(error) => problems.push(Problem::io(path, "io_error", error.to_string())),
        }
    }
    inputs
}

fn walk(dir: &Path, inputs: &mut Inputs, problems: &mut Vec<Problem>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            problems.push(Problem::io(dir, "io_error", error.to_string()));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if hidden {
            continue;
        }
        if meta.is_dir() {
            if weft_catalog::is_agent_dir(&path) {
                inputs.agent_dirs.push(path);
            } else {
                walk(&path, inputs, problems);
            }
        } else if format_of(&path).is_some() && path.is_file() {
            inputs.files.push(path);
        }
    }
}

/// The format implied by a path's extension.
pub fn format_of(path: &Path) -> Option<SourceFormat> {
    path.extension()
        .and_then(|e| e.to_str())
        .and_then(SourceFormat::from_extension)
}

/// Reads a whole UTF-8 file of at most `limit` bytes.
pub fn read_text(path: &Path, limit: usize) -> Result<String, Problem> {
    let file = File::open(path).map_err(|e| Problem::io(path, "io_error", e.to_string()))?;
    let mut bytes = Vec::new();
    // Read one byte past the limit so that "exactly at the limit" and "over it" differ.
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Problem::io(path, "io_error", e.to_string()))?;
    if bytes.len() > limit {
        return Err(Problem::at(
            path,
            Position::START,
            "document_too_large",
            format!("file is larger than the limit of {limit} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let prefix = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
        Problem::at(
            path,
            Position::of_offset(&prefix, prefix.len()),
            "invalid_utf8",
            format!("invalid UTF-8 at byte {valid}"),
        )
    })
}
