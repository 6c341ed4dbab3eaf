//! Agent catalogs served by the node (`--agents DIR`), reloaded when their files change.
//!
//! Reloading polls: every `agents_poll_ms` the node fingerprints the agents folder listing
//! and every input path that can affect loading (`catalog_dependency_paths`: sizes and
//! modification times) and reloads everything when the fingerprint changes. Polling needs no
//! platform watcher, works on every filesystem, and costs a few `stat` calls per agent.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use utoipa::ToSchema;
use weft_catalog::{CapabilityRecord, CatalogSource, catalog_dependency_paths, discover_agents};

use crate::state::AppState;

/// A catalog problem, as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentProblem {
    /// Stable code from the catalog loader.
    pub code: String,
    /// What is wrong, with the file and position.
    pub message: String,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

/// One agent as served.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AgentView {
    /// The agent's folder name.
    pub name: String,
    /// `toml`, `json`, `directory`, or absent when the agent has no catalog.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog: Option<&'static str>,
    /// Capabilities with their digests (empty when the catalog failed to load).
    #[schema(value_type = Vec<Object>)]
    pub capabilities: Vec<CapabilityRecord>,
    /// Why the catalog failed to load, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AgentProblem>,
}

/// Everything loaded from the agents folder at one moment.
#[derive(Debug, Default)]
pub struct AgentsSnapshot {
    /// Agents sorted by name.
    pub agents: Vec<AgentView>,
    /// A problem with the folder itself (it cannot be listed).
    pub error: Option<AgentProblem>,
    fingerprint: Vec<String>,
    /// Whether a folder was configured at all.
    pub configured: bool,
}

fn problem_of(error: &weft_catalog::CatalogError) -> AgentProblem {
    let position = error.position();
    AgentProblem {
        code: error.code().to_owned(),
        message: error.to_string(),
        line: position.map(|p| p.line),
        column: position.map(|p| p.column),
    }
}

/// What could change the outcome of loading `root`: its listing and every dependency path.
fn fingerprint(root: &Path) -> Vec<String> {
    fn stat(path: &Path) -> String {
        match std::fs::symlink_metadata(path) {
            Ok(m) => format!(
                "{}|{}|{:?}|{}",
                path.display(),
                m.len(),
                m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                m.is_dir()
            ),
            Err(_) => format!("{}|absent", path.display()),
        }
    }
    let mut out = vec![stat(root)];
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for entry in entries {
        out.push(stat(&entry));
        match catalog_dependency_paths(&entry) {
            Ok(paths) => out.extend(paths.iter().map(|p| stat(p))),
            Err(e) => out.push(format!("{}|error|{e}", entry.display())),
        }
    }
    // The root may itself be one agent.
    if let Ok(paths) = catalog_dependency_paths(root) {
        out.extend(paths.iter().map(|p| stat(p)));
    }
    out
}

/// Loads every agent under `root`.
pub fn load(root: &Path) -> AgentsSnapshot {
    let fingerprint = fingerprint(root);
    match discover_agents(root) {
        Ok(found) => AgentsSnapshot {
            agents: found
                .into_iter()
                .map(|agent| match agent.catalog {
                    Ok(catalog) => AgentView {
                        name: agent.name,
                        catalog: match catalog.source {
                            CatalogSource::None => None,
                            CatalogSource::TomlFile(_) => Some("toml"),
                            CatalogSource::JsonFile(_) => Some("json"),
                            CatalogSource::Directory(_) => Some("directory"),
                        },
                        capabilities: catalog.records,
                        error: None,
                    },
                    Err(error) => AgentView {
                        name: agent.name,
                        catalog: None,
                        capabilities: Vec::new(),
                        error: Some(problem_of(&error)),
                    },
                })
                .collect(),
            error: None,
            fingerprint,
            configured: true,
        },
        Err(error) => AgentsSnapshot {
            agents: Vec::new(),
            error: Some(problem_of(&error)),
            fingerprint,
            configured: true,
        },
    }
}

/// Polls the agents folder and swaps in a new snapshot when anything changed.
pub async fn watch(state: AppState, root: PathBuf) {
    let period = Duration::from_millis(state.config.agents_poll_ms);
    loop {
        tokio::time::sleep(period).await;
        let current = state.agents();
        let root_for_check = root.clone();
        let changed = tokio::task::spawn_blocking(move || fingerprint(&root_for_check))
            .await
            .map(|fp| fp != current.fingerprint)
            .unwrap_or(false);
        if !changed {
            continue;
        }
        let root_for_load = root.clone();
        if let Ok(snapshot) = tokio::task::spawn_blocking(move || load(&root_for_load)).await {
            tracing::info!(agents = snapshot.agents.len(), "agent catalogs reloaded");
            *state.agents.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
        }
    }
}
