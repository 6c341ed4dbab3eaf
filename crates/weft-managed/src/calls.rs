//! The table of one child run's in-flight calls: it routes replies and output chunks by
//! `call_id`, keeps the flow-control credit of streaming calls (protocol 2), and remembers
//! cancelled calls so that their late messages are discarded instead of being faults.
//!
//! The table only decides; [`crate::session::Session`] holds it under a lock and queues
//! the lines (`cancel`, `ack`) its decisions call for.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{Notify, mpsc};

use crate::error::ChildFailure;

/// Cancelled calls whose late messages are still tolerated (and discarded); older ones
/// are forgotten, and a message for a forgotten call is a fault like any unknown call id.
pub(crate) const MAX_REMEMBERED_CANCELS: usize = 10_000;

/// How a call ended from the child's side.
#[derive(Debug)]
pub(crate) enum Reply {
    /// A `result` line.
    Result(Value),
    /// An `error` line.
    Error(String),
    /// The child broke this call's flow-control or mode rules; it was sent a `cancel`.
    Violation(String),
    /// The run ended before the call was answered.
    Ended(ChildFailure),
}

/// What a call's task receives, in the order the child wrote it.
#[derive(Debug)]
pub(crate) enum Event {
    /// An output chunk (streaming calls with output only).
    Chunk(Value),
    /// The end of the call; nothing follows.
    Done(Reply),
}

/// The streaming shape of a call (`None` for unary calls).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Flow {
    /// Most chunks unacknowledged per direction.
    pub window: u32,
    /// The caller streams input chunks (client streaming, bidirectional).
    pub input: bool,
    /// The child streams output chunks (server streaming, bidirectional).
    pub output: bool,
}

/// What registering a call hands its task.
pub(crate) struct Registered {
    /// Chunks and the final reply.
    pub events: mpsc::UnboundedReceiver<Event>,
    /// Woken when the child acknowledges input chunks.
    pub credit: Arc<Notify>,
    /// Woken when the call ends abnormally (a violation, the end of the run): its
    /// [`Event::Done`] is then already queued, and chunks ahead of it need not be
    /// delivered first.
    pub abort: Arc<Notify>,
}

/// The result of asking for input credit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Credit {
    /// One chunk's credit was taken: write it.
    Granted,
    /// `window` chunks are unacknowledged: wait for an `ack`.
    Exhausted,
    /// The call is over (answered, cancelled or failed).
    Gone,
}

/// What the session must do after the table handled a child's message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Handled {
    /// Nothing more.
    Done,
    /// The call broke its rules and was failed: send the child a `cancel`.
    Violated,
}

struct Entry {
    events: mpsc::UnboundedSender<Event>,
    flow: Option<Flow>,
    /// Output chunks received and not yet acknowledged by the node.
    out_unacked: u32,
    /// Input chunks written and not yet acknowledged by the child.
    in_unacked: u32,
    credit: Arc<Notify>,
    abort: Arc<Notify>,
}

impl Entry {
    /// Ends the call abnormally: queues its final reply and wakes its task.
    fn abort(self, reply: Reply) {
        let _ = self.events.send(Event::Done(reply));
        self.abort.notify_one();
    }
}

/// In-flight and recently cancelled calls.
#[derive(Default)]
pub(crate) struct Calls {
    pending: HashMap<String, Entry>,
    cancelled: HashSet<String>,
    cancel_order: VecDeque<String>,
    closed: Option<ChildFailure>,
}

impl Calls {
    /// Registers an in-flight call; fails once the run has ended.
    pub fn register(
        &mut self,
        call_id: &str,
        flow: Option<Flow>,
    ) -> Result<Registered, ChildFailure> {
        if let Some(failure) = &self.closed {
            return Err(failure.clone());
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let credit = Arc::new(Notify::new());
        let abort = Arc::new(Notify::new());
        self.pending.insert(
            call_id.to_owned(),
            Entry {
                events: tx,
                flow,
                out_unacked: 0,
                in_unacked: 0,
                credit: Arc::clone(&credit),
                abort: Arc::clone(&abort),
            },
        );
        Ok(Registered {
            events: rx,
            credit,
            abort,
        })
    }

    /// Forgets a call whose line was never written.
    pub fn forget(&mut self, call_id: &str) {
        self.pending.remove(call_id);
    }

    /// Gives up on an unanswered call and remembers it as cancelled. True when it was in
    /// flight (a `cancel` line is due).
    pub fn cancel(&mut self, call_id: &str) -> bool {
        if self.pending.remove(call_id).is_none() {
            return false;
        }
        self.remember_cancel(call_id);
        true
    }

    fn remember_cancel(&mut self, call_id: &str) {
        self.cancelled.insert(call_id.to_owned());
        self.cancel_order.push_back(call_id.to_owned());
        while self.cancel_order.len() > MAX_REMEMBERED_CANCELS {
            if let Some(old) = self.cancel_order.pop_front() {
                self.cancelled.remove(&old);
            }
        }
    }

    /// Routes a final reply. A reply to a cancelled call is dropped (and the call
    /// forgotten); one for a call not in flight is a fault (`Err`).
    pub fn reply(&mut self, call_id: &str, reply: Reply) -> Result<(), String> {
        if let Some(entry) = self.pending.remove(call_id) {
            // The caller may have just gone away; then the reply is simply dropped.
            let _ = entry.events.send(Event::Done(reply));
            Ok(())
        } else if self.cancelled.remove(call_id) {
            Ok(())
        } else {
            Err(not_in_flight("reply", call_id))
        }
    }

    /// Routes an output chunk, charging it to the call's window.
    pub fn chunk(&mut self, call_id: &str, chunk: Value) -> Result<Handled, String> {
        let Some(entry) = self.pending.get_mut(call_id) else {
            return self.late("chunk", call_id);
        };
        let window = match entry.flow {
            Some(flow) if flow.output => flow.window,
            _ => {
                return Ok(self.violate(
                    call_id,
                    "sent an output chunk on a call whose mode has no output chunks".into(),
                ));
            }
        };
        if entry.out_unacked >= window {
            return Ok(self.violate(
                call_id,
                format!("sent more than its flow-control window of {window} unacknowledged chunks"),
            ));
        }
        entry.out_unacked += 1;
        let _ = entry.events.send(Event::Chunk(chunk));
        Ok(Handled::Done)
    }

    /// Returns `chunks` input credit to the call and wakes its input pump.
    pub fn ack(&mut self, call_id: &str, chunks: u32) -> Result<Handled, String> {
        let Some(entry) = self.pending.get_mut(call_id) else {
            return self.late("ack", call_id);
        };
        if !entry.flow.is_some_and(|f| f.input) {
            return Ok(self.violate(
                call_id,
                "acknowledged input chunks on a call whose mode has no input chunks".into(),
            ));
        }
        if chunks > entry.in_unacked {
            let unacked = entry.in_unacked;
            return Ok(self.violate(
                call_id,
                format!(
                    "acknowledged {chunks} input chunks, but only {unacked} were unacknowledged"
                ),
            ));
        }
        entry.in_unacked -= chunks;
        entry.credit.notify_one();
        Ok(Handled::Done)
    }

    /// The node consumed one output chunk of the call. True when the call is still in
    /// flight (an `ack` line is due).
    pub fn consumed(&mut self, call_id: &str) -> bool {
        match self.pending.get_mut(call_id) {
            Some(entry) => {
                entry.out_unacked = entry.out_unacked.saturating_sub(1);
                true
            }
            None => false,
        }
    }

    /// Takes one input chunk's credit.
    pub fn take_credit(&mut self, call_id: &str) -> Credit {
        match self.pending.get_mut(call_id) {
            None => Credit::Gone,
            Some(entry) => {
                let window = entry.flow.map_or(0, |f| f.window);
                if entry.in_unacked >= window {
                    Credit::Exhausted
                } else {
                    entry.in_unacked += 1;
                    Credit::Granted
                }
            }
        }
    }

    /// Whether the call is still in flight.
    pub fn in_flight(&self, call_id: &str) -> bool {
        self.pending.contains_key(call_id)
    }

    /// Ends the run for calls: every in-flight call ends with `failure`, and new
    /// registrations fail.
    pub fn close(&mut self, failure: &ChildFailure) {
        self.closed = Some(failure.clone());
        self.cancelled.clear();
        self.cancel_order.clear();
        for (_, entry) in self.pending.drain() {
            entry.abort(Reply::Ended(failure.clone()));
        }
    }

    /// Calls sent and not yet answered, cancelled or failed.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Fails a call that broke its rules: it ends with [`Reply::Violation`] and is
    /// remembered as cancelled, so what the child still sends for it is discarded.
    fn violate(&mut self, call_id: &str, reason: String) -> Handled {
        if let Some(entry) = self.pending.remove(call_id) {
            entry.abort(Reply::Violation(reason));
        }
        self.remember_cancel(call_id);
        Handled::Violated
    }

    /// A streaming message for a call not in flight: discarded for a cancelled call
    /// (which stays remembered until its reply), a fault otherwise.
    fn late(&self, what: &str, call_id: &str) -> Result<Handled, String> {
        if self.cancelled.contains(call_id) {
            Ok(Handled::Done)
        } else {
            Err(not_in_flight(what, call_id))
        }
    }
}

fn not_in_flight(what: &str, call_id: &str) -> String {
    format!("{what} for call id {call_id:?}, which is not in flight (unknown or already answered)")
}
