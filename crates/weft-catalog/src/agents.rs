//! Finding the agents in a folder and loading each one's catalog.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{CatalogError, IoAction};
use crate::fsutil::{is_dot_name, sorted_entries};
use crate::load::{CATALOG_DIR, CATALOG_JSON, CATALOG_TOML, load_agent_catalog};
use crate::record::AgentCatalog;

/// The file that marks a directory as an agent even when it has no catalog.
pub const AGENT_MANIFEST: &str = "AGENT.md";

/// One agent found by [`discover_agents`], with the outcome of loading its catalog.
#[derive(Debug)]
pub struct DiscoveredAgent {
    /// The agent's name: its folder name (lossy if not UTF-8).
    pub name: String,
    /// The agent directory.
    pub dir: PathBuf,
    /// The loaded catalog, or the first error loading it. One agent's error does not stop
    /// the others from loading.
    pub catalog: Result<AgentCatalog, CatalogError>,
}

/// Whether `dir` holds any of the three catalog probe paths or an `AGENT.md` (of any file
/// type: a symlinked catalog still marks an agent, whose load then reports the symlink).
pub fn is_agent_dir(dir: &Path) -> bool {
    [CATALOG_TOML, CATALOG_JSON, CATALOG_DIR, AGENT_MANIFEST]
        .iter()
        .any(|name| fs::symlink_metadata(dir.join(name)).is_ok())
}

fn load(name: String, dir: PathBuf) -> DiscoveredAgent {
    let catalog = load_agent_catalog(&dir);
    DiscoveredAgent { name, dir, catalog }
}

/// Finds the agents under `root` and loads each one's catalog.
///
/// If `root` itself has a catalog (`capabilities.toml`, `capabilities.json` or
/// `capabilities/`) or an `AGENT.md`, it is the only agent, named after its last path
/// component. Otherwise every immediate subdirectory that has one of those is an agent named
/// after the subdirectory; dot-named entries, files and symlinks to directories are not
/// considered (symlinks are never followed). Agents come sorted by name.
///
/// Only a failure to list `root` is an error here; a catalog that fails to load is reported
/// in that agent's [`DiscoveredAgent::catalog`].
pub fn discover_agents(root: &Path) -> Result<Vec<DiscoveredAgent>, CatalogError> {
    if is_agent_dir(root) {
        let name = root
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string());
        return Ok(vec![load(name, root.to_path_buf())]);
    }
    let entries = sorted_entries(root).map_err(|source| CatalogError::Io {
        path: root.to_path_buf(),
        action: IoAction::ReadAgentsFolder,
        source,
    })?;
    let mut agents: Vec<DiscoveredAgent> = entries
        .into_iter()
        .filter(|entry| !is_dot_name(&entry.name) && entry.file_type.is_dir())
        .filter(|entry| is_agent_dir(&entry.path))
        .map(|entry| load(entry.name.to_string_lossy().into_owned(), entry.path))
        .collect();
    agents.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.dir.cmp(&b.dir)));
    Ok(agents)
}
