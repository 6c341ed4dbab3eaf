//! The weft provider SDK: what a capability implementation looks like to the fabric.
//!
//! A provider publishes descriptors and answers calls. The fabric does everything around
//! the call — lookup, revision pin, admission, the deadline, validating the payload before
//! and the result after — so an implementation only maps a valid payload to a result (or a
//! typed failure). Built-in providers and embedders implement [`Provider`] directly; the
//! managed-child and remote-HTTP transports adapt their wire protocols to the same trait.

#[cfg(feature = "http")]
pub mod http;
pub mod wire;

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::BoxFuture;
use serde_json::Value;
use thiserror::Error;
use weft_contract::{Descriptor, DescriptorRevision, QualifiedId};

/// What a provider knows about the call it is answering.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The caller's (or the fabric's) call id.
    pub call_id: String,
    /// The `id@version` being called.
    pub capability: QualifiedId,
    /// The pinned revision (equal to the descriptor's current one).
    pub revision: DescriptorRevision,
    /// When the call's single deadline expires. Work past it is wasted: the caller has
    /// already been answered with `timeout`.
    pub deadline: Instant,
}

/// How a provider's work failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProviderError {
    /// The work itself failed (the caller gets `provider_error`).
    #[error("{0}")]
    Failed(String),
    /// The provider cannot be reached or is not ready (the caller gets `unreachable`).
    #[error("{0}")]
    Unavailable(String),
    /// The hop to the provider broke its own rules — a flow-control window or bound
    /// exceeded, a frame out of place — so the call cannot be trusted to be complete (the
    /// caller gets `transport_error`, never a truncated success).
    #[error("{0}")]
    Transport(String),
}

impl ProviderError {
    /// The message, whatever the kind (for wire formats that carry only a message).
    pub fn into_message(self) -> String {
        match self {
            ProviderError::Failed(m)
            | ProviderError::Unavailable(m)
            | ProviderError::Transport(m) => m,
        }
    }
}

/// A capability implementation the fabric can call.
pub trait Provider: Send + Sync + 'static {
    /// The descriptors this provider serves.
    fn descriptors(&self) -> Vec<Descriptor>;

    /// Whether `capability` can take calls now. Not-ready descriptors are hidden from
    /// discovery and refused with `not_found`. Must be cheap and must not block.
    fn ready(&self, _capability: &QualifiedId) -> bool {
        true
    }

    /// Answers one unary call. The payload is already valid against `input_schema`; the
    /// result will be checked against `output_schema` before the caller sees it.
    fn call<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>>;

    /// Runs one streaming call (server, client or bidirectional, as the descriptor says).
    ///
    /// `input` yields the caller's chunks (already valid against `input_chunk_schema`) and
    /// ends when the caller half-closes; it is `None` for server streaming. Chunks sent on
    /// `output` are checked against `output_chunk_schema`; `send` waits while the caller is
    /// slow (flow control), and fails once the stream is over. The returned value, if any,
    /// is the `completed` payload (checked against `output_schema`). The fabric sends the
    /// terminal frame only after this future finishes, so cleanup done here is complete
    /// before the caller sees success.
    fn stream<'a>(
        &'a self,
        _context: &'a CallContext,
        _payload: Value,
        _input: Option<ChunkSource>,
        _output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        Box::pin(async {
            Err(ProviderError::Failed(
                "this provider does not implement streaming".into(),
            ))
        })
    }
}

/// The caller's chunks, as a provider receives them.
pub struct ChunkSource {
    receiver: tokio::sync::mpsc::Receiver<Value>,
}

impl ChunkSource {
    /// Wraps a channel the fabric feeds.
    pub fn new(receiver: tokio::sync::mpsc::Receiver<Value>) -> Self {
        Self { receiver }
    }

    /// The next chunk; `None` once the caller half-closed.
    pub async fn next(&mut self) -> Option<Value> {
        self.receiver.recv().await
    }
}

/// Where a provider sends its chunks.
#[derive(Clone)]
pub struct ChunkSink {
    sender: tokio::sync::mpsc::Sender<Value>,
}

/// The stream is over (the caller went away, or the fabric ended it): stop producing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("the stream is closed")]
pub struct StreamClosed;

impl ChunkSink {
    /// Wraps a channel the fabric drains.
    pub fn new(sender: tokio::sync::mpsc::Sender<Value>) -> Self {
        Self { sender }
    }

    /// Sends one chunk, waiting while the bounded queue toward the caller is full.
    pub async fn send(&self, chunk: Value) -> Result<(), StreamClosed> {
        self.sender.send(chunk).await.map_err(|_| StreamClosed)
    }
}

/// A shared provider handle.
pub type SharedProvider = Arc<dyn Provider>;
