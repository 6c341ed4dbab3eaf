//! The counters' storage (atomics, and small code maps touched only on failure paths) and
//! the shape they are reported in.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use serde::Serialize;

/// A count per failure code (failure paths only).
#[derive(Default)]
pub(super) struct CodeCounts(Mutex<BTreeMap<&'static str, u64>>);

impl CodeCounts {
    pub(super) fn add(&self, code: &'static str) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *map.entry(code).or_default() += 1;
    }

    pub(super) fn snapshot(&self) -> BTreeMap<String, u64> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }
}

/// Count, sum and max of durations, in microseconds.
#[derive(Default)]
pub(super) struct Timing {
    count: AtomicU64,
    sum_micros: AtomicU64,
    max_micros: AtomicU64,
}

impl Timing {
    pub(super) fn record(&self, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Relaxed);
        self.max_micros.fetch_max(micros, Relaxed);
        self.count.fetch_add(1, Relaxed);
    }

    fn snapshot(&self) -> TimingSnapshot {
        let seconds = |a: &AtomicU64| a.load(Relaxed) as f64 / 1e6;
        TimingSnapshot {
            count: self.count.load(Relaxed),
            sum_seconds: seconds(&self.sum_micros),
            max_seconds: seconds(&self.max_micros),
        }
    }
}

/// Timing statistics of finished work (microsecond resolution).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimingSnapshot {
    /// How many samples.
    pub count: u64,
    /// Their sum, in seconds.
    pub sum_seconds: f64,
    /// The largest, in seconds.
    pub max_seconds: f64,
}

/// One capability's counters.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) active_calls: AtomicU64,
    pub(super) admitted: AtomicU64,
    pub(super) rejected: CodeCounts,
    pub(super) completed: AtomicU64,
    pub(super) failed: CodeCounts,
    pub(super) cancelled: AtomicU64,
    pub(super) call_duration: Timing,
    pub(super) active_streams: AtomicU64,
    pub(super) admitted_streams: AtomicU64,
    pub(super) rejected_streams: CodeCounts,
    pub(super) completed_streams: AtomicU64,
    pub(super) failed_streams: CodeCounts,
    pub(super) cancelled_streams: AtomicU64,
    pub(super) missing_terminals: AtomicU64,
    pub(super) frames_out: AtomicU64,
    pub(super) bytes_out: AtomicU64,
    pub(super) frames_in: AtomicU64,
    pub(super) bytes_in: AtomicU64,
    pub(super) max_queue_depth: AtomicU64,
    pub(super) first_output: Timing,
    pub(super) stream_duration: Timing,
}

/// One capability's counters, as reported. Codes that have their own field
/// (`rejected_overloaded`, `timeouts`, `overloaded_streams`) are also in the code maps, so
/// the maps always add up: `admitted == active_calls + completed + Σ failed + cancelled`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CapabilitySnapshot {
    /// Unary calls admitted and not yet finished (gauge).
    pub active_calls: u64,
    /// Unary calls that took an admission slot.
    pub admitted: u64,
    /// Unary calls refused before admission, by code (`overloaded`, `revision_mismatch`, …).
    pub rejected: BTreeMap<String, u64>,
    /// `rejected["overloaded"]`.
    pub rejected_overloaded: u64,
    /// Admitted unary calls that returned a validated result.
    pub completed: u64,
    /// Admitted unary calls that failed, by code (`invalid_payload`, `timeout`, …).
    pub failed: BTreeMap<String, u64>,
    /// `failed["timeout"]`.
    pub timeouts: u64,
    /// Admitted unary calls abandoned by their caller before they finished.
    pub cancelled: u64,
    /// Arrival to outcome of finished admitted unary calls.
    pub call_duration: TimingSnapshot,
    /// Streams admitted and not yet ended (gauge).
    pub active_streams: u64,
    /// Streams that took a stream slot.
    pub admitted_streams: u64,
    /// Stream opens refused before admission, by code.
    pub rejected_streams: BTreeMap<String, u64>,
    /// `rejected_streams["overloaded"]`.
    pub overloaded_streams: u64,
    /// Streams that ended `completed`.
    pub completed_streams: u64,
    /// Streams that ended `failed`, by code.
    pub failed_streams: BTreeMap<String, u64>,
    /// Streams that ended `cancelled` (including callers that went away).
    pub cancelled_streams: u64,
    /// Streams whose work ended without a recorded terminal; should stay 0.
    pub missing_terminals: u64,
    /// Provider → caller chunks delivered.
    pub frames_out: u64,
    /// Their payload bytes (compact JSON).
    pub bytes_out: u64,
    /// Caller → provider chunks accepted.
    pub frames_in: u64,
    /// Their payload bytes (compact JSON).
    pub bytes_in: u64,
    /// The deepest frame queue observed.
    pub max_queue_depth: u64,
    /// Open to first chunk delivered, for streams that delivered one.
    pub first_output: TimingSnapshot,
    /// Open to terminal of ended streams.
    pub stream_duration: TimingSnapshot,
}

impl Counters {
    pub(super) fn snapshot(&self) -> CapabilitySnapshot {
        let n = |a: &AtomicU64| a.load(Relaxed);
        let (rejected, failed) = (self.rejected.snapshot(), self.failed.snapshot());
        let rejected_streams = self.rejected_streams.snapshot();
        let code = |map: &BTreeMap<String, u64>, code: &str| map.get(code).copied().unwrap_or(0);
        CapabilitySnapshot {
            active_calls: n(&self.active_calls),
            admitted: n(&self.admitted),
            rejected_overloaded: code(&rejected, "overloaded"),
            rejected,
            completed: n(&self.completed),
            timeouts: code(&failed, "timeout"),
            failed,
            cancelled: n(&self.cancelled),
            call_duration: self.call_duration.snapshot(),
            active_streams: n(&self.active_streams),
            admitted_streams: n(&self.admitted_streams),
            overloaded_streams: code(&rejected_streams, "overloaded"),
            rejected_streams,
            completed_streams: n(&self.completed_streams),
            failed_streams: self.failed_streams.snapshot(),
            cancelled_streams: n(&self.cancelled_streams),
            missing_terminals: n(&self.missing_terminals),
            frames_out: n(&self.frames_out),
            bytes_out: n(&self.bytes_out),
            frames_in: n(&self.frames_in),
            bytes_in: n(&self.bytes_in),
            max_queue_depth: n(&self.max_queue_depth),
            first_output: self.first_output.snapshot(),
            stream_duration: self.stream_duration.snapshot(),
        }
    }
}

/// The configured limits, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LimitsSnapshot {
    /// Concurrent unary calls admitted.
    pub max_concurrent_calls: usize,
    /// Concurrent streams admitted.
    pub max_concurrent_streams: usize,
    /// Frames buffered per stream and direction.
    pub stream_queue: usize,
    /// Largest payload, result or chunk, in bytes.
    pub max_payload_bytes: usize,
    /// Deadline when the caller gives none, in seconds.
    pub default_timeout_seconds: f64,
    /// Largest deadline a caller may ask for, in seconds.
    pub max_timeout_seconds: f64,
}

/// Everything [`super::Diagnostics`] knows, node-wide.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeSnapshot {
    /// This node.
    pub node_id: String,
    /// Its limits.
    pub limits: LimitsSnapshot,
    /// Unary calls admitted and not yet finished, over all capabilities.
    pub active_calls: u64,
    /// Streams admitted and not yet ended, over all capabilities.
    pub active_streams: u64,
    /// Unary calls refused before they named a capability served here, by code.
    pub unresolved_calls: BTreeMap<String, u64>,
    /// Stream opens refused before they named a capability served here, by code.
    pub unresolved_streams: BTreeMap<String, u64>,
    /// Per `id@version`, in order.
    pub capabilities: BTreeMap<String, CapabilitySnapshot>,
}
