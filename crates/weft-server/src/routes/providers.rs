//! Providers: register with descriptors, look up, unregister.

use axum::Json;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use weft_registry::model::ProviderRecord;
use weft_registry::{
    DescriptorOutcome, NodeId, Principal, ProviderId, ProviderRegistration, Scope,
};

use super::{ApiResult, DescriptorDoc};
use crate::error::ApiError;
use crate::extract::{NoBody, Path, StrictJson};
use crate::layers::require;
use crate::state::AppState;

/// `PUT /v1/providers/{provider_id}` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterProvider {
    /// The node the provider runs on.
    pub node_id: String,
    /// How to reach the provider (set by the transports; opaque to the registry).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub transport: Option<Value>,
    /// The descriptors it serves; each is checked by the contract rules.
    #[schema(value_type = Vec<DescriptorDoc>)]
    pub descriptors: Vec<Value>,
}

/// The provider after registration, and what happened to each descriptor.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderRegistered {
    /// The provider as stored.
    pub provider: ProviderRecord,
    /// Per descriptor: `new`, `revised` or `unchanged`, with the current revision.
    pub descriptors: Vec<DescriptorOutcome>,
    /// Whether anything changed.
    pub changed: bool,
    /// Descriptors accepted although their ids break the taxonomy's "non-standard ids must
    /// use custom." (the node's `taxonomy` mode is `advisory`); absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::taxonomy::TaxonomyWarning>,
}

/// `POST /v1/providers/{provider_id}/unregister` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct Unregistered {
    /// The provider.
    pub provider_id: String,
    /// False when it was not registered (the call is idempotent).
    pub unregistered: bool,
}

fn provider_id(text: &str) -> Result<ProviderId, ApiError> {
    ProviderId::parse(text).map_err(|e| ApiError::invalid(e.to_string()))
}

/// Register (or re-register) a provider and publish its descriptors.
///
/// Every descriptor is checked; if any breaks a rule the answer is 422
/// `invalid_descriptor` listing every problem (`details.problems[]` with the descriptor's
/// index, the JSON pointer, the code and a message) and nothing is stored. Descriptors
/// published under a standard taxonomy id must honour the standard contract, and with the
/// node's `taxonomy` mode `enforced` ids in a standard domain must be standard; otherwise
/// the answer is 422 `taxonomy_mismatch` with every problem in `details.problems[]`
/// (docs/taxonomy.md).
///
/// Every new or changed descriptor is then judged by the tenant's compatibility policy
/// (`docs/compatibility.md`); if any is refused the answer is 409 `breaking_change` with
/// `details.refusals[]` (each: `index`, `id`, `version`, and the check: `policy`,
/// `baseline`, `required_bump`, `allowed_bump`, `findings`, …) and nothing is stored.
/// Accepted descriptors that were compared with a published one carry their check as
/// `compatibility`.
#[utoipa::path(put, path = "/v1/providers/{provider_id}", tag = "providers",
    params(("provider_id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    request_body = RegisterProvider,
    responses((status = 200, body = ProviderRegistered, description = "updated or unchanged"),
              (status = 201, body = ProviderRegistered, description = "created"),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope), (status = 409, body = crate::error::ErrorEnvelope),
              (status = 413, body = crate::error::ErrorEnvelope), (status = 422, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn register(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: StrictJson<RegisterProvider>,
) -> ApiResult<(StatusCode, Json<ProviderRegistered>)> {
    require(&principal, Scope::Publish)?;
    let provider = provider_id(&id)?;
    let body = body.value;
    let node_id = NodeId::parse(&body.node_id).map_err(|e| ApiError::invalid(e.to_string()))?;
    let remote = crate::remote::parse_transport(body.transport.as_ref())?;
    let descriptors = super::build_descriptors(
        &body.descriptors,
        &state.limits,
        super::DescriptorsAt::List,
        "nothing was published",
    )?;
    let warnings = crate::taxonomy::check(state.config.taxonomy, &descriptors)?;
    let remote_descriptors = remote.as_ref().map(|_| descriptors.clone());
    let registration = ProviderRegistration {
        node_id,
        transport: body.transport,
        descriptors,
    };
    let lease_key = provider.clone();
    let registry_state = state.clone();
    let tenant = principal.tenant.clone();
    // The registry commits durably (fsync); keep that off the async workers.
    let outcome = tokio::task::spawn_blocking(move || {
        registry_state
            .registry
            .register_provider(&tenant, provider, registration)
    })
    .await
    .map_err(|e| ApiError::new("internal", format!("registration task failed: {e}")))??;
    // Every registration of a remote provider renews its lease (and re-points its calls).
    match (remote, remote_descriptors) {
        (Some(transport), Some(descriptors)) => {
            state.leases.renew(
                &state,
                &principal.tenant,
                &lease_key,
                transport,
                descriptors,
            );
        }
        _ => state.leases.forget(&principal.tenant, &lease_key),
    }
    let status = if outcome.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(ProviderRegistered {
            provider: outcome.record,
            descriptors: outcome.descriptors,
            changed: outcome.changed,
            warnings,
        }),
    ))
}

/// One provider.
#[utoipa::path(get, path = "/v1/providers/{provider_id}", tag = "providers",
    params(("provider_id" = String, Path)),
    responses((status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 200, body = ProviderRecord), (status = 404, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_provider(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult<Json<ProviderRecord>> {
    require(&principal, Scope::Read)?;
    let provider =
        ProviderId::parse(&id).map_err(|_| ApiError::not_found(format!("provider {id}")))?;
    Ok(Json(state.registry.provider(&principal.tenant, &provider)?))
}

/// Unregister a provider (idempotent). Its revision histories stay.
#[utoipa::path(post, path = "/v1/providers/{provider_id}/unregister", tag = "providers",
    params(("provider_id" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    responses((status = 200, body = Unregistered), (status = 400, body = crate::error::ErrorEnvelope),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn unregister(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    _body: NoBody,
) -> ApiResult<Json<Unregistered>> {
    require(&principal, Scope::Publish)?;
    let provider = provider_id(&id)?;
    let registry_state = state.clone();
    let tenant = principal.tenant.clone();
    let target = provider.clone();
    let unregistered = tokio::task::spawn_blocking(move || {
        registry_state
            .registry
            .unregister_provider(&tenant, &target)
    })
    .await
    .map_err(|e| ApiError::new("internal", format!("unregister task failed: {e}")))??;
    state.leases.forget(&principal.tenant, &provider);
    Ok(Json(Unregistered {
        provider_id: provider.to_string(),
        unregistered,
    }))
}
