//! One handshaken child run as calls see it: its descriptors, the outgoing line queue and
//! the table of in-flight calls that multiplexes replies by `call_id`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use weft_contract::{Descriptor, QualifiedId};

use crate::child::Outgoing;
use crate::error::ChildFailure;
use crate::protocol;

/// Cancelled calls whose late reply is still tolerated (and discarded); older ones are
/// forgotten, and a reply to a forgotten call is a fault like any unknown call id.
pub(crate) const MAX_REMEMBERED_CANCELS: usize = 10_000;

/// How a call ended from the child's side.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A `result` line.
    Result(Value),
    /// An `error` line.
    Error(String),
    /// The run ended before the call was answered.
    Ended(ChildFailure),
}

#[derive(Default)]
struct Calls {
    pending: HashMap<String, oneshot::Sender<Reply>>,
    cancelled: HashSet<String>,
    cancel_order: VecDeque<String>,
    closed: Option<ChildFailure>,
}

/// A child run that completed its handshake.
pub(crate) struct Session {
    /// Counts handshakes over the provider's lifetime (1 for the first run).
    pub generation: u64,
    /// The child's process id.
    pub pid: Option<u32>,
    /// When the handshake completed.
    pub started: Instant,
    descriptors: HashMap<QualifiedId, Descriptor>,
    out: mpsc::UnboundedSender<Outgoing>,
    calls: Mutex<Calls>,
    last_pong: Mutex<Instant>,
}

impl Session {
    /// A session serving `descriptors`, writing through `out`.
    pub fn new(
        generation: u64,
        pid: Option<u32>,
        descriptors: &[Descriptor],
        out: mpsc::UnboundedSender<Outgoing>,
    ) -> Self {
        let now = Instant::now();
        Self {
            generation,
            pid,
            started: now,
            descriptors: descriptors
                .iter()
                .map(|d| (d.qualified_id(), d.clone()))
                .collect(),
            out,
            calls: Mutex::new(Calls::default()),
            last_pong: Mutex::new(now),
        }
    }

    fn calls(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The descriptor this run serves for `capability`.
    pub fn descriptor(&self, capability: &QualifiedId) -> Option<&Descriptor> {
        self.descriptors.get(capability)
    }

    /// Queues a line for stdin; false once the writer is gone.
    pub fn send(&self, line: String) -> bool {
        self.out.send(Outgoing::Line(line)).is_ok()
    }

    /// Asks the writer to close stdin after the lines already queued.
    pub fn close_stdin(&self) {
        let _ = self.out.send(Outgoing::Close);
    }

    /// Registers an in-flight call; fails once the run has ended.
    pub fn register(&self, call_id: &str) -> Result<oneshot::Receiver<Reply>, ChildFailure> {
        let mut calls = self.calls();
        if let Some(failure) = &calls.closed {
            return Err(failure.clone());
        }
        let (tx, rx) = oneshot::channel();
        calls.pending.insert(call_id.to_owned(), tx);
        Ok(rx)
    }

    /// Forgets a call whose line was never written.
    pub fn forget(&self, call_id: &str) {
        self.calls().pending.remove(call_id);
    }

    /// Gives up on an unanswered call: it is remembered as cancelled (so a late reply is
    /// discarded, not a fault) and a `cancel` line is queued. Does nothing when the call
    /// was already answered or the run has ended.
    pub fn cancel(&self, call_id: &str) {
        {
            let mut calls = self.calls();
            if calls.pending.remove(call_id).is_none() {
                return;
            }
            calls.cancelled.insert(call_id.to_owned());
            calls.cancel_order.push_back(call_id.to_owned());
            while calls.cancel_order.len() > MAX_REMEMBERED_CANCELS {
                if let Some(old) = calls.cancel_order.pop_front() {
                    calls.cancelled.remove(&old);
                }
            }
        }
        self.send(protocol::encode_cancel(call_id));
    }

    /// Routes a reply to its call. A reply to a cancelled call is dropped; a reply to a
    /// call id that is not in flight (never issued, or already answered) is a fault.
    pub fn deliver(&self, call_id: &str, reply: Reply) -> Result<(), String> {
        let mut calls = self.calls();
        if let Some(waiter) = calls.pending.remove(call_id) {
            // The caller may have just gone away; then the reply is simply dropped.
            let _ = waiter.send(reply);
            Ok(())
        } else if calls.cancelled.remove(call_id) {
            Ok(())
        } else {
            Err(format!(
                "reply for call id {call_id:?}, which is not in flight (unknown or already answered)"
            ))
        }
    }

    /// Ends the run for calls: every in-flight call is answered with `failure`, and new
    /// registrations fail.
    pub fn close(&self, failure: &ChildFailure) {
        let pending: Vec<_> = {
            let mut calls = self.calls();
            calls.closed = Some(failure.clone());
            calls.cancelled.clear();
            calls.cancel_order.clear();
            calls.pending.drain().map(|(_, tx)| tx).collect()
        };
        for waiter in pending {
            let _ = waiter.send(Reply::Ended(failure.clone()));
        }
    }

    /// Calls sent and not yet answered or cancelled.
    pub fn in_flight(&self) -> usize {
        self.calls().pending.len()
    }

    /// Records a pong.
    pub fn pong(&self) {
        *self.last_pong.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// Time since the last pong (or the handshake).
    pub fn pong_age(&self) -> Duration {
        self.last_pong
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }
}

/// Cancels its call when dropped while still armed: the caller timed out or went away.
pub(crate) struct CallGuard<'a> {
    session: &'a Session,
    call_id: &'a str,
    armed: bool,
}

impl<'a> CallGuard<'a> {
    /// Arms a guard for a registered call.
    pub fn new(session: &'a Session, call_id: &'a str) -> Self {
        Self {
            session,
            call_id,
            armed: true,
        }
    }

    /// The call is over; nothing to cancel.
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.session.cancel(self.call_id);
        }
    }
}
