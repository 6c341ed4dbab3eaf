//! Where things are and what they are: the small types that locate and qualify a
//! [`crate::CatalogError`].

use std::fmt;
use std::path::PathBuf;

/// A 1-based line and column inside a catalog file.
///
/// Columns count bytes from the start of the line (as `serde_json` and `toml` do), so a line
/// holding non-ASCII text before the value reports a larger column than the visible one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// 1-based line number.
    pub line: usize,
    /// 1-based byte column.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Which of the two catalog layouts a record came from; it decides how errors are worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordLayout {
    /// A record inside the `capabilities` array of `capabilities.toml` / `capabilities.json`.
    SingleFile,
    /// A bare record file inside `capabilities/`.
    Directory,
}

/// Where a record-level error happened: the file, the record's index and, when known, the
/// position of the offending value (or of the record when the value is missing).
///
/// In directory mode `index` is the file's place in the sorted list of record files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordAt {
    /// The catalog file (single-file mode) or the record file (directory mode).
    pub path: PathBuf,
    /// The record's 0-based index in catalog order.
    pub index: usize,
    /// The layout the record was loaded from.
    pub layout: RecordLayout,
    /// Position of the offending value, or of the record when the value is absent.
    pub position: Option<Position>,
}

impl RecordAt {
    /// Renders `what` (for example `id is required`) with CompozyOS's record prefix.
    pub(crate) fn render(&self, what: &str) -> String {
        let base = match self.layout {
            RecordLayout::SingleFile => format!(
                "validate capability catalog {:?}: capabilities[{}].{what}",
                self.path, self.index
            ),
            RecordLayout::Directory => format!("validate capability {:?}: {what}", self.path),
        };
        with_position(base, self.position)
    }
}

/// The first occurrence of an id that appears twice in one catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstOccurrence {
    /// Index of the first record carrying the id.
    pub index: usize,
    /// File of the first record (the catalog file itself in single-file mode).
    pub path: PathBuf,
    /// Position of the first record's `id` value, when known.
    pub position: Option<Position>,
}

/// Why a path that must be a regular file is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAFileKind {
    /// The path is a directory.
    Directory,
    /// The path is a FIFO, socket, device or other special file.
    Special,
}

/// Which reserved path an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSubject {
    /// The agent directory itself (or one of the components of its path).
    AgentDirectory,
    /// `capabilities.toml` or `capabilities.json`.
    CatalogFile,
    /// The `capabilities/` directory.
    CatalogDirectory,
    /// A `.toml` / `.json` file inside `capabilities/`.
    RecordFile,
}

/// The file format of a catalog file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML.
    Toml,
    /// JSON.
    Json,
}

impl Format {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Format::Toml => "TOML",
            Format::Json => "JSON",
        }
    }
}

/// What the loader was doing when an I/O error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoAction {
    /// Opening (inspecting) the agent directory.
    OpenAgentDirectory,
    /// Opening or reading `capabilities.toml` / `capabilities.json`.
    OpenCatalogFile,
    /// Inspecting `capabilities/`.
    OpenCatalogDirectory,
    /// Listing `capabilities/`.
    ReadCatalogDirectory,
    /// Opening or reading a record file inside `capabilities/`.
    ReadCatalogEntry,
    /// Listing a folder of agents.
    ReadAgentsFolder,
}

impl fmt::Display for IoAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoAction::OpenAgentDirectory => "open agent directory",
            IoAction::OpenCatalogFile => "open capability catalog file",
            IoAction::OpenCatalogDirectory => "open capability catalog directory",
            IoAction::ReadCatalogDirectory => "read capability catalog directory",
            IoAction::ReadCatalogEntry => "read capability catalog entry",
            IoAction::ReadAgentsFolder => "read agents folder",
        })
    }
}

pub(crate) fn with_position(mut message: String, position: Option<Position>) -> String {
    message.push_str(&position_suffix(position));
    message
}

pub(crate) fn position_suffix(position: Option<Position>) -> String {
    position.map(|p| format!(" ({p})")).unwrap_or_default()
}
