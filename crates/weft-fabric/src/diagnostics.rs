//! Node diagnostics: counters per `id@version` for unary calls and streams, kept for as long
//! as the node runs and never reset.
//!
//! Each capability gets one [`Arc`]ed block of atomics, found through a read-mostly map (the
//! write lock is taken once per `id@version`, the first time it sees traffic). Failure codes
//! are counted in small maps keyed by `&'static str`, so they are bounded by the codes the
//! program knows and are only locked on failure paths. Timing is kept as count, sum and max:
//! no call ids, payloads or per-call samples are retained.
//!
//! Admitted work is followed by a probe ([`CallProbe`], [`StreamProbe`]) that holds the
//! capability's counters, so frame counting never touches the map. A probe dropped without
//! its outcome still balances the gauges: a unary call counts as `cancelled` (the caller went
//! away), a stream as a missing terminal (which should never happen).
//!
//! Every counter is exact on its own; a snapshot reads them one after another, so while
//! calls are in flight two counters of one snapshot may disagree by the calls that moved
//! between the reads.

use std::collections::BTreeMap;

use foldhash::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use weft_contract::QualifiedId;
use weft_registry::{Registry, TenantId};

use crate::error::CallError;
use crate::fabric::{CallRequest, Fabric, FabricOptions};

mod counters;

pub use counters::{CapabilitySnapshot, LimitsSnapshot, NodeSnapshot, TimingSnapshot};
use counters::{CodeCounts, Counters};

/// How a stream ended, for [`StreamProbe::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The `completed` terminal.
    Completed,
    /// The `failed` terminal, with its code.
    Failed(&'static str),
    /// The `cancelled` terminal, or the caller went away before one could be delivered.
    Cancelled,
}

/// The node's counters. Obtain it from [`Fabric::diagnostics`].
pub struct Diagnostics {
    node_id: String,
    limits: LimitsSnapshot,
    capabilities: RwLock<HashMap<QualifiedId, Arc<Counters>>>,
    unresolved_calls: CodeCounts,
    unresolved_streams: CodeCounts,
}

impl Diagnostics {
    /// Empty counters for a node with `options`.
    pub fn new(options: &FabricOptions) -> Self {
        Self {
            node_id: options.node_id.to_string(),
            limits: LimitsSnapshot {
                max_concurrent_calls: options.max_concurrent_calls,
                max_concurrent_streams: options.max_concurrent_streams,
                stream_queue: options.stream_queue,
                max_payload_bytes: options.max_payload_bytes,
                default_timeout_seconds: options.default_timeout.as_secs_f64(),
                max_timeout_seconds: options.max_timeout.as_secs_f64(),
            },
            capabilities: RwLock::new(HashMap::default()),
            unresolved_calls: CodeCounts::default(),
            unresolved_streams: CodeCounts::default(),
        }
    }

    fn counters(&self, capability: &QualifiedId) -> Arc<Counters> {
        let found = self
            .capabilities
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(capability)
            .cloned();
        found.unwrap_or_else(|| {
            let mut map = self.capabilities.write().unwrap_or_else(|p| p.into_inner());
            map.entry(capability.clone()).or_default().clone()
        })
    }

    /// A unary call refused before admission with `code`: per capability when it names one
    /// served here, else node-wide (`unresolved_calls`).
    pub fn call_rejected(&self, capability: Option<&QualifiedId>, code: &'static str) {
        match capability {
            Some(id) => self.counters(id).rejected.add(code),
            None => self.unresolved_calls.add(code),
        }
    }

    /// A unary call took an admission slot; `arrived` is when it reached the node. Finish
    /// the probe with the outcome; dropping it unfinished counts the call as `cancelled`.
    pub fn call_admitted(&self, capability: &QualifiedId, arrived: Instant) -> CallProbe {
        let counters = self.counters(capability);
        counters.active_calls.fetch_add(1, Relaxed);
        counters.admitted.fetch_add(1, Relaxed);
        CallProbe {
            counters,
            arrived,
            finished: false,
        }
    }

    /// A stream open refused before admission with `code` (see [`Self::call_rejected`]).
    pub fn stream_rejected(&self, capability: Option<&QualifiedId>, code: &'static str) {
        match capability {
            Some(id) => self.counters(id).rejected_streams.add(code),
            None => self.unresolved_streams.add(code),
        }
    }

    /// A stream took a stream slot; `opened` is when its request reached the node. The probe
    /// counts its frames and must be finished with its terminal; dropping it unfinished
    /// counts a missing terminal.
    pub fn stream_admitted(&self, capability: &QualifiedId, opened: Instant) -> StreamProbe {
        let counters = self.counters(capability);
        counters.active_streams.fetch_add(1, Relaxed);
        counters.admitted_streams.fetch_add(1, Relaxed);
        StreamProbe {
            counters,
            opened,
            first_output: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        }
    }

    /// Every counter, now.
    pub fn snapshot(&self) -> NodeSnapshot {
        let capabilities: BTreeMap<String, CapabilitySnapshot> = {
            let map = self.capabilities.read().unwrap_or_else(|p| p.into_inner());
            map.iter()
                .map(|(id, c)| (id.to_string(), c.snapshot()))
                .collect()
        };
        NodeSnapshot {
            node_id: self.node_id.clone(),
            limits: self.limits.clone(),
            active_calls: capabilities.values().map(|c| c.active_calls).sum(),
            active_streams: capabilities.values().map(|c| c.active_streams).sum(),
            unresolved_calls: self.unresolved_calls.snapshot(),
            unresolved_streams: self.unresolved_streams.snapshot(),
            capabilities,
        }
    }
}

/// An admitted unary call, until its outcome is known.
pub struct CallProbe {
    counters: Arc<Counters>,
    arrived: Instant,
    finished: bool,
}

impl CallProbe {
    /// Records the outcome (`Err` carries the failure code) and the duration since arrival.
    pub fn finish(mut self, outcome: Result<(), &'static str>) {
        match outcome {
            Ok(()) => {
                self.counters.completed.fetch_add(1, Relaxed);
            }
            Err(code) => self.counters.failed.add(code),
        }
        self.counters.call_duration.record(self.arrived.elapsed());
        self.finished = true;
    }
}

impl Drop for CallProbe {
    fn drop(&mut self) {
        if !self.finished {
            self.counters.cancelled.fetch_add(1, Relaxed);
        }
        self.counters.active_calls.fetch_sub(1, Relaxed);
    }
}

/// An admitted stream, until its terminal. `Send + Sync`: share it (in an `Arc`) between
/// the tasks that move its frames.
pub struct StreamProbe {
    counters: Arc<Counters>,
    opened: Instant,
    first_output: AtomicBool,
    finished: AtomicBool,
}

impl StreamProbe {
    /// A provider → caller chunk of `bytes` was handed to the caller's queue. The first one
    /// also records the time to first output.
    pub fn frame_out(&self, bytes: usize) {
        self.counters.frames_out.fetch_add(1, Relaxed);
        self.counters.bytes_out.fetch_add(bytes as u64, Relaxed);
        if !self.first_output.swap(true, Relaxed) {
            self.counters.first_output.record(self.opened.elapsed());
        }
    }

    /// A caller → provider chunk of `bytes` was accepted.
    pub fn frame_in(&self, bytes: usize) {
        self.counters.frames_in.fetch_add(1, Relaxed);
        self.counters.bytes_in.fetch_add(bytes as u64, Relaxed);
    }

    /// A frame queue of this stream holds `depth` frames; the deepest is kept.
    pub fn queue_depth(&self, depth: usize) {
        self.counters
            .max_queue_depth
            .fetch_max(depth as u64, Relaxed);
    }

    /// Records the terminal and the duration since open, and releases the stream from the
    /// gauge. Only the first call counts; it returns whether this one did.
    pub fn finish(&self, end: StreamEnd) -> bool {
        if self.finished.swap(true, Relaxed) {
            return false;
        }
        match end {
            StreamEnd::Completed => {
                self.counters.completed_streams.fetch_add(1, Relaxed);
            }
            StreamEnd::Cancelled => {
                self.counters.cancelled_streams.fetch_add(1, Relaxed);
            }
            StreamEnd::Failed(code) => self.counters.failed_streams.add(code),
        }
        self.counters.stream_duration.record(self.opened.elapsed());
        self.counters.active_streams.fetch_sub(1, Relaxed);
        true
    }
}

impl Drop for StreamProbe {
    fn drop(&mut self) {
        if !self.finished.swap(true, Relaxed) {
            self.counters.missing_terminals.fetch_add(1, Relaxed);
            self.counters.active_streams.fetch_sub(1, Relaxed);
        }
    }
}

impl Fabric {
    /// The served `id@version` a request names for `tenant`, if any: where a refusal is
    /// counted. (Refusals of ids that are not served stay node-wide, so callers cannot grow
    /// the per-capability map with made-up names.)
    fn served(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: &CallRequest,
    ) -> Option<QualifiedId> {
        let detail = registry
            .capability_version(tenant, &request.capability_id, &request.version)
            .ok()?;
        (!detail.providers.is_empty()).then(|| detail.descriptor.qualified_id())
    }

    /// Counts a unary call refused before admission and hands the error back (for
    /// `map_err`).
    pub(crate) fn reject_call(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: &CallRequest,
        error: CallError,
    ) -> CallError {
        let served = self.served(registry, tenant, request);
        self.diagnostics()
            .call_rejected(served.as_ref(), error.code());
        error
    }

    /// Counts a stream open refused before admission and hands the error back (for
    /// `map_err`).
    pub(crate) fn reject_stream(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: &CallRequest,
        error: CallError,
    ) -> CallError {
        let served = self.served(registry, tenant, request);
        self.diagnostics()
            .stream_rejected(served.as_ref(), error.code());
        error
    }
}
