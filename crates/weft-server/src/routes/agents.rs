//! Agent catalogs the node serves (`weft serve --agents DIR`), visible to every tenant:
//! like the feature catalog they belong to the deployment, not to a tenant.

use axum::Json;
use axum::extract::{Extension, State};
use serde::Serialize;
use utoipa::ToSchema;
use weft_registry::{Principal, Scope};

use super::ApiResult;
use crate::agents::{AgentProblem, AgentView};
use crate::error::ApiError;
use crate::extract::{Path, QueryParams};
use crate::layers::require;
use crate::state::AppState;

/// A page of agents, ordered by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentList {
    /// The agents.
    pub agents: Vec<AgentView>,
    /// A problem with the agents folder itself, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AgentProblem>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// List the agents and their capability catalogs.
#[utoipa::path(get, path = "/v1/agents", tag = "agents",
    params(("limit" = Option<usize>, Query), ("cursor" = Option<String>, Query)),
    responses((status = 200, body = AgentList), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn list_agents(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: QueryParams,
) -> ApiResult<Json<AgentList>> {
    require(&principal, Scope::Read)?;
    query.only(&["limit", "cursor"])?;
    let (limit, cursor) = query.page()?;
    let snapshot = state.agents();
    let after = cursor.map(|c| c.to_owned());
    let mut agents: Vec<AgentView> = snapshot
        .agents
        .iter()
        .filter(|a| after.as_deref().is_none_or(|c| a.name.as_str() > c))
        .take(limit + 1)
        .cloned()
        .collect();
    let has_more = agents.len() > limit;
    agents.truncate(limit);
    Ok(Json(AgentList {
        next_cursor: has_more
            .then(|| agents.last().map(|a| a.name.clone()))
            .flatten(),
        has_more,
        agents,
        error: snapshot.error.clone(),
    }))
}

/// One agent with every capability and its digest.
#[utoipa::path(get, path = "/v1/agents/{name}", tag = "agents",
    params(("name" = String, Path)),
    responses((status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 200, body = AgentView), (status = 404, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_agent(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(name): Path<String>,
) -> ApiResult<Json<AgentView>> {
    require(&principal, Scope::Read)?;
    state
        .agents()
        .agents
        .iter()
        .find(|a| a.name == name)
        .cloned()
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("agent {name}")))
}
