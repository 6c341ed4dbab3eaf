//! Tokens and tenants (admin scope). An admin manages its own tenant's tokens; an admin of
//! the default tenant (the operator) also manages tenants and other tenants' tokens.

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use weft_registry::model::{TenantRecord, TokenRecord};
use weft_registry::{Principal, Scope, TenantId};

use super::ApiResult;
use crate::error::ApiError;
use crate::extract::{NoBody, Path, QueryParams, StrictJson};
use crate::layers::require;
use crate::state::AppState;

/// A token as listed: never its secret or the secret's hash.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenView {
    /// Token id.
    pub id: String,
    /// Its tenant.
    pub tenant: String,
    /// Label.
    pub name: String,
    /// Scopes.
    pub scopes: Vec<Scope>,
    /// Creation time.
    #[serde(rename = "createdAt")]
    pub created_at: String,
    /// Revocation time, if revoked.
    #[serde(rename = "revokedAt", skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

impl From<TokenRecord> for TokenView {
    fn from(t: TokenRecord) -> Self {
        TokenView {
            id: t.id,
            tenant: t.tenant.to_string(),
            name: t.name,
            scopes: t.scopes,
            created_at: t.created_at,
            revoked_at: t.revoked_at,
        }
    }
}

/// `POST /v1/tokens` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateToken {
    /// A label.
    pub name: String,
    /// Scopes: `capabilities:read`, `capabilities:call`, `capabilities:publish`, `admin`.
    pub scopes: Vec<String>,
    /// The tenant (operators only; defaults to the caller's tenant).
    #[serde(default)]
    pub tenant: Option<String>,
}

/// A new token and its secret, shown only in this response.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedToken {
    /// The bearer secret. Store it now: only its hash is kept.
    pub token: String,
    /// The token.
    #[serde(flatten)]
    pub info: TokenView,
}

/// A page of tokens.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenList {
    /// Tokens, by id.
    pub tokens: Vec<TokenView>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// `POST /v1/tenants` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTenant {
    /// `^[a-z0-9][a-z0-9._-]*$`, at most 63 bytes.
    pub id: String,
    /// Display name (defaults to the id).
    #[serde(default)]
    pub name: Option<String>,
}

/// A page of tenants.
#[derive(Debug, Serialize, ToSchema)]
pub struct TenantList {
    /// Tenants, by id.
    pub tenants: Vec<TenantRecord>,
    /// Cursor for the next page.
    #[serde(rename = "nextCursor")]
    pub next_cursor: Option<String>,
    /// Whether there is a next page.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// The tenant an admin acts on: its own, or (operators only) the one named.
pub(crate) fn target_tenant(
    principal: &Principal,
    named: Option<&str>,
) -> Result<TenantId, ApiError> {
    match named {
        None => Ok(principal.tenant.clone()),
        Some(name) if name == principal.tenant.as_str() => Ok(principal.tenant.clone()),
        // Another tenant is invisible to non-operators: 404, never 403.
        Some(name) if !principal.is_operator() => {
            Err(ApiError::not_found(format!("tenant {name}")))
        }
        Some(name) => {
            TenantId::parse(name).map_err(|_| ApiError::not_found(format!("tenant {name}")))
        }
    }
}

fn operator(principal: &Principal) -> Result<(), ApiError> {
    require(principal, Scope::Admin)?;
    if principal.is_operator() {
        Ok(())
    } else {
        Err(ApiError::new(
            "forbidden",
            "only an admin of the default tenant manages tenants",
        ))
    }
}

/// Create a token.
#[utoipa::path(post, path = "/v1/tokens", tag = "admin", request_body = CreateToken,
    params(("Idempotency-Key" = Option<String>, Header)),
    responses((status = 201, body = CreatedToken), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope),
              (status = 404, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn create_token(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: StrictJson<CreateToken>,
) -> ApiResult<(StatusCode, Json<CreatedToken>)> {
    require(&principal, Scope::Admin)?;
    let body = body.value;
    let tenant = target_tenant(&principal, body.tenant.as_deref())?;
    let mut scopes = Vec::new();
    for text in &body.scopes {
        scopes.push(Scope::parse(text).ok_or_else(|| {
            ApiError::invalid(format!(
                "unknown scope {text:?}; scopes are capabilities:read, capabilities:call, capabilities:publish, admin"
            ))
        })?);
    }
    if body.name.trim().is_empty() {
        return Err(ApiError::invalid("name must not be blank"));
    }
    let (record, secret) = state.registry.create_token(&tenant, body.name, scopes)?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedToken {
            token: secret,
            info: record.into(),
        }),
    ))
}

/// List the tokens of the caller's tenant (operators: `?tenant=`).
#[utoipa::path(get, path = "/v1/tokens", tag = "admin",
    params(("tenant" = Option<String>, Query), ("limit" = Option<usize>, Query), ("cursor" = Option<String>, Query)),
    responses((status = 200, body = TokenList), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope),
              (status = 404, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn list_tokens(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: QueryParams,
) -> ApiResult<Json<TokenList>> {
    require(&principal, Scope::Admin)?;
    query.only(&["tenant", "limit", "cursor"])?;
    let (limit, cursor) = query.page()?;
    let tenant = target_tenant(&principal, query.get("tenant"))?;
    if !state.registry.tenant_exists(&tenant) {
        return Err(ApiError::not_found(format!("tenant {tenant}")));
    }
    let page = state.registry.list_tokens(&tenant, cursor, limit)?;
    Ok(Json(TokenList {
        has_more: page.next_cursor.is_some(),
        next_cursor: page.next_cursor,
        tokens: page.items.into_iter().map(TokenView::from).collect(),
    }))
}

/// Revoke a token (idempotent). Another tenant's token is not found.
#[utoipa::path(post, path = "/v1/tokens/{token_id}/revoke", tag = "admin",
    params(("token_id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    responses((status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 200, body = TokenView), (status = 404, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn revoke_token(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(token_id): Path<String>,
    _body: NoBody,
) -> ApiResult<Json<TokenView>> {
    require(&principal, Scope::Admin)?;
    // Operators may revoke any tenant's token; others only their own tenant's.
    let tenant = if principal.is_operator() {
        state
            .registry
            .token_tenant(&token_id)
            .ok_or_else(|| ApiError::not_found(format!("token {token_id}")))?
    } else {
        principal.tenant.clone()
    };
    Ok(Json(
        state.registry.revoke_token(&tenant, &token_id)?.into(),
    ))
}

/// Create a tenant (operators only).
#[utoipa::path(post, path = "/v1/tenants", tag = "admin", request_body = CreateTenant,
    params(("Idempotency-Key" = Option<String>, Header)),
    responses((status = 201, body = TenantRecord), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope),
              (status = 409, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn create_tenant(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: StrictJson<CreateTenant>,
) -> ApiResult<(StatusCode, Json<TenantRecord>)> {
    operator(&principal)?;
    let body = body.value;
    let id = TenantId::parse(&body.id).map_err(|e| ApiError::invalid(e.to_string()))?;
    let name = body.name.unwrap_or_else(|| body.id.clone());
    Ok((
        StatusCode::CREATED,
        Json(state.registry.create_tenant(id, name)?),
    ))
}

/// List tenants (operators only).
#[utoipa::path(get, path = "/v1/tenants", tag = "admin",
    params(("limit" = Option<usize>, Query), ("cursor" = Option<String>, Query)),
    responses((status = 200, body = TenantList), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn list_tenants(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: QueryParams,
) -> ApiResult<Json<TenantList>> {
    operator(&principal)?;
    query.only(&["limit", "cursor"])?;
    let (limit, cursor) = query.page()?;
    let page = state.registry.list_tenants(cursor, limit)?;
    Ok(Json(TenantList {
        has_more: page.next_cursor.is_some(),
        next_cursor: page.next_cursor,
        tenants: page.items,
    }))
}
