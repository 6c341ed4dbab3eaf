//! Nodes: where providers run; each node's tags are the capability ids it serves.

use axum::Json;
use axum::extract::{Extension, State};
use serde::Serialize;
use utoipa::ToSchema;
use weft_registry::model::NodeView;
use weft_registry::{NodeId, Principal, Scope};

use super::ApiResult;
use crate::error::ApiError;
use crate::extract::{Path, QueryParams};
use crate::layers::require;
use crate::state::AppState;

/// A page of nodes, ordered by node id.
#[derive(Debug, Serialize, ToSchema)]
pub struct NodeList {
    /// The nodes.
    pub nodes: Vec<NodeView>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// List the tenant's nodes.
#[utoipa::path(get, path = "/v1/nodes", tag = "nodes",
    params(("limit" = Option<usize>, Query, description = "1-100, default 25"),
           ("cursor" = Option<String>, Query, description = "from nextCursor")),
    responses((status = 200, body = NodeList), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn list_nodes(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: QueryParams,
) -> ApiResult<Json<NodeList>> {
    require(&principal, Scope::Read)?;
    query.only(&["limit", "cursor"])?;
    let (limit, cursor) = query.page()?;
    let page = state
        .registry
        .list_nodes(&principal.tenant, cursor, limit)?;
    Ok(Json(NodeList {
        has_more: page.next_cursor.is_some(),
        next_cursor: page.next_cursor,
        nodes: page.items,
    }))
}

/// One node: its tags, providers, status and last-seen time.
#[utoipa::path(get, path = "/v1/nodes/{node_id}", tag = "nodes",
    params(("node_id" = String, Path)),
    responses((status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 200, body = NodeView), (status = 404, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_node(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(node_id): Path<String>,
) -> ApiResult<Json<NodeView>> {
    require(&principal, Scope::Read)?;
    let node =
        NodeId::parse(&node_id).map_err(|_| ApiError::not_found(format!("node {node_id}")))?;
    Ok(Json(state.registry.node(&principal.tenant, &node)?))
}
