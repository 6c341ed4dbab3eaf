//! Filesystem access that never follows symlinks.
//!
//! CompozyOS opens every path with `O_NOFOLLOW` through a chain of directory handles. Here
//! each path is inspected with [`std::fs::symlink_metadata`] (or the directory entry's own
//! type) and only then opened; right after opening, before a single byte is read, the handle's
//! metadata must show the same regular file (same device and inode on Unix). A symlink swapped
//! in between the two steps is therefore detected and its target never read. One residual
//! race remains: a FIFO swapped in at that moment would make `open` wait for a writer.

use std::ffi::OsString;
use std::fs::{self, File, FileType, Metadata};
use std::io::{self, Read as _};
use std::path::{Component, Path, PathBuf};

/// What a reserved path is, without following symlinks.
pub(crate) enum Probe {
    Missing,
    Symlink,
    Directory,
    Special,
    File(Metadata),
}

/// Inspects `path` without following a symlink at its last component.
pub(crate) fn probe(path: &Path) -> io::Result<Probe> {
    match fs::symlink_metadata(path) {
        Ok(meta) => {
            let kind = meta.file_type();
            Ok(if kind.is_symlink() {
                Probe::Symlink
            } else if kind.is_dir() {
                Probe::Directory
            } else if kind.is_file() {
                Probe::File(meta)
            } else {
                Probe::Special
            })
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(Probe::Missing),
        Err(error) => Err(error),
    }
}

/// Why [`read_regular`] failed.
pub(crate) enum ReadFailure {
    Io(io::Error),
    /// The path no longer names the file that was inspected; `now_symlink` tells whether it
    /// is a symlink now.
    Changed {
        now_symlink: bool,
    },
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_a: &Metadata, _b: &Metadata) -> bool {
    true
}

/// Reads the regular file at `path`, which was inspected as `inspected`, refusing to read
/// anything else (see the module documentation).
pub(crate) fn read_regular(path: &Path, inspected: &Metadata) -> Result<Vec<u8>, ReadFailure> {
    let mut file = File::open(path).map_err(ReadFailure::Io)?;
    let opened = file.metadata().map_err(ReadFailure::Io)?;
    if !opened.is_file() || !same_file(&opened, inspected) {
        let now_symlink = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        return Err(ReadFailure::Changed { now_symlink });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(ReadFailure::Io)?;
    Ok(bytes)
}

/// Why a directory path cannot be opened without following symlinks.
pub(crate) enum ChainFailure {
    /// A component does not exist.
    NotFound(io::Error),
    /// This component is a symlink.
    Symlink(PathBuf),
    /// This component is not a directory.
    NotADirectory(PathBuf),
    /// Inspecting a component failed.
    Io(io::Error),
}

/// Go's `filepath.Clean` on the component level: drops `.`, resolves `name/..` lexically,
/// keeps leading `..` of a relative path and drops `..` right after the root.
pub(crate) fn lexical_clean(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(component),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

/// On macOS the system keeps `/etc`, `/tmp` and `/var` as symlinks into `/private`;
/// CompozyOS accepts exactly those as the first component, and so does this crate.
#[cfg(target_os = "macos")]
fn is_system_root_alias(prefix: &Path, depth: usize) -> bool {
    let Some(name) = prefix.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    depth == 0
        && prefix.is_absolute()
        && matches!(name, "etc" | "tmp" | "var")
        && fs::read_link(prefix).is_ok_and(|target| {
            target == Path::new("/private").join(name) || target == Path::new("private").join(name)
        })
}

#[cfg(not(target_os = "macos"))]
fn is_system_root_alias(_prefix: &Path, _depth: usize) -> bool {
    false
}

/// Checks that every component of `dir` (after lexical cleaning) is a real directory and
/// none is a symlink, as CompozyOS's no-follow directory chain requires.
pub(crate) fn check_directory_chain(dir: &Path) -> Result<(), ChainFailure> {
    let cleaned = lexical_clean(dir);
    let mut prefix = PathBuf::new();
    let mut depth = 0;
    for component in cleaned.components() {
        prefix.push(component);
        if !matches!(component, Component::Normal(_)) {
            continue;
        }
        match fs::symlink_metadata(&prefix) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if !is_system_root_alias(&prefix, depth) {
                    return Err(ChainFailure::Symlink(prefix));
                }
            }
            Ok(meta) if !meta.is_dir() => return Err(ChainFailure::NotADirectory(prefix)),
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(ChainFailure::NotFound(error));
            }
            Err(error) => return Err(ChainFailure::Io(error)),
        }
        depth += 1;
    }
    Ok(())
}

/// One entry of a listed directory.
pub(crate) struct Entry {
    pub(crate) name: OsString,
    pub(crate) path: PathBuf,
    pub(crate) file_type: FileType,
    entry: fs::DirEntry,
}

impl Entry {
    /// The entry's metadata, not following a symlink.
    pub(crate) fn metadata(&self) -> io::Result<Metadata> {
        self.entry.metadata()
    }
}

/// Lists `dir`, sorted by the bytes of the names (Go sorts the joined path strings, which
/// within one directory is the same order).
pub(crate) fn sorted_entries(dir: &Path) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        entries.push(Entry {
            name: entry.file_name(),
            path: entry.path(),
            file_type,
            entry,
        });
    }
    entries.sort_by(|a, b| a.name.as_encoded_bytes().cmp(b.name.as_encoded_bytes()));
    Ok(entries)
}

/// Whether a directory entry name is hidden (starts with `.`).
pub(crate) fn is_dot_name(name: &OsString) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// Sorts paths by their bytes, like Go's `sort.Strings` over path strings (unlike
/// `PathBuf`'s component-wise order, this puts `capabilities.json` before `capabilities/x`).
pub(crate) fn sort_paths(paths: &mut [PathBuf]) {
    paths.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn clean_is_lexical_like_go() {
        assert_eq!(lexical_clean(Path::new("a/./b/../c")), PathBuf::from("a/c"));
        assert_eq!(lexical_clean(Path::new("../a/..")), PathBuf::from(".."));
        assert_eq!(lexical_clean(Path::new("/../a")), PathBuf::from("/a"));
        assert_eq!(lexical_clean(Path::new("a/..")), PathBuf::new());
    }

    #[test]
    fn byte_order_differs_from_component_order() {
        let mut paths = vec![
            PathBuf::from("a/capabilities/x.json"),
            PathBuf::from("a/capabilities.toml"),
            PathBuf::from("a/capabilities"),
            PathBuf::from("a/capabilities.json"),
        ];
        sort_paths(&mut paths);
        assert_eq!(
            paths,
            [
                "a/capabilities",
                "a/capabilities.json",
                "a/capabilities.toml",
                "a/capabilities/x.json"
            ]
            .map(PathBuf::from)
        );
    }
}
