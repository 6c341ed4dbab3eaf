//! Discovery: list capabilities (or the feature catalog), describe one, pin one version.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, State};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;
use weft_contract::{Descriptor, IoMode};
use weft_registry::model::{ProviderRef, RevisionEntry, VersionSummary};
use weft_registry::{CapabilityFilter, NodeId, Principal, ProviderId, Scope};

use super::{ApiResult, DescriptorDoc};
use crate::error::ApiError;
use crate::extract::{Path, QueryParams};
use crate::features::FeatureEntry;
use crate::layers::require;
use crate::state::AppState;

/// A page of descriptors, ordered by id then version (SemVer order).
#[derive(Debug, Serialize, ToSchema)]
pub struct CapabilityList {
    /// The node described, when listing was filtered by `node_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Current descriptors.
    #[schema(value_type = Vec<DescriptorDoc>)]
    pub capabilities: Vec<Box<RawValue>>,
    /// `id@version` → current revision, for every descriptor in this page.
    pub revisions: BTreeMap<String, String>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// A page of the feature catalog (`kind=feature`), ordered by id.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureList {
    /// Feature entries.
    pub capabilities: Vec<FeatureEntry>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// Every version of one contract id.
#[derive(Debug, Serialize, ToSchema)]
pub struct CapabilityVersions {
    /// The capability id.
    pub id: String,
    /// Its versions in SemVer order, each with its current revision and who serves it.
    pub versions: Vec<VersionSummary>,
}

/// One `id@version`: the current descriptor and its revision history.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionView {
    /// The current descriptor.
    #[schema(value_type = DescriptorDoc)]
    pub descriptor: Box<RawValue>,
    /// Its revision (pin this).
    pub revision: String,
    /// Every revision this `id@version` has had, oldest first.
    pub history: Vec<RevisionEntry>,
    /// Providers serving it.
    pub providers: Vec<ProviderRef>,
}

/// The descriptor's stored canonical text, sent as-is (a copy; no parse, no
/// re-serialization).
fn descriptor_json(d: &Arc<Descriptor>) -> Box<RawValue> {
    d.canonical_raw().to_owned()
}

/// List capabilities visible to the tenant, or with `kind=feature` the feature catalog.
#[utoipa::path(get, path = "/v1/capabilities", tag = "capabilities",
    params(("id" = Option<String>, Query, description = "exact capability id"),
           ("io_mode" = Option<String>, Query, description = "unary, server_streaming, client_streaming, bidirectional"),
           ("node_id" = Option<String>, Query, description = "describe this node"),
           ("provider_id" = Option<String>, Query),
           ("q" = Option<String>, Query, description = "case-insensitive substring of id, title or description"),
           ("kind" = Option<String>, Query, description = "`descriptor` (default) or `feature`"),
           ("limit" = Option<usize>, Query, description = "1-100, default 25"),
           ("cursor" = Option<String>, Query)),
    responses((status = 200, body = CapabilityList, description = "descriptors; with kind=feature a FeatureList"),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope), (status = 404, body = crate::error::ErrorEnvelope, description = "unknown node_id")),
    security(("bearerAuth" = [])))]
pub async fn list_capabilities(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: QueryParams,
) -> ApiResult<Response> {
    require(&principal, Scope::Read)?;
    query.only(&[
        "id",
        "io_mode",
        "node_id",
        "provider_id",
        "q",
        "kind",
        "limit",
        "cursor",
    ])?;
    let (limit, cursor) = query.page()?;
    match query.get("kind") {
        None | Some("descriptor") => {}
        Some("feature") => return Ok(list_features(&state, limit, cursor)?.into_response()),
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "kind must be descriptor or feature, got {other:?}"
            )));
        }
    }
    let io_mode = match query.get("io_mode") {
        None => None,
        Some(text) => Some(IoMode::parse(text).ok_or_else(|| {
            ApiError::invalid(format!("io_mode {text:?} is not one of unary, server_streaming, client_streaming, bidirectional"))
        })?),
    };
    let node_id = match query.get("node_id") {
        None => None,
        Some(text) => {
            let node =
                NodeId::parse(text).map_err(|_| ApiError::not_found(format!("node {text}")))?;
            // Describing a node that does not exist (for this tenant) is a 404.
            state.registry.check_node(&principal.tenant, &node)?;
            Some(node)
        }
    };
    let provider_id = match query.get("provider_id") {
        None => None,
        Some(text) => Some(ProviderId::parse(text).map_err(|e| ApiError::invalid(e.to_string()))?),
    };
    let filter = CapabilityFilter {
        id: query.get("id").map(str::to_owned),
        io_mode,
        node_id: node_id.clone(),
        provider_id,
        q: query.get("q").map(str::to_owned),
    };
    let page = state
        .registry
        .list_capabilities(&principal.tenant, &filter, cursor, limit)?;
    let revisions = page
        .items
        .iter()
        .map(|d| (d.qualified_id().to_string(), d.revision().to_string()))
        .collect();
    Ok(Json(CapabilityList {
        node_id: node_id.map(|n| n.to_string()),
        capabilities: page.items.iter().map(descriptor_json).collect(),
        revisions,
        has_more: page.next_cursor.is_some(),
        next_cursor: page.next_cursor,
    })
    .into_response())
}

fn list_features(
    state: &AppState,
    limit: usize,
    cursor: Option<&str>,
) -> ApiResult<Json<FeatureList>> {
    let after = match cursor {
        None => None,
        Some(c) => Some(
            String::from_utf8(
                decode_feature_cursor(c)
                    .ok_or_else(|| ApiError::invalid("cursor is not one this server issued"))?,
            )
            .map_err(|_| ApiError::invalid("cursor is not one this server issued"))?,
        ),
    };
    let mut items: Vec<FeatureEntry> = state
        .features
        .entries()
        .iter()
        .filter(|e| after.as_deref().is_none_or(|a| e.id.as_str() > a))
        .take(limit + 1)
        .cloned()
        .collect();
    let has_more = items.len() > limit;
    items.truncate(limit);
    let next_cursor = has_more
        .then(|| items.last().map(|e| encode_feature_cursor(e.id.as_bytes())))
        .flatten();
    Ok(Json(FeatureList {
        capabilities: items,
        next_cursor,
        has_more,
    }))
}

/// Feature cursors (and taxonomy cursors) are the hex of the last id (pattern) seen.
pub(crate) fn encode_feature_cursor(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn decode_feature_cursor(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// One capability: a contract id's versions, or a feature-catalog entry.
///
/// Feature-catalog ids (`feature:<name>`) are looked up first; any other id is a contract
/// id. Unknown (or another tenant's) ids are `not_found`.
#[utoipa::path(get, path = "/v1/capabilities/{capabilityId}", tag = "capabilities",
    params(("capabilityId" = String, Path)),
    responses((status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 200, body = CapabilityVersions, description = "a contract id; a feature id returns a FeatureEntry"),
              (status = 404, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_capability(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(capability_id): Path<String>,
) -> ApiResult<Response> {
    require(&principal, Scope::Read)?;
    if let Some(feature) = state.features.get(&capability_id) {
        return Ok(Json(feature.clone()).into_response());
    }
    let versions = state
        .registry
        .capability_versions(&principal.tenant, &capability_id)?;
    Ok(Json(CapabilityVersions {
        id: capability_id,
        versions,
    })
    .into_response())
}

/// One `id@version`: the descriptor, its current revision and its revision history.
#[utoipa::path(get, path = "/v1/capabilities/{capabilityId}/versions/{version}", tag = "capabilities",
    params(("capabilityId" = String, Path), ("version" = String, Path)),
    responses((status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 200, body = VersionView), (status = 404, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_version(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path((capability_id, version)): Path<(String, String)>,
) -> ApiResult<Json<VersionView>> {
    require(&principal, Scope::Read)?;
    let detail = state
        .registry
        .capability_version(&principal.tenant, &capability_id, &version)?;
    Ok(Json(VersionView {
        descriptor: descriptor_json(&detail.descriptor),
        revision: detail.descriptor.revision().to_string(),
        history: detail.record.history,
        providers: detail.providers,
    }))
}
