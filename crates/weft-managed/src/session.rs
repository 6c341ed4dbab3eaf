//! One handshaken child run as calls see it: its protocol version and descriptors, the
//! outgoing line queue, and the table of in-flight calls ([`crate::calls`]) that
//! multiplexes replies and stream chunks by `call_id`.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use weft_contract::{Descriptor, QualifiedId};

use crate::calls::{Calls, Credit, Flow, Handled, Registered, Reply};
use crate::child::Outgoing;
use crate::error::ChildFailure;
use crate::protocol;

/// A child run that completed its handshake.
pub(crate) struct Session {
    /// Counts handshakes over the provider's lifetime (1 for the first run).
    pub generation: u64,
    /// The child's process id.
    pub pid: Option<u32>,
    /// The protocol version the child chose.
    pub protocol: u32,
    /// When the handshake completed.
    pub started: Instant,
    descriptors: HashMap<QualifiedId, Descriptor>,
    out: mpsc::UnboundedSender<Outgoing>,
    calls: Mutex<Calls>,
    last_pong: Mutex<Instant>,
}

impl Session {
    /// A session serving `descriptors` in `protocol`, writing through `out`.
    pub fn new(
        generation: u64,
        pid: Option<u32>,
        protocol: u32,
        descriptors: &[Descriptor],
        out: mpsc::UnboundedSender<Outgoing>,
    ) -> Self {
        let now = Instant::now();
        Self {
            generation,
            pid,
            protocol,
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

    /// Registers an in-flight call (`flow` for a streaming one); fails once the run has
    /// ended.
    pub fn register(&self, call_id: &str, flow: Option<Flow>) -> Result<Registered, ChildFailure> {
        self.calls().register(call_id, flow)
    }

    /// Forgets a call whose line was never written.
    pub fn forget(&self, call_id: &str) {
        self.calls().forget(call_id);
    }

    /// Gives up on an unanswered call: it is remembered as cancelled (so late messages
    /// are discarded, not faults) and a `cancel` line is queued. Does nothing when the
    /// call was already answered or the run has ended.
    pub fn cancel(&self, call_id: &str) {
        if self.calls().cancel(call_id) {
            self.send(protocol::encode_cancel(call_id));
        }
    }

    /// Routes a reply to its call. A reply to a cancelled call is dropped; a reply to a
    /// call id that is not in flight (never issued, or already answered) is a fault.
    pub fn deliver(&self, call_id: &str, reply: Reply) -> Result<(), String> {
        self.calls().reply(call_id, reply)
    }

    /// Routes an output chunk (protocol 2). A chunk beyond the call's window, or on a
    /// call without output chunks, fails that call and cancels it; one for a call not in
    /// flight is a fault unless the call was cancelled.
    pub fn chunk(&self, call_id: &str, chunk: Value) -> Result<(), String> {
        let handled = self.calls().chunk(call_id, chunk)?;
        self.after(call_id, handled);
        Ok(())
    }

    /// Takes the child's acknowledgement of input chunks (protocol 2), with the same
    /// rules as [`Session::chunk`].
    pub fn ack(&self, call_id: &str, chunks: u32) -> Result<(), String> {
        let handled = self.calls().ack(call_id, chunks)?;
        self.after(call_id, handled);
        Ok(())
    }

    fn after(&self, call_id: &str, handled: Handled) {
        if handled == Handled::Violated {
            self.send(protocol::encode_cancel(call_id));
        }
    }

    /// The node consumed one output chunk of the call: its credit goes back to the child
    /// with an `ack` (unless the call is over).
    pub fn consumed(&self, call_id: &str) {
        if self.calls().consumed(call_id) {
            self.send(protocol::encode_ack(call_id, 1));
        }
    }

    /// Writes an input chunk line if the call's window allows it. On
    /// [`Credit::Exhausted`] nothing is written: wait for the call's credit notification
    /// and try again.
    pub fn send_input(&self, call_id: &str, line: &str) -> Credit {
        let credit = self.calls().take_credit(call_id);
        if credit == Credit::Granted && !self.send(line.to_owned()) {
            return Credit::Gone;
        }
        credit
    }

    /// Writes `end` (the caller half-closed) unless the call is over.
    pub fn send_end(&self, call_id: &str) {
        if self.calls().in_flight(call_id) {
            self.send(protocol::encode_end(call_id));
        }
    }

    /// Ends the run for calls: every in-flight call is answered with `failure`, and new
    /// registrations fail.
    pub fn close(&self, failure: &ChildFailure) {
        self.calls().close(failure);
    }

    /// Calls sent and not yet answered, cancelled or failed.
    pub fn in_flight(&self) -> usize {
        self.calls().len()
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

/// Cancels its call when dropped: when the caller timed out or went away, or the node
/// gave up on the call, the child is sent a `cancel`. Harmless once the call is over
/// ([`Session::cancel`] ignores calls not in flight).
pub(crate) struct CallGuard<'a> {
    session: &'a Session,
    call_id: &'a str,
}

impl<'a> CallGuard<'a> {
    /// A guard for a registered call.
    pub fn new(session: &'a Session, call_id: &'a str) -> Self {
        Self { session, call_id }
    }
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.session.cancel(self.call_id);
    }
}
