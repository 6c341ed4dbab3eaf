//! Call failures: one code each, in the order the guards check them.

use serde_json::Value;
use thiserror::Error;

/// Why a call failed. The HTTP layer maps [`CallError::code`] to a status.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CallError {
    /// The call envelope is malformed (timeout out of range, bad call id, …).
    #[error("{0}")]
    InvalidRequest(String),
    /// No capability with this id (or none callable this way) for the tenant.
    #[error("{0}")]
    NotFound(String),
    /// The id exists, but not at the requested version.
    #[error("capability {id} has no version {requested}; available: {}", .available.join(", "))]
    VersionMismatch {
        /// Capability id.
        id: String,
        /// The version asked for.
        requested: String,
        /// The versions that exist.
        available: Vec<String>,
    },
    /// The caller pinned a revision that is no longer current.
    #[error("descriptor revision is {current}, caller pinned {pinned}; rediscover before calling")]
    RevisionMismatch {
        /// The current revision.
        current: String,
        /// What the caller sent.
        pinned: String,
    },
    /// The concurrency bound is reached; nothing was queued.
    #[error("the node is at its limit of {limit} concurrent calls; retry later")]
    Overloaded {
        /// The bound.
        limit: usize,
    },
    /// The payload is larger than the limit.
    #[error("payload is {bytes} bytes; the limit is {limit}")]
    PayloadTooLarge {
        /// Size of the payload as received.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The payload breaks the input schema.
    #[error("payload failed input_schema validation: {message}")]
    InvalidPayload {
        /// The first failure, in words.
        message: String,
        /// Every failure: `[{instance_pointer, schema_path, message}]`.
        errors: Value,
    },
    /// The provider's work failed.
    #[error("provider failed: {0}")]
    ProviderError(String),
    /// The provider's result breaks the contract (not an object, too large, or invalid).
    #[error("provider result rejected: {message}")]
    InvalidResult {
        /// What is wrong.
        message: String,
        /// Validation failures, when the output schema rejected it.
        errors: Option<Value>,
    },
    /// No provider of the capability can be reached.
    #[error("{0}")]
    Unreachable(String),
    /// The hop to the provider broke a flow-control bound or its framing.
    #[error("{0}")]
    Transport(String),
    /// The single deadline expired.
    #[error("call did not finish within {seconds}s (payload validation plus provider execution)")]
    Timeout {
        /// The deadline, in seconds.
        seconds: f64,
    },
}

impl CallError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::InvalidRequest(_) => "invalid_request",
            CallError::NotFound(_) => "not_found",
            CallError::VersionMismatch { .. } => "version_mismatch",
            CallError::RevisionMismatch { .. } => "revision_mismatch",
            CallError::Overloaded { .. } => "overloaded",
            CallError::PayloadTooLarge { .. } => "payload_too_large",
            CallError::InvalidPayload { .. } => "invalid_payload",
            CallError::ProviderError(_) => "provider_error",
            CallError::InvalidResult { .. } => "invalid_result",
            CallError::Unreachable(_) => "unreachable",
            CallError::Transport(_) => "transport_error",
            CallError::Timeout { .. } => "timeout",
        }
    }

    /// Structured details for the error envelope.
    pub fn details(&self) -> Option<Value> {
        match self {
            CallError::VersionMismatch { available, .. } => {
                Some(serde_json::json!({ "available_versions": available }))
            }
            CallError::RevisionMismatch { current, pinned } => Some(serde_json::json!({
                "current_revision": current,
                "pinned_revision": pinned,
                "hint": "rediscover the capability, check the new contract, then pin the current revision"
            })),
            CallError::Overloaded { limit } => Some(serde_json::json!({ "limit": limit })),
            CallError::PayloadTooLarge { bytes, limit } => {
                Some(serde_json::json!({ "bytes": bytes, "limit": limit }))
            }
            CallError::InvalidPayload { errors, .. } => {
                Some(serde_json::json!({ "errors": errors }))
            }
            CallError::InvalidResult {
                errors: Some(errors),
                ..
            } => Some(serde_json::json!({ "errors": errors })),
            CallError::Timeout { seconds } => {
                Some(serde_json::json!({ "timeout_seconds": seconds }))
            }
            _ => None,
        }
    }
}
