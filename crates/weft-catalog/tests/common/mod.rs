//! Shared helpers for the integration tests: real temporary agent directories.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use weft_catalog::{AgentCatalog, CatalogError, load_agent_catalog};

/// A temporary folder holding one agent directory named `agent`.
pub struct Agent {
    /// Keeps the folder alive; removed on drop.
    pub tmp: tempfile::TempDir,
    /// The agent directory.
    pub dir: PathBuf,
}

impl Agent {
    /// A fresh, empty agent directory.
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("agent");
        fs::create_dir(&dir).expect("create agent dir");
        Agent { tmp, dir }
    }

    /// `dir.join(rel)`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Writes `content` at `rel` (creating parent directories) and returns the path.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parents");
        }
        fs::write(&path, content).expect("write file");
        path
    }

    /// Creates the directory `rel` and returns its path.
    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(&path).expect("mkdir");
        path
    }

    /// Writes `content` outside the agent directory and returns that path.
    pub fn outside(&self, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.tmp.path().join(name);
        fs::write(&path, content).expect("write outside file");
        path
    }

    /// Creates a symlink at `rel` pointing to `target`.
    #[cfg(unix)]
    pub fn symlink(&self, target: &Path, rel: &str) -> PathBuf {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parents");
        }
        std::os::unix::fs::symlink(target, &path).expect("symlink");
        path
    }

    /// Creates a Unix socket (a special file) at `rel`; the listener must stay alive.
    #[cfg(unix)]
    pub fn socket(&self, rel: &str) -> std::os::unix::net::UnixListener {
        std::os::unix::net::UnixListener::bind(self.path(rel)).expect("bind socket")
    }

    /// Loads the catalog.
    pub fn load(&self) -> Result<AgentCatalog, CatalogError> {
        load_agent_catalog(&self.dir)
    }

    /// Loads the catalog, which must succeed.
    pub fn ok(&self) -> AgentCatalog {
        match self.load() {
            Ok(catalog) => catalog,
            Err(error) => panic!("expected a catalog, got {error}"),
        }
    }

    /// Loads the catalog, which must fail.
    pub fn err(&self) -> CatalogError {
        match self.load() {
            Ok(catalog) => panic!("expected an error, got {catalog:?}"),
            Err(error) => error,
        }
    }
}

/// A minimal valid TOML record body (no table header).
pub fn toml_record(id: &str) -> String {
    format!("id = \"{id}\"\nsummary = \"Summary of {id}.\"\noutcome = \"Outcome of {id}.\"\n")
}

/// A minimal valid JSON record.
pub fn json_record(id: &str) -> String {
    format!(r#"{{"id": "{id}", "summary": "Summary of {id}.", "outcome": "Outcome of {id}."}}"#)
}

/// `{:?}` of a path, as messages quote paths.
pub fn q(path: &Path) -> String {
    format!("{path:?}")
}
