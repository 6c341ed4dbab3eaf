//! Unary calls to remote providers over a few long-lived WebSockets per provider address
//! (`ws://host:port/weft/v1/calls`), many calls in flight on each, told apart by `ref`
//! (`docs/remote-providers.md` §3).
//!
//! One HTTP exchange per call costs both processes a request parse, a response parse and
//! their headers; on a multiplexed connection a call is one small message each way, and
//! calls that leave or finish together share a write. Where the time goes:
//! - the calling task writes its own call line when nobody else is writing, so a call at one
//!   caller costs no wake-up beyond the socket's; while one task writes, others only queue
//!   their lines, and the writing task sends everything queued before it lets go;
//! - one reader task per connection hands each answer to its call through a oneshot.
//!
//! Invariants:
//! - Every call registered on a connection gets exactly one outcome: its answer, or the
//!   reason the connection ended (registration after the end is refused under the same
//!   lock that ends it, so no call waits on a dead connection).
//! - A call line is sent at most once: a call whose connection breaks is never resent.
//! - A queued message is never lost to a cancelled writer: a writer dropped mid-write hands
//!   the rest to a task of its own.
//! - A call dropped before its answer (deadline, caller gone) sends `cancel`, and a late
//!   answer to it is ignored.

use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{Sink, StreamExt};
use serde_json::Value;
use tokio::sync::{OwnedMutexGuard, oneshot};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use weft_provider::wire::{self, MultiplexedAnswer};
use weft_provider::{CallContext, ProviderError};

use crate::remote_stream::{DialError, Socket, dial};

/// How long the node tries to deliver its close frame before giving up on it.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Why a multiplexed call did not produce an outcome of its own.
#[derive(Debug)]
pub enum MuxError {
    /// The provider answered the upgrade with this HTTP status: it does not serve
    /// multiplexed calls, and the call (never sent) should go as a plain `POST`.
    NotServed(u16),
    /// The call's outcome is this failure.
    Call(ProviderError),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The multiplexed connections to one provider address.
pub struct MuxHost {
    authority: String,
    message_limit: usize,
    slots: Box<[Slot]>,
    next: AtomicUsize,
}

#[derive(Default)]
struct Slot {
    current: Mutex<Option<Arc<Connection>>>,
    /// Held while this slot dials, so a burst of calls opens one connection, not many.
    dialing: tokio::sync::Mutex<()>,
}

impl Slot {
    fn live(&self) -> Option<Arc<Connection>> {
        lock(&self.current)
            .as_ref()
            .filter(|c| !c.is_shut())
            .cloned()
    }
}

impl MuxHost {
    /// Up to `connections` connections (at least one) to `authority` (`host:port`), opened
    /// as calls need them, taking provider messages of at most `message_limit` bytes.
    pub fn new(authority: &str, connections: usize, message_limit: usize) -> Self {
        Self {
            authority: authority.to_owned(),
            message_limit,
            slots: (0..connections.max(1)).map(|_| Slot::default()).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// Runs one call on one of the connections, round robin, dialing it first if needed.
    pub async fn call(&self, context: &CallContext, payload: &Value) -> Result<Value, MuxError> {
        let connection = self.connection().await?;
        connection
            .call(context, payload)
            .await
            .map_err(MuxError::Call)
    }

    /// Closes the open connections (the provider was unregistered); a later call would dial
    /// again.
    pub fn close(&self) {
        for slot in &self.slots {
            if let Some(connection) = lock(&slot.current).take() {
                connection.end(ProviderError::Unavailable(
                    "the remote provider was unregistered".into(),
                ));
                tokio::spawn(connection.close());
            }
        }
    }

    async fn connection(&self) -> Result<Arc<Connection>, MuxError> {
        let slot = &self.slots[self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len()];
        if let Some(live) = slot.live() {
            return Ok(live);
        }
        let _dialing = slot.dialing.lock().await;
        if let Some(live) = slot.live() {
            return Ok(live);
        }
        let socket = dial(&self.authority, wire::CALLS_PATH, self.message_limit)
            .await
            .map_err(|e| match e {
                DialError::Refused(status) => MuxError::NotServed(status),
                DialError::Unreachable(why) => MuxError::Call(ProviderError::Unavailable(format!(
                    "remote provider unreachable: {why}"
                ))),
            })?;
        let (write, read) = socket.split();
        let connection = Arc::new(Connection {
            calls: Mutex::new(Calls::default()),
            shut: AtomicBool::new(false),
            queue: Mutex::new(VecDeque::new()),
            sink: Arc::new(tokio::sync::Mutex::new(write)),
        });
        tokio::spawn(read_answers(Arc::clone(&connection), read));
        *lock(&slot.current) = Some(Arc::clone(&connection));
        Ok(connection)
    }
}

type Outcome = Result<Value, ProviderError>;

/// The calls in flight on one connection.
#[derive(Default)]
struct Calls {
    next_ref: u64,
    waiting: HashMap<u64, oneshot::Sender<Outcome>>,
    /// Why the connection ended; set once, after which nothing registers.
    ended: Option<ProviderError>,
}

/// One multiplexed WebSocket.
struct Connection {
    calls: Mutex<Calls>,
    shut: AtomicBool,
    /// Messages waiting for whoever writes next.
    queue: Mutex<VecDeque<Message>>,
    sink: Arc<tokio::sync::Mutex<SplitSink<Socket, Message>>>,
}

impl Connection {
    fn is_shut(&self) -> bool {
        self.shut.load(Ordering::Acquire)
    }

    async fn call(self: &Arc<Self>, context: &CallContext, payload: &Value) -> Outcome {
        let (reference, answer) = {
            let mut calls = lock(&self.calls);
            if let Some(why) = &calls.ended {
                return Err(why.clone());
            }
            let reference = calls.next_ref;
            calls.next_ref += 1;
            let (sender, answer) = oneshot::channel();
            calls.waiting.insert(reference, sender);
            (reference, answer)
        };
        let mut waiting = Waiting {
            connection: self,
            reference,
            answered: false,
        };
        let line = wire::multiplexed_call_line(reference, context, payload);
        self.send(Message::Text(line.into())).await;
        let outcome = answer.await.unwrap_or_else(|_| {
            Err(ProviderError::Unavailable(
                "the connection to the remote provider ended".into(),
            ))
        });
        waiting.answered = true;
        outcome
    }

    /// Hands `outcome` to call `reference`, if it is still waiting (a cancelled call's late
    /// answer is dropped).
    fn answer(&self, reference: u64, outcome: Outcome) {
        let waiting = lock(&self.calls).waiting.remove(&reference);
        if let Some(waiting) = waiting {
            let _ = waiting.send(outcome);
        }
    }

    /// Ends the connection: every waiting call gets `why`, and nothing registers again.
    fn end(&self, why: ProviderError) {
        let waiting = {
            let mut calls = lock(&self.calls);
            if calls.ended.is_none() {
                calls.ended = Some(why.clone());
            }
            self.shut.store(true, Ordering::Release);
            std::mem::take(&mut calls.waiting)
        };
        for (_, call) in waiting {
            let _ = call.send(Err(why.clone()));
        }
    }

    /// Queues `message` and writes everything queued — unless another task is writing
    /// already, which then writes this message too. A broken socket ends the connection.
    async fn send(self: &Arc<Self>, message: Message) {
        lock(&self.queue).push_back(message);
        loop {
            let Ok(sink) = Arc::clone(&self.sink).try_lock_owned() else {
                return;
            };
            let mut handoff = Handoff(Some(Arc::clone(self)));
            let written = write_queued(&self.queue, sink).await;
            handoff.0 = None;
            if let Err(e) = written {
                return self.broken(e);
            }
            // A line queued while this task held the sink, by a task that then found it
            // held, is this task's to write.
            if lock(&self.queue).is_empty() {
                return;
            }
        }
    }

    /// Writes what is queued after a writer was dropped mid-write; waits for the sink.
    async fn finish_writing(self: Arc<Self>) {
        loop {
            let sink = Arc::clone(&self.sink).lock_owned().await;
            if let Err(e) = write_queued(&self.queue, sink).await {
                return self.broken(e);
            }
            if lock(&self.queue).is_empty() {
                return;
            }
        }
    }

    /// Sends the close frame, waiting at most [`CLOSE_WAIT`] for a socket that takes no
    /// writes; the socket itself goes when the last handle to the connection does.
    async fn close(self: Arc<Self>) {
        let closing = async {
            let mut sink = self.sink.lock().await;
            let _ = futures_util::SinkExt::close(&mut *sink).await;
        };
        let _ = tokio::time::timeout(CLOSE_WAIT, closing).await;
    }

    fn broken(&self, error: WsError) {
        self.end(ProviderError::Unavailable(format!(
            "the connection to the remote provider broke: {error}"
        )));
    }
}

/// Writes the queue out and flushes. Messages leave the queue only as the sink takes them,
/// so a write dropped half-way loses nothing.
async fn write_queued(
    queue: &Mutex<VecDeque<Message>>,
    mut sink: OwnedMutexGuard<SplitSink<Socket, Message>>,
) -> Result<(), WsError> {
    loop {
        poll_fn(|cx| Sink::poll_ready(std::pin::Pin::new(&mut *sink), cx)).await?;
        let Some(message) = lock(queue).pop_front() else {
            break;
        };
        Sink::start_send(std::pin::Pin::new(&mut *sink), message)?;
    }
    poll_fn(|cx| Sink::poll_flush(std::pin::Pin::new(&mut *sink), cx)).await
}

/// Set while a task writes; if that task is dropped before it is done, the rest of the
/// queue goes out from a task of its own.
struct Handoff(Option<Arc<Connection>>);

impl Drop for Handoff {
    fn drop(&mut self) {
        if let Some(connection) = self.0.take() {
            tokio::spawn(connection.finish_writing());
        }
    }
}

/// A registered call; dropped before its answer, it withdraws the call and tells the
/// provider to stop.
struct Waiting<'a> {
    connection: &'a Arc<Connection>,
    reference: u64,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let withdrawn = lock(&self.connection.calls)
            .waiting
            .remove(&self.reference)
            .is_some();
        if withdrawn && !self.connection.is_shut() {
            let connection = Arc::clone(self.connection);
            let cancel = Message::Text(wire::multiplexed_cancel(self.reference).into());
            tokio::spawn(async move { connection.send(cancel).await });
        }
    }
}

/// Reads answers until the connection ends, then ends it for every call still waiting.
async fn read_answers(connection: Arc<Connection>, mut read: SplitStream<Socket>) {
    let why = loop {
        let text = match read.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Binary(_))) => {
                break ProviderError::Transport(
                    "the remote provider sent a binary message on its call connection".into(),
                );
            }
            Some(Ok(Message::Close(frame))) => {
                let reason = frame.map(|f| format!(": {}", f.reason)).unwrap_or_default();
                break ProviderError::Unavailable(format!(
                    "the remote provider closed its call connection{reason}"
                ));
            }
            Some(Err(WsError::Capacity(e))) => {
                break ProviderError::Transport(format!(
                    "the remote provider sent a message over the limit: {e}"
                ));
            }
            Some(Err(e)) => {
                break ProviderError::Unavailable(format!(
                    "the connection to the remote provider broke: {e}"
                ));
            }
            None => {
                break ProviderError::Unavailable(
                    "the remote provider closed its call connection".into(),
                );
            }
        };
        match MultiplexedAnswer::parse(text.as_str()) {
            Ok(answer) => connection.answer(
                answer.reference,
                answer.outcome.map_err(ProviderError::Failed),
            ),
            Err((Some(reference), e)) => connection.answer(
                reference,
                Err(ProviderError::Failed(format!(
                    "remote provider answered malformed JSON: {e}"
                ))),
            ),
            Err((None, e)) => {
                break ProviderError::Transport(format!(
                    "the remote provider broke the call protocol: {e}"
                ));
            }
        }
    };
    connection.end(why);
    connection.close().await;
}
