//! The state every handler shares.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use weft_contract::Limits;
use weft_registry::Registry;

use crate::agents::AgentsSnapshot;
use crate::config::ServerConfig;
use crate::features::FeatureCatalog;

/// Cheap to clone: everything is behind one `Arc`.
#[derive(Clone)]
pub struct AppState(pub Arc<Inner>);

/// What [`AppState`] holds.
pub struct Inner {
    /// The registry.
    pub registry: Registry,
    /// The call path and the providers attached to this node.
    pub fabric: weft_fabric::Fabric,
    /// Leases of remote HTTP providers.
    pub leases: crate::remote::Leases,
    /// The feature catalog (fixed at boot).
    pub features: FeatureCatalog,
    /// The agent catalogs, swapped whole on reload.
    pub agents: RwLock<Arc<AgentsSnapshot>>,
    /// Idempotency keys whose first request is still running.
    pub in_flight: Mutex<HashSet<String>>,
    /// The configuration.
    pub config: ServerConfig,
    /// Descriptor limits.
    pub limits: Limits,
    /// Set when shutdown begins; `/readyz` then answers 503.
    pub shutting_down: AtomicBool,
    /// Flips to `true` when shutdown begins, so long-lived streams end and the graceful
    /// drain can finish.
    pub shutdown: tokio::sync::watch::Sender<bool>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// The current agents snapshot.
    pub fn agents(&self) -> Arc<AgentsSnapshot> {
        self.agents
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
