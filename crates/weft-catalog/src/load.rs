//! Finding an agent's catalog layout and loading it, in CompozyOS's order of checks.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{CatalogError, Format, IoAction, NotAFileKind, PathSubject, RecordLayout};
use crate::fsutil::{
    self, ChainFailure, Probe, ReadFailure, check_directory_chain, is_dot_name, sort_paths,
    sorted_entries,
};
use crate::raw::{RawRecord, go_lossy_utf8, go_trim, position_at};
use crate::record::{AgentCatalog, CatalogSource};
use crate::validate::{Basename, Decoded, Validator};
use crate::{json, toml_src};

/// Name of the single-file TOML catalog.
pub const CATALOG_TOML: &str = "capabilities.toml";
/// Name of the single-file JSON catalog.
pub const CATALOG_JSON: &str = "capabilities.json";
/// Name of the one-record-per-file catalog directory.
pub const CATALOG_DIR: &str = "capabilities";

/// The agent directory with surrounding whitespace trimmed (Go's `strings.TrimSpace`, as
/// CompozyOS does); empty is an error. A path that is not UTF-8 is used as is.
fn trimmed_dir(agent_dir: &Path) -> Result<PathBuf, CatalogError> {
    let dir = match agent_dir.to_str() {
        Some(text) => PathBuf::from(go_trim(text)),
        None => agent_dir.to_path_buf(),
    };
    if dir.as_os_str().is_empty() {
        Err(CatalogError::AgentDirRequired)
    } else {
        Ok(dir)
    }
}

/// The ancestor component named in an agent-directory error, unless it is the directory.
fn ancestor(dir: &Path, component: PathBuf) -> Option<PathBuf> {
    (fsutil::lexical_clean(dir) != component).then_some(component)
}

fn open_agent_dir(dir: &Path) -> Result<(), CatalogError> {
    check_directory_chain(dir).map_err(|failure| match failure {
        ChainFailure::NotFound(source) => CatalogError::Io {
            path: dir.to_path_buf(),
            action: IoAction::OpenAgentDirectory,
            source,
        },
        ChainFailure::Symlink(component) => CatalogError::Symlink {
            path: dir.to_path_buf(),
            subject: PathSubject::AgentDirectory,
            component: ancestor(dir, component),
        },
        ChainFailure::NotADirectory(component) => CatalogError::NotADirectory {
            path: dir.to_path_buf(),
            subject: PathSubject::AgentDirectory,
            component: ancestor(dir, component),
        },
        ChainFailure::Io(source) => CatalogError::Io {
            path: dir.to_path_buf(),
            action: IoAction::OpenAgentDirectory,
            source,
        },
    })
}

fn read_failure(
    path: &Path,
    subject: PathSubject,
    action: IoAction,
    failure: ReadFailure,
) -> CatalogError {
    match failure {
        ReadFailure::Io(source) => CatalogError::Io {
            path: path.to_path_buf(),
            action,
            source,
        },
        ReadFailure::Changed { now_symlink: true } => CatalogError::Symlink {
            path: path.to_path_buf(),
            subject,
            component: None,
        },
        ReadFailure::Changed { now_symlink: false } => CatalogError::Io {
            path: path.to_path_buf(),
            action,
            source: io::Error::other("the file changed while it was being opened"),
        },
    }
}

/// Reads `capabilities.toml` / `capabilities.json` if present; wrong path types are errors.
fn read_catalog_file(path: &Path) -> Result<Option<Vec<u8>>, CatalogError> {
    let io_error = |source| CatalogError::Io {
        path: path.to_path_buf(),
        action: IoAction::OpenCatalogFile,
        source,
    };
    match fsutil::probe(path).map_err(io_error)? {
        Probe::Missing => Ok(None),
        Probe::Symlink => Err(CatalogError::Symlink {
            path: path.to_path_buf(),
            subject: PathSubject::CatalogFile,
            component: None,
        }),
        Probe::Directory => Err(CatalogError::NotAFile {
            path: path.to_path_buf(),
            kind: NotAFileKind::Directory,
        }),
        Probe::Special => Err(CatalogError::NotAFile {
            path: path.to_path_buf(),
            kind: NotAFileKind::Special,
        }),
        Probe::File(meta) => fsutil::read_regular(path, &meta).map(Some).map_err(|f| {
            read_failure(path, PathSubject::CatalogFile, IoAction::OpenCatalogFile, f)
        }),
    }
}

/// Whether `capabilities/` is present; wrong path types are errors.
fn probe_catalog_dir(path: &Path) -> Result<bool, CatalogError> {
    let probe = fsutil::probe(path).map_err(|source| CatalogError::Io {
        path: path.to_path_buf(),
        action: IoAction::OpenCatalogDirectory,
        source,
    })?;
    match probe {
        Probe::Missing => Ok(false),
        Probe::Directory => Ok(true),
        Probe::Symlink => Err(CatalogError::Symlink {
            path: path.to_path_buf(),
            subject: PathSubject::CatalogDirectory,
            component: None,
        }),
        Probe::File(_) | Probe::Special => Err(CatalogError::NotADirectory {
            path: path.to_path_buf(),
            subject: PathSubject::CatalogDirectory,
            component: None,
        }),
    }
}

/// The text of a catalog file. JSON: invalid UTF-8 becomes U+FFFD byte by byte, as Go's
/// decoder does inside strings (outside strings it is a syntax error either way). TOML:
/// invalid UTF-8 is an error, as in `BurntSushi/toml`.
fn text_of<'b>(path: &Path, bytes: &'b [u8], format: Format) -> Result<Cow<'b, str>, CatalogError> {
    match format {
        Format::Json => Ok(go_lossy_utf8(bytes, false)),
        Format::Toml => std::str::from_utf8(bytes)
            .map(Cow::Borrowed)
            .map_err(|error| {
                let valid = bytes.get(..error.valid_up_to()).unwrap_or_default();
                let prefix = std::str::from_utf8(valid).unwrap_or_default();
                CatalogError::InvalidToml {
                    path: path.to_path_buf(),
                    position: Some(position_at(prefix, prefix.len())),
                    record: None,
                    field: None,
                    message: "invalid UTF-8".to_owned(),
                }
            }),
    }
}

/// Loads an agent's capability catalog exactly as CompozyOS's `LoadAgentCapabilities` does.
///
/// Order of checks: the (trimmed) agent directory must be non-empty and reachable without
/// any symlink in its path; then `capabilities.toml`, `capabilities.json` and `capabilities/`
/// are probed in that order, each wrong path type failing at once (symlink, directory or
/// special file where a file is expected, anything but a directory for `capabilities/`);
/// a single file beside the directory is [`CatalogError::MixedLayouts`] (naming only the paths
/// that exist), checked before two single files ([`CatalogError::MultipleCatalogFiles`]).
/// Then the one layout present is decoded strictly and every record is normalized, validated
/// and digested in catalog order; the first error wins.
///
/// No catalog at all is not an error: the result has [`CatalogSource::None`] and no records,
/// which differs from an empty `capabilities/` ([`CatalogSource::Directory`], no records).
/// Requirements are never resolved against the catalog.
pub fn load_agent_catalog(agent_dir: &Path) -> Result<AgentCatalog, CatalogError> {
    let dir = trimmed_dir(agent_dir)?;
    open_agent_dir(&dir)?;
    let toml_path = dir.join(CATALOG_TOML);
    let json_path = dir.join(CATALOG_JSON);
    let dir_path = dir.join(CATALOG_DIR);

    let toml = read_catalog_file(&toml_path)?;
    let json = read_catalog_file(&json_path)?;
    let has_dir = probe_catalog_dir(&dir_path)?;

    if has_dir && (toml.is_some() || json.is_some()) {
        let mut paths = Vec::with_capacity(3);
        if toml.is_some() {
            paths.push(toml_path);
        }
        if json.is_some() {
            paths.push(json_path);
        }
        paths.push(dir_path);
        return Err(CatalogError::MixedLayouts {
            agent_dir: dir,
            paths,
        });
    }
    match (toml, json) {
        (Some(_), Some(_)) => Err(CatalogError::MultipleCatalogFiles {
            agent_dir: dir,
            paths: vec![toml_path, json_path],
        }),
        (Some(bytes), None) => load_single_file(toml_path, &bytes, Format::Toml),
        (None, Some(bytes)) => load_single_file(json_path, &bytes, Format::Json),
        (None, None) if has_dir => load_directory(dir_path),
        (None, None) => Ok(AgentCatalog {
            source: CatalogSource::None,
            records: Vec::new(),
        }),
    }
}

fn load_single_file(
    path: PathBuf,
    bytes: &[u8],
    format: Format,
) -> Result<AgentCatalog, CatalogError> {
    let text = text_of(&path, bytes, format)?;
    let raws = match format {
        Format::Toml => toml_src::decode_catalog(&text, &path)?,
        Format::Json => json::decode_catalog(&text, &path)?,
    };
    let mut validator = Validator::new(path.clone(), RecordLayout::SingleFile, raws.len());
    for (index, raw) in raws.iter().enumerate() {
        validator.push(&Decoded {
            index,
            path: &path,
            text: &text,
            raw,
            basename: None,
        })?;
    }
    let source = match format {
        Format::Toml => CatalogSource::TomlFile(path),
        Format::Json => CatalogSource::JsonFile(path),
    };
    Ok(AgentCatalog {
        source,
        records: validator.finish(),
    })
}

/// The format a directory entry selects by its extension (exact, case-sensitive, after the
/// last dot, like Go's `filepath.Ext`), if any.
fn record_format(path: &Path) -> Option<Format> {
    match path.extension()?.as_encoded_bytes() {
        b"toml" => Some(Format::Toml),
        b"json" => Some(Format::Json),
        _ => None,
    }
}

struct RecordFile {
    path: PathBuf,
    format: Format,
    basename: Basename,
    bytes: Vec<u8>,
}

/// Reads every selected record file of `capabilities/`, in sorted name order: dot-names and
/// other extensions are ignored, directories and special files skipped, a symlink is an error.
fn read_record_files(dir: &Path) -> Result<Vec<RecordFile>, CatalogError> {
    let entries = sorted_entries(dir).map_err(|source| CatalogError::Io {
        path: dir.to_path_buf(),
        action: IoAction::ReadCatalogDirectory,
        source,
    })?;
    let mut files = Vec::with_capacity(entries.len());
    for entry in entries {
        if is_dot_name(&entry.name) {
            continue;
        }
        let Some(format) = record_format(&entry.path) else {
            continue;
        };
        if entry.file_type.is_symlink() {
            return Err(CatalogError::Symlink {
                path: entry.path,
                subject: PathSubject::RecordFile,
                component: None,
            });
        }
        if !entry.file_type.is_file() {
            continue;
        }
        let fail = |f| {
            read_failure(
                &entry.path,
                PathSubject::RecordFile,
                IoAction::ReadCatalogEntry,
                f,
            )
        };
        let meta = entry.metadata().map_err(|e| fail(ReadFailure::Io(e)))?;
        let bytes = fsutil::read_regular(&entry.path, &meta).map_err(fail)?;
        let stem = entry.path.file_stem().unwrap_or_default();
        let basename = Basename {
            display: stem.to_string_lossy().into_owned(),
            utf8: stem.to_str().map(str::to_owned),
        };
        files.push(RecordFile {
            path: entry.path,
            format,
            basename,
            bytes,
        });
    }
    Ok(files)
}

fn load_directory(dir: PathBuf) -> Result<AgentCatalog, CatalogError> {
    let files = read_record_files(&dir)?;
    decode_directory(dir, files)
}

/// Decodes, normalizes, validates and digests a single-file catalog whose bytes are already
/// in memory, exactly as [`load_agent_catalog`] does once it has read `capabilities.toml` or
/// `capabilities.json`.
///
/// `path` is used only to name the file in errors and in the result's
/// [`CatalogSource`]; nothing is read from disk. Useful for catalogs that do not live in a
/// file (and for fuzzing the decoders).
pub fn parse_catalog_file(
    path: &Path,
    bytes: &[u8],
    format: Format,
) -> Result<AgentCatalog, CatalogError> {
    load_single_file(path.to_path_buf(), bytes, format)
}

/// Decodes, normalizes, validates and digests the record files of a `capabilities/`
/// directory whose contents are already in memory, exactly as [`load_agent_catalog`] does
/// once it has read them.
///
/// `files` holds `(file name, bytes)` pairs, names relative to `dir`, in any order. As on
/// disk, dot-names and names without a `.toml` or `.json` extension are ignored, the rest
/// are taken in byte order of their names, and mixing the two formats is an error. Nothing
/// is read from disk: `dir` only names paths in errors and in the result.
pub fn parse_record_files(
    dir: &Path,
    files: &[(&str, &[u8])],
) -> Result<AgentCatalog, CatalogError> {
    let mut selected: Vec<RecordFile> = files
        .iter()
        .filter(|(name, _)| !name.starts_with('.'))
        .filter_map(|(name, bytes)| {
            let path = dir.join(name);
            let format = record_format(&path)?;
            let stem = path.file_stem().unwrap_or_default();
            let basename = Basename {
                display: stem.to_string_lossy().into_owned(),
                utf8: stem.to_str().map(str::to_owned),
            };
            Some(RecordFile {
                path,
                format,
                basename,
                bytes: bytes.to_vec(),
            })
        })
        .collect();
    selected.sort_by(|a, b| {
        let name = |f: &RecordFile| f.path.file_name().unwrap_or_default().to_owned();
        name(a).as_encoded_bytes().cmp(name(b).as_encoded_bytes())
    });
    decode_directory(dir.to_path_buf(), selected)
}

fn decode_directory(dir: PathBuf, files: Vec<RecordFile>) -> Result<AgentCatalog, CatalogError> {
    let (tomls, jsons): (Vec<RecordFile>, Vec<RecordFile>) = files
        .into_iter()
        .partition(|file| file.format == Format::Toml);
    if !tomls.is_empty() && !jsons.is_empty() {
        let paths = tomls.iter().chain(&jsons).map(|f| f.path.clone()).collect();
        return Err(CatalogError::MixedFormats { dir, paths });
    }
    let selected = if tomls.is_empty() { jsons } else { tomls };

    // CompozyOS decodes every file before validating any of them.
    let mut decoded: Vec<(Cow<'_, str>, RawRecord)> = Vec::with_capacity(selected.len());
    for (index, file) in selected.iter().enumerate() {
        let text = text_of(&file.path, &file.bytes, file.format)?;
        let raw = match file.format {
            Format::Toml => toml_src::decode_record(&text, &file.path, index)?,
            Format::Json => json::decode_record(&text, &file.path, index)?,
        };
        decoded.push((text, raw));
    }
    let mut validator = Validator::new(dir.clone(), RecordLayout::Directory, selected.len());
    for (index, (file, (text, raw))) in selected.iter().zip(&decoded).enumerate() {
        validator.push(&Decoded {
            index,
            path: &file.path,
            text,
            raw,
            basename: Some(&file.basename),
        })?;
    }
    Ok(AgentCatalog {
        source: CatalogSource::Directory(dir),
        records: validator.finish(),
    })
}

/// The sorted list of paths whose changes can affect [`load_agent_catalog`] for this agent,
/// as CompozyOS's `AgentCapabilityCatalogDependencyPaths` computes it for cache and watch
/// invalidation: the three probe paths (whether they exist or not) plus every `.toml` /
/// `.json` regular file of `capabilities/` that is not a dot-name (both formats, since a
/// mixed directory is an error that must be watched too).
///
/// A missing `capabilities/` (or one that is not a directory) just yields the three probe
/// paths; a symlinked `capabilities/`, a symlink anywhere in its path or a symlinked record
/// file is an error. Paths are sorted by their bytes, as Go sorts strings.
pub fn catalog_dependency_paths(agent_dir: &Path) -> Result<Vec<PathBuf>, CatalogError> {
    let dir = trimmed_dir(agent_dir)?;
    let dir_path = dir.join(CATALOG_DIR);
    let mut paths = vec![
        dir.join(CATALOG_TOML),
        dir.join(CATALOG_JSON),
        dir_path.clone(),
    ];
    match check_directory_chain(&dir_path) {
        Ok(()) => {}
        Err(ChainFailure::NotFound(_) | ChainFailure::NotADirectory(_)) => {
            sort_paths(&mut paths);
            return Ok(paths);
        }
        Err(ChainFailure::Symlink(component)) => {
            return Err(match ancestor(&dir_path, component) {
                None => CatalogError::Symlink {
                    path: dir_path,
                    subject: PathSubject::CatalogDirectory,
                    component: None,
                },
                Some(component) => CatalogError::Symlink {
                    path: dir,
                    subject: PathSubject::AgentDirectory,
                    component: Some(component),
                },
            });
        }
        Err(ChainFailure::Io(source)) => {
            return Err(CatalogError::Io {
                path: dir_path,
                action: IoAction::OpenCatalogDirectory,
                source,
            });
        }
    }
    let entries = sorted_entries(&dir_path).map_err(|source| CatalogError::Io {
        path: dir_path.clone(),
        action: IoAction::ReadCatalogDirectory,
        source,
    })?;
    for entry in entries {
        if is_dot_name(&entry.name) || record_format(&entry.path).is_none() {
            continue;
        }
        if entry.file_type.is_symlink() {
            return Err(CatalogError::Symlink {
                path: entry.path,
                subject: PathSubject::RecordFile,
                component: None,
            });
        }
        if entry.file_type.is_file() {
            paths.push(entry.path);
        }
    }
    sort_paths(&mut paths);
    Ok(paths)
}
