//! Registry errors, each with one stable code.

use thiserror::Error;

use crate::compatibility::Refusal;
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
    /// The compatibility policy refused one or more descriptors of a registration; nothing
    /// was written.
    #[error("{}", breaking_message(.refusals))]
    BreakingChange {
        /// Every refused descriptor, with the comparison that refused it.
        refusals: Vec<Refusal>,
    },
    /// Compatibility settings with more per-capability overrides than the node allows.
    #[error("{count} compatibility overrides exceed this node's limit of {limit}")]
    TooManyOverrides {
        /// How many were sent.
        count: usize,
        /// The node's limit (`max_compatibility_overrides`).
        limit: usize,
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
            RegistryError::InvalidIdentity(_)
            | RegistryError::Invalid(_)
            | RegistryError::TooManyOverrides { .. } => "invalid_request",
            RegistryError::BreakingChange { .. } => "breaking_change",
            RegistryError::EventsGone { .. } => "events_gone",
            RegistryError::Store(_) | RegistryError::Corrupt { .. } => "internal",
        }
    }

    /// A not-found error for `what`.
    pub fn not_found(what: impl Into<String>) -> Self {
        RegistryError::NotFound { what: what.into() }
    }
}

/// `echo@1.1.0 needs a major bump where minor is allowed (policy semver); …; nothing was
/// published`.
fn breaking_message(refusals: &[Refusal]) -> String {
    let each: Vec<String> = refusals
        .iter()
        .map(|r| {
            let check = &r.check;
            let (required, allowed, against) = match &check.successor {
                Some(s) if check.required_bump <= check.allowed_bump => (
                    s.required_bump,
                    s.allowed_bump,
                    format!(" against {}@{}", s.successor.id, s.successor.version),
                ),
                _ => (
                    check.required_bump,
                    check.allowed_bump,
                    check
                        .baseline
                        .as_ref()
                        .map(|b| format!(" against {}@{} {}", b.id, b.version, b.revision))
                        .unwrap_or_default(),
                ),
            };
            format!(
                "{}@{} needs a {} bump{against} where {} is allowed (policy {})",
                r.id,
                r.version,
                required.as_str(),
                allowed.as_str(),
                check.policy
            )
        })
        .collect();
    format!("{}; nothing was published", each.join("; "))
}
