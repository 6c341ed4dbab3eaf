//! Registry errors, each with one stable code.

use thiserror::Error;

use crate::ids::IdentityError;
use crate::store::StoreError;

/// Everything a registry operation can refuse or fail with.
#[derive(Debug, Error)]
pub enum RegistryError {
    /// The resource does not exist for this tenant (or belongs to another one).
    #[error("{what} not found")]
    NotFound {
        /// What was looked up, for the message.
        what: String,
    },
    /// The request conflicts with current state (for example, the tenant already exists).
    #[error("{0}")]
    Conflict(String),
    /// An identifier or argument is malformed.
    #[error(transparent)]
    InvalidIdentity(#[from] IdentityError),
    /// A request is well-formed but cannot be accepted as it stands.
    #[error("{0}")]
    Invalid(String),
    /// The change feed no longer holds the requested position.
    #[error(
        "events after {requested} are no longer retained; the oldest retained event is {oldest}; re-list and resume from the live feed"
    )]
    EventsGone {
        /// The position the caller asked to resume after.
        requested: u64,
        /// The oldest event still retained.
        oldest: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored record could not be decoded.
    #[error("corrupt record in {table}/{key}: {message}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// The key.
        key: String,
        /// What failed.
        message: String,
    },
}

impl RegistryError {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::NotFound { .. } => "not_found",
            RegistryError::Conflict(_) => "conflict",
            RegistryError::InvalidIdentity(_) | RegistryError::Invalid(_) => "invalid_request",
            RegistryError::EventsGone { .. } => "events_gone",
            RegistryError::Store(_) | RegistryError::Corrupt { .. } => "internal",
        }
    }

    /// A not-found error for `what`.
    pub fn not_found(what: impl Into<String>) -> Self {
        RegistryError::NotFound { what: what.into() }
    }
}
