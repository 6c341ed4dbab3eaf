//! The one error type of the crate, with stable codes and positions.
//!
//! Every failure is fatal (there is no warning mode) and the loader returns the first one it
//! meets, in the order CompozyOS checks things. Messages read like CompozyOS's (without its Go
//! package prefix) with the position appended when one is known, for example
//! `validate capability catalog "a/capabilities.toml": capabilities[1].summary is required (line 7, column 1)`.

use std::io;
use std::path::{Path, PathBuf};

pub use crate::location::{
    FirstOccurrence, Format, IoAction, NotAFileKind, PathSubject, Position, RecordAt, RecordLayout,
};
use crate::location::{position_suffix, with_position};

/// Every way loading an agent's capability catalog can fail.
///
/// Use [`CatalogError::code`] for a stable machine-readable kind, [`CatalogError::path`] for
/// the file or directory at fault, and [`CatalogError::position`], [`CatalogError::record`]
/// and [`CatalogError::field`] for the finer location when the format allows it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The agent directory path is empty or only whitespace.
    #[error("agent directory is required")]
    AgentDirRequired,

    /// A single-file catalog sits beside a `capabilities/` directory.
    #[error(
        "validate capability catalog {agent_dir:?}: mixed capability catalog layouts: {}",
        quote_paths(paths)
    )]
    MixedLayouts {
        /// The agent directory.
        agent_dir: PathBuf,
        /// The conflicting paths that exist, in probe order (toml, json, directory).
        paths: Vec<PathBuf>,
    },

    /// Both `capabilities.toml` and `capabilities.json` exist.
    #[error(
        "validate capability catalog {agent_dir:?}: multiple capability catalog files: {}",
        quote_paths(paths)
    )]
    MultipleCatalogFiles {
        /// The agent directory.
        agent_dir: PathBuf,
        /// The two catalog files.
        paths: Vec<PathBuf>,
    },

    /// `capabilities/` holds both `.toml` and `.json` record files.
    #[error(
        "validate capability catalog {dir:?}: mixed capability file formats: {}",
        quote_paths(paths)
    )]
    MixedFormats {
        /// The `capabilities/` directory.
        dir: PathBuf,
        /// Every selected file: the sorted `.toml` files, then the sorted `.json` files.
        paths: Vec<PathBuf>,
    },

    /// A catalog file exists but is a directory or a special file.
    #[error("{}", not_a_file_message(path, *kind))]
    NotAFile {
        /// The offending path.
        path: PathBuf,
        /// What it is instead.
        kind: NotAFileKind,
    },

    /// A reserved path (or a component of the agent directory's path) is a symlink.
    /// Symlinks are never followed, so nothing of the target ever reaches a message.
    #[error("{}", symlink_message(path, *subject, component.as_deref()))]
    Symlink {
        /// The reserved path (or the agent directory).
        path: PathBuf,
        /// Which reserved path it is.
        subject: PathSubject,
        /// For the agent directory: the component of its path that is a symlink, when it is
        /// an ancestor rather than the directory itself.
        component: Option<PathBuf>,
    },

    /// The agent directory or `capabilities/` exists but is not a directory.
    #[error("{}", not_a_directory_message(path, *subject, component.as_deref()))]
    NotADirectory {
        /// The offending path.
        path: PathBuf,
        /// Which reserved path it is.
        subject: PathSubject,
        /// For the agent directory: the component of its path that is not a directory, when
        /// it is an ancestor rather than the directory itself.
        component: Option<PathBuf>,
    },

    /// A JSON file is not valid JSON or holds a value of the wrong type.
    #[error("decode capability JSON {path:?}: {message}{}", position_suffix(*position))]
    InvalidJson {
        /// The file.
        path: PathBuf,
        /// Where the problem is.
        position: Option<Position>,
        /// The record index when the problem is inside a record.
        record: Option<usize>,
        /// The field (for example `requirements[2]`) when the problem is inside a field.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },

    /// A TOML file is not valid TOML or holds a value of the wrong type.
    #[error("decode capability TOML {path:?}: {message}{}", position_suffix(*position))]
    InvalidToml {
        /// The file.
        path: PathBuf,
        /// Where the problem is.
        position: Option<Position>,
        /// The record index when the problem is inside a record.
        record: Option<usize>,
        /// The field when the problem is inside a field.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },

    /// A key that is not a capability field (an authored `digest` included).
    #[error(
        "decode capability {} {path:?}: unknown field {field:?}{}{}",
        format.label(),
        record_suffix(*record, *in_catalog),
        position_suffix(*position)
    )]
    UnknownField {
        /// The file.
        path: PathBuf,
        /// The file's format.
        format: Format,
        /// Position of the key (TOML) or of its value (JSON).
        position: Option<Position>,
        /// The record index when the key is inside a record.
        record: Option<usize>,
        /// Whether the record sits in a single-file catalog (changes the wording only).
        in_catalog: bool,
        /// The key as authored; for TOML the dotted key path, as CompozyOS reports it.
        field: String,
    },

    /// A JSON file holds something after its first value.
    #[error(
        "decode capability JSON {path:?}: unexpected trailing JSON value{}",
        position_suffix(*position)
    )]
    TrailingData {
        /// The file.
        path: PathBuf,
        /// Where the trailing data starts.
        position: Option<Position>,
    },

    /// `id`, `summary` or `outcome` is absent or blank after trimming.
    #[error("{}", at.render(&format!("{field} is required")))]
    MissingField {
        /// The record.
        at: RecordAt,
        /// `id`, `summary` or `outcome`.
        field: &'static str,
    },

    /// `version` was authored non-empty but is blank after trimming.
    #[error("{}", at.render("version must not be blank when provided"))]
    BlankVersion {
        /// The record.
        at: RecordAt,
    },

    /// A `requirements` entry is blank after trimming.
    #[error("{}", at.render(&format!("requirements[{index}] is required")))]
    BlankRequirement {
        /// The record.
        at: RecordAt,
        /// Index of the blank entry in authored order.
        index: usize,
    },

    /// Two `requirements` entries are equal after trimming.
    #[error(
        "{}",
        at.render(&format!(
            "requirements duplicate value {value:?} after normalization at indexes {first} and {second}"
        ))
    )]
    DuplicateRequirement {
        /// The record.
        at: RecordAt,
        /// The repeated (trimmed) value.
        value: String,
        /// Index of its first occurrence, in authored order.
        first: usize,
        /// Index of its second occurrence, in authored order.
        second: usize,
    },

    /// In directory mode, the file name without extension (trimmed) differs from the id.
    #[error("{}", at.render(&format!("basename {basename:?} must match id {id:?}")))]
    BasenameMismatch {
        /// The record.
        at: RecordAt,
        /// The raw basename (file name without `.toml` / `.json`).
        basename: String,
        /// The normalized id.
        id: String,
    },

    /// Two records of one catalog have the same id after normalization.
    #[error("{}", duplicate_id_message(catalog, id, first, at))]
    DuplicateId {
        /// The catalog: the single file, or the `capabilities/` directory.
        catalog: PathBuf,
        /// The repeated id.
        id: String,
        /// Where the id first appeared (boxed to keep the error small).
        first: Box<FirstOccurrence>,
        /// The second record carrying it.
        at: RecordAt,
    },

    /// An operating-system error while inspecting or reading a path.
    #[error("{action} {path:?}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// What the loader was doing.
        action: IoAction,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl CatalogError {
    /// A stable snake_case identifier of the error kind.
    pub fn code(&self) -> &'static str {
        match self {
            CatalogError::AgentDirRequired => "agent_dir_required",
            CatalogError::MixedLayouts { .. } => "mixed_layouts",
            CatalogError::MultipleCatalogFiles { .. } => "multiple_catalog_files",
            CatalogError::MixedFormats { .. } => "mixed_formats",
            CatalogError::NotAFile { .. } => "not_a_file",
            CatalogError::Symlink { .. } => "symlink",
            CatalogError::NotADirectory { .. } => "not_a_directory",
            CatalogError::InvalidJson { .. } => "invalid_json",
            CatalogError::InvalidToml { .. } => "invalid_toml",
            CatalogError::UnknownField { .. } => "unknown_field",
            CatalogError::TrailingData { .. } => "trailing_data",
            CatalogError::MissingField { .. } => "missing_field",
            CatalogError::BlankVersion { .. } => "blank_version",
            CatalogError::BlankRequirement { .. } => "blank_requirement",
            CatalogError::DuplicateRequirement { .. } => "duplicate_requirement",
            CatalogError::BasenameMismatch { .. } => "basename_mismatch",
            CatalogError::DuplicateId { .. } => "duplicate_id",
            CatalogError::Io { .. } => "io",
        }
    }

    /// The file or directory the error is about.
    ///
    /// Layout conflicts name the agent directory (or `capabilities/` for mixed formats); a
    /// duplicate id names the file of its second occurrence (the catalog file in single-file
    /// mode). Only [`CatalogError::AgentDirRequired`] has an empty path.
    pub fn path(&self) -> &Path {
        match self {
            CatalogError::AgentDirRequired => Path::new(""),
            CatalogError::MixedLayouts { agent_dir, .. }
            | CatalogError::MultipleCatalogFiles { agent_dir, .. } => agent_dir,
            CatalogError::MixedFormats { dir, .. } => dir,
            CatalogError::NotAFile { path, .. }
            | CatalogError::Symlink { path, .. }
            | CatalogError::NotADirectory { path, .. }
            | CatalogError::InvalidJson { path, .. }
            | CatalogError::InvalidToml { path, .. }
            | CatalogError::UnknownField { path, .. }
            | CatalogError::TrailingData { path, .. }
            | CatalogError::Io { path, .. } => path,
            CatalogError::MissingField { at, .. }
            | CatalogError::BlankVersion { at }
            | CatalogError::BlankRequirement { at, .. }
            | CatalogError::DuplicateRequirement { at, .. }
            | CatalogError::BasenameMismatch { at, .. }
            | CatalogError::DuplicateId { at, .. } => &at.path,
        }
    }

    /// Line and column inside [`CatalogError::path`], when the format allows it.
    pub fn position(&self) -> Option<Position> {
        match self {
            CatalogError::InvalidJson { position, .. }
            | CatalogError::InvalidToml { position, .. }
            | CatalogError::UnknownField { position, .. }
            | CatalogError::TrailingData { position, .. } => *position,
            CatalogError::MissingField { at, .. }
            | CatalogError::BlankVersion { at }
            | CatalogError::BlankRequirement { at, .. }
            | CatalogError::DuplicateRequirement { at, .. }
            | CatalogError::BasenameMismatch { at, .. }
            | CatalogError::DuplicateId { at, .. } => at.position,
            _ => None,
        }
    }

    /// The 0-based index of the record at fault, for record-level errors.
    pub fn record(&self) -> Option<usize> {
        match self {
            CatalogError::InvalidJson { record, .. }
            | CatalogError::InvalidToml { record, .. }
            | CatalogError::UnknownField { record, .. } => *record,
            CatalogError::MissingField { at, .. }
            | CatalogError::BlankVersion { at }
            | CatalogError::BlankRequirement { at, .. }
            | CatalogError::DuplicateRequirement { at, .. }
            | CatalogError::BasenameMismatch { at, .. }
            | CatalogError::DuplicateId { at, .. } => Some(at.index),
            _ => None,
        }
    }

    /// The field at fault (for example `summary` or `requirements[2]`), when there is one.
    pub fn field(&self) -> Option<String> {
        match self {
            CatalogError::InvalidJson { field, .. } | CatalogError::InvalidToml { field, .. } => {
                field.clone()
            }
            CatalogError::UnknownField { field, .. } => Some(field.clone()),
            CatalogError::MissingField { field, .. } => Some((*field).to_owned()),
            CatalogError::BlankVersion { .. } => Some("version".to_owned()),
            CatalogError::BlankRequirement { index, .. } => Some(format!("requirements[{index}]")),
            CatalogError::DuplicateRequirement { second, .. } => {
                Some(format!("requirements[{second}]"))
            }
            CatalogError::BasenameMismatch { .. } | CatalogError::DuplicateId { .. } => {
                Some("id".to_owned())
            }
            _ => None,
        }
    }
}

fn record_suffix(record: Option<usize>, in_catalog: bool) -> String {
    match record {
        Some(index) if in_catalog => format!(" in capabilities[{index}]"),
        _ => String::new(),
    }
}

fn quote_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("{p:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn not_a_file_message(path: &Path, kind: NotAFileKind) -> String {
    match kind {
        NotAFileKind::Directory => format!("capability catalog file {path:?} must be a file"),
        NotAFileKind::Special => {
            format!("capability catalog file {path:?} must be a regular file")
        }
    }
}

fn symlink_message(path: &Path, subject: PathSubject, component: Option<&Path>) -> String {
    match subject {
        PathSubject::AgentDirectory => match component {
            Some(component) => {
                format!("open agent directory {path:?}: path component {component:?} is a symlink")
            }
            None => format!("open agent directory {path:?}: must be a directory, not a symlink"),
        },
        PathSubject::CatalogFile => {
            format!("capability catalog file {path:?} must be a file, not a symlink")
        }
        PathSubject::CatalogDirectory => {
            format!("capability catalog directory {path:?} must be a directory, not a symlink")
        }
        PathSubject::RecordFile => {
            format!("read capability catalog entry {path:?}: must be a file, not a symlink")
        }
    }
}

fn not_a_directory_message(path: &Path, subject: PathSubject, component: Option<&Path>) -> String {
    match (subject, component) {
        (PathSubject::AgentDirectory, Some(component)) => format!(
            "open agent directory {path:?}: path component {component:?} is not a directory"
        ),
        (PathSubject::AgentDirectory, None) => {
            format!("open agent directory {path:?}: must be a directory")
        }
        _ => format!("capability catalog directory {path:?} must be a directory"),
    }
}

fn duplicate_id_message(
    catalog: &Path,
    id: &str,
    first: &FirstOccurrence,
    at: &RecordAt,
) -> String {
    let base = match at.layout {
        RecordLayout::SingleFile => format!(
            "validate capability catalog {catalog:?}: duplicate capability id {id:?} after normalization at indexes {} and {}",
            first.index, at.index
        ),
        RecordLayout::Directory => format!(
            "validate capability catalog {catalog:?}: duplicate capability id {id:?} after normalization in {:?} and {:?}",
            first.path, at.path
        ),
    };
    with_position(base, at.position)
}
