//! The records the registry stores and returns.

use serde::{Deserialize, Serialize};
use weft_contract::IoMode;

use crate::ids::{NodeId, ProviderId, Scope, TenantId};

/// A tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantRecord {
    /// Its id.
    pub id: TenantId,
    /// A display name.
    pub name: String,
    /// When it was created (RFC 3339).
    #[serde(rename = "createdAt")]
    pub created_at: String,
}

/// An API token. The secret itself is never stored, only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenRecord {
    /// Its id (`tok_…`), safe to show and log.
    pub id: String,
    /// The tenant it acts for.
    pub tenant: TenantId,
    /// A label.
    pub name: String,
    /// What it may do.
    pub scopes: Vec<Scope>,
    /// Lowercase hex SHA-256 of the secret.
    #[serde(rename = "secretSha256")]
    pub secret_sha256: String,
    /// When it was created (RFC 3339).
    #[serde(rename = "createdAt")]
    pub created_at: String,
    /// When it was revoked, if it was.
    #[serde(rename = "revokedAt", default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

/// One descriptor a provider serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServedDescriptor {
    /// Capability id.
    pub id: String,
    /// Contract version.
    pub version: String,
    /// The revision this provider published.
    pub revision: String,
}

/// A registered provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderRecord {
    /// The provider's identity.
    pub provider_id: ProviderId,
    /// The node it runs on.
    pub node_id: NodeId,
    /// How to reach it (filled in by the transports; opaque here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub transport: Option<serde_json::Value>,
    /// What it serves.
    pub descriptors: Vec<ServedDescriptor>,
    /// First registration (RFC 3339).
    pub registered_at: String,
    /// Last change or refresh (RFC 3339).
    pub updated_at: String,
}

/// One revision in an `id@version`'s history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RevisionEntry {
    /// The revision.
    pub revision: String,
    /// When it was first published (RFC 3339).
    pub published_at: String,
}

/// The stored history of one `id@version` within a tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionRecord {
    /// Capability id.
    pub id: String,
    /// Contract version.
    pub version: String,
    /// The current revision.
    pub current: String,
    /// Every revision ever published, oldest first.
    pub history: Vec<RevisionEntry>,
}

/// A registry change, as the change feed carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventRecord {
    /// Monotonic per tenant, starting at 1.
    pub id: u64,
    /// What happened: `provider.registered`, `provider.updated`, `provider.unregistered`,
    /// `capability.published`, `capability.revised`.
    pub kind: String,
    /// When (RFC 3339).
    pub at: String,
    /// Kind-specific details.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: serde_json::Value,
}

/// A response stored for `Idempotency-Key` replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IdempotencyRecord {
    /// SHA-256 of method, route and body, to tell a replay from a different request.
    pub request_sha256: String,
    /// The HTTP status sent.
    pub status: u16,
    /// The body sent.
    pub body: String,
    /// When it was stored (seconds since the Unix epoch).
    pub stored_at_unix: u64,
}

/// A node, as discovery shows it: derived from the providers registered on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeView {
    /// The node's id.
    pub node_id: NodeId,
    /// Discovery tags: the capability ids served on the node, sorted.
    pub tags: Vec<String>,
    /// The providers registered on it, sorted.
    pub providers: Vec<ProviderId>,
    /// `ready` while at least one provider on it is live; `stale` when all let their lease lapse.
    pub status: String,
    /// The latest provider registration or refresh (RFC 3339).
    pub last_seen: String,
}

/// A summary of one version of a capability, for `GET /v1/capabilities/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionSummary {
    /// Contract version.
    pub version: String,
    /// Current revision.
    pub revision: String,
    /// I/O mode of the current revision.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "unary"))]
    pub io_mode: IoMode,
    /// Title of the current revision.
    pub title: String,
    /// Providers serving this version, with their nodes.
    pub providers: Vec<ProviderRef>,
}

/// A provider serving a version, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderRef {
    /// The provider.
    pub provider_id: ProviderId,
    /// Its node.
    pub node_id: NodeId,
    /// The revision it published (may trail the current one).
    pub revision: String,
}
