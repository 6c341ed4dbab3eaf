//! The loaded shapes: one capability record, and one agent's catalog.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// One normalized capability of an agent, as loaded from its catalog.
///
/// Records returned by [`crate::load_agent_catalog`] are normalized: scalars trimmed, blank
/// entries dropped from the five descriptive lists (authored order kept), `requirements`
/// trimmed, unique and byte-sorted, and `digest` computed. A list that is empty means the
/// field was absent (or held only blanks). `version` is `None` when it was absent or authored
/// as `""`.
///
/// Serializes to JSON with every field, `digest` included, omitting `version` when `None` and
/// lists when empty. There is deliberately no `Deserialize`: the digest is never authored.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct CapabilityRecord {
    /// Stable slug, unique within one agent's catalog.
    pub id: String,
    /// One-line hook shown in agent inspection.
    pub summary: String,
    /// What success looks like to the caller.
    pub outcome: String,
    /// Free-form version, when the capability is versioned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What the caller must provide.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_needed: Vec<String>,
    /// What the caller gets back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts_expected: Vec<String>,
    /// The broad steps, without implementation detail.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub execution_outline: Vec<String>,
    /// Limits the agent keeps to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
    /// Example situations.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Ids of other capabilities this one composes. Checked only syntactically: they are
    /// never resolved against the local catalog, since they may name remote capabilities.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
    /// Runtime-owned `sha256:<hex>` of the normalized record (see
    /// [`crate::canonical_digest`]).
    pub digest: String,
}

/// Where an agent's catalog was loaded from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CatalogSource {
    /// The agent has no catalog at all: none of `capabilities.toml`, `capabilities.json`,
    /// `capabilities/` exists. This is not an error; the capability list is empty.
    None,
    /// `capabilities.toml`.
    TomlFile(PathBuf),
    /// `capabilities.json`.
    JsonFile(PathBuf),
    /// The `capabilities/` directory (possibly holding no record files).
    Directory(PathBuf),
}

impl CatalogSource {
    /// The catalog file or directory, or `None` when there is no catalog.
    pub fn path(&self) -> Option<&Path> {
        match self {
            CatalogSource::None => None,
            CatalogSource::TomlFile(path)
            | CatalogSource::JsonFile(path)
            | CatalogSource::Directory(path) => Some(path),
        }
    }
}

/// One agent's loaded catalog: where it came from and its records in catalog order (authored
/// order for a single file, sorted path order for a directory).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentCatalog {
    /// The layout found; [`CatalogSource::None`] when the agent has no catalog, which is
    /// distinct from an empty `capabilities/` directory ([`CatalogSource::Directory`] with no
    /// records).
    pub source: CatalogSource,
    /// The normalized records with their digests.
    pub records: Vec<CapabilityRecord>,
}

impl AgentCatalog {
    /// Whether the agent has a catalog at all (possibly an empty one).
    pub fn is_present(&self) -> bool {
        self.source != CatalogSource::None
    }

    /// The capability ids in catalog order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.records.iter().map(|record| record.id.as_str())
    }

    /// The record with this (normalized) id.
    pub fn get(&self, id: &str) -> Option<&CapabilityRecord> {
        self.records.iter().find(|record| record.id == id)
    }
}
