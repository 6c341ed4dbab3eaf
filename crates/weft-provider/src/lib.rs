//! The weft provider SDK: what a capability implementation looks like to the fabric.
//!
//! A provider publishes descriptors and answers calls. The fabric does everything around
//! the call — lookup, revision pin, admission, the deadline, validating the payload before
//! and the result after — so an implementation only maps a valid payload to a result (or a
//! typed failure). Built-in providers and embedders implement [`Provider`] directly; the
//! managed-child and remote-HTTP transports adapt their wire protocols to the same trait.

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
}

/// A shared provider handle.
pub type SharedProvider = Arc<dyn Provider>;
