//! State shared by the supervisor and the provider handle: the current session, the
//! published status and descriptor set, the shutdown flag.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use tokio::sync::watch;
use weft_contract::Descriptor;

use crate::config::ManagedConfig;
use crate::error::ChildFailure;
use crate::session::Session;

/// Where a managed child is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildState {
    /// Spawning the command or waiting for its handshake.
    Starting,
    /// Handshake done; taking calls (subject to ping freshness).
    Ready,
    /// The last run ended; a restart is pending (backoff).
    Down,
    /// Stopped for good: shut down, or the first run failed under
    /// [`crate::ManagedProvider::start`].
    Stopped,
}

/// A snapshot of a managed child's health, for readiness waits and diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedStatus {
    /// The life-cycle state.
    pub state: ChildState,
    /// Completed handshakes so far (the current run's number while ready).
    pub generation: u64,
    /// Runs started after the first one.
    pub restarts: u64,
    /// The running child's process id.
    pub pid: Option<u32>,
    /// Why the most recent run ended, if one did.
    pub last_failure: Option<ChildFailure>,
}

/// Everything the supervisor task and the provider handle share.
pub(crate) struct Shared {
    pub config: ManagedConfig,
    pub session: RwLock<Option<Arc<Session>>>,
    pub status: watch::Sender<ManagedStatus>,
    pub descriptors: watch::Sender<Vec<Descriptor>>,
    pub shutdown: watch::Sender<bool>,
    next_call: AtomicU64,
}

impl Shared {
    /// Fresh state: no session, no descriptors, `Starting`.
    pub fn new(config: ManagedConfig) -> Self {
        let status = ManagedStatus {
            state: ChildState::Starting,
            generation: 0,
            restarts: 0,
            pid: None,
            last_failure: None,
        };
        Self {
            config,
            session: RwLock::new(None),
            status: watch::Sender::new(status),
            descriptors: watch::Sender::new(Vec::new()),
            shutdown: watch::Sender::new(false),
            next_call: AtomicU64::new(1),
        }
    }

    /// The session taking calls, if any.
    pub fn session(&self) -> Option<Arc<Session>> {
        self.session
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A call id unique over the provider's lifetime (across restarts).
    pub fn mint_call_id(&self) -> String {
        self.next_call.fetch_add(1, Ordering::Relaxed).to_string()
    }

    /// Whether shutdown was requested.
    pub fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Makes `session` the one taking calls, publishes its descriptors when the set
    /// changed, and reports `Ready`.
    pub fn install(&self, session: Arc<Session>, descriptors: Vec<Descriptor>) {
        let (generation, pid) = (session.generation, session.pid);
        *self.session.write().unwrap_or_else(|p| p.into_inner()) = Some(session);
        self.descriptors.send_if_modified(|current| {
            if fingerprint(current) == fingerprint(&descriptors) {
                false
            } else {
                *current = descriptors;
                true
            }
        });
        self.status.send_modify(|s| {
            s.state = ChildState::Ready;
            s.generation = generation;
            s.pid = pid;
        });
    }

    /// Stops routing calls to the session of `generation` and reports `Down`.
    pub fn uninstall(&self, generation: u64) {
        let mut slot = self.session.write().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_some_and(|s| s.generation == generation) {
            *slot = None;
        }
        drop(slot);
        self.status.send_modify(|s| {
            if s.state == ChildState::Ready {
                s.state = ChildState::Down;
            }
        });
    }

    /// Updates the status.
    pub fn set_status(&self, update: impl FnOnce(&mut ManagedStatus)) {
        self.status.send_modify(update);
    }
}

/// The identity of a descriptor set, independent of order.
fn fingerprint(descriptors: &[Descriptor]) -> Vec<(String, String)> {
    let mut ids: Vec<(String, String)> = descriptors
        .iter()
        .map(|d| (d.qualified_id().to_string(), d.revision().to_string()))
        .collect();
    ids.sort();
    ids
}
