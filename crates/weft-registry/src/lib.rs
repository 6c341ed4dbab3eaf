//! The registry of a weft node: who may do what (tenants, tokens, scopes), who serves what
//! (providers on nodes, serving descriptors), every revision each `id@version` has had, and
//! a resumable feed of changes — and, at publish, the tenant's compatibility policy
//! ([`Policy`]), judged with `weft-compat`'s findings.
//!
//! The registry keeps its state in memory for fast discovery and makes every change durable
//! through the narrow [`store::Store`] interface before acknowledging it; [`store::RedbStore`]
//! is the embedded backend. It knows nothing of HTTP: the server maps its errors
//! ([`RegistryError::code`]) onto responses. It takes descriptors already checked by
//! `weft-contract`.

mod access;
pub mod compatibility;
pub mod discovery;
pub mod error;
pub mod ids;
mod load;
pub mod model;
pub mod policy;
pub mod providers;
pub mod registry;
pub mod store;
mod util;

pub use compatibility::{Baseline, CompatibilityCheck, Refusal, SuccessorCheck, Verdict};
pub use discovery::{CapabilityFilter, VersionDetail};
pub use error::RegistryError;
pub use ids::{IdentityError, NodeId, ProviderId, Scope, TenantId};
pub use policy::{CompatibilitySettings, Policy, PolicySource};
pub use providers::{DescriptorOutcome, ProviderRegistration, PublishStatus, Registration};
pub use registry::{
    Announcement, DEFAULT_MAX_POLICY_OVERRIDES, Page, Principal, PrincipalData, Registry,
    RegistryOptions,
};
pub use store::{RedbStore, Store, StoreError, Table, Write};
