//! Typed errors: why a child run ended, and why starting a managed provider failed.

use std::time::Duration;

use thiserror::Error;

/// Why one run of a child ended (or never became ready). Every variant except
/// [`ChildFailure::Shutdown`] leads to a restart with backoff.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ChildFailure {
    /// The command could not be started.
    #[error("could not start the command: {0}")]
    Spawn(String),
    /// The child did not answer `hello` with `ready` in time.
    #[error("no handshake within {0:?}")]
    HandshakeTimeout(Duration),
    /// The child's handshake was refused (protocol version, invalid or duplicate
    /// descriptors, streaming descriptors in protocol 1).
    #[error("handshake refused: {0}")]
    Refused(String),
    /// The child broke the protocol; it was killed.
    #[error("protocol fault: {0}")]
    Protocol(String),
    /// A ping went unanswered; the child was killed as hung.
    #[error("ping unanswered for {0:?}")]
    PingTimeout(Duration),
    /// The child exited (or closed its stdio) on its own.
    #[error("{0}")]
    Exited(String),
    /// The node stopped the child.
    #[error("the provider is shutting down")]
    Shutdown,
}

/// Errors of [`crate::ManagedProvider`] construction.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ManagedError {
    /// The configuration is unusable.
    #[error("managed provider {provider:?}: invalid configuration: {message}")]
    InvalidConfig {
        /// The provider id.
        provider: String,
        /// What is wrong.
        message: String,
    },
    /// There is no Tokio runtime to run the supervisor on.
    #[error("managed provider {provider:?}: must be started inside a Tokio runtime")]
    NoRuntime {
        /// The provider id.
        provider: String,
    },
    /// The first run of the child did not complete its handshake; nothing keeps running.
    #[error("managed provider {provider:?} did not start: {failure}")]
    StartFailed {
        /// The provider id.
        provider: String,
        /// Why the first run failed.
        failure: ChildFailure,
    },
}
