//! Compatibility policies per tenant (admin scope; operators for any tenant) and the
//! publish dry run (publish scope). The rules are in `docs/compatibility.md`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Extension, State};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;
use weft_contract::CapabilityId;
use weft_registry::{
    CompatibilityCheck, CompatibilitySettings, Policy, Principal, Scope, TenantId,
};

use super::admin::target_tenant;
use super::{ApiResult, DescriptorDoc, DescriptorsAt, build_descriptors};
use crate::error::ApiError;
use crate::extract::{Path, StrictJson};
use crate::layers::require;
use crate::state::AppState;

/// The most problems one invalid settings document reports (the rest are counted).
pub const MAX_REPORTED_PROBLEMS: usize = 100;

/// `PUT /v1/tenants/{tenant}/compatibility` body. It replaces the tenant's settings: an
/// absent field is the same as `null` / `{}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutCompatibility {
    /// The tenant's default policy (`semver`, `immutable`, `none`); `null` follows the
    /// node's default (`compatibility_policy`).
    #[serde(default)]
    #[schema(value_type = Option<Policy>)]
    pub default: Value,
    /// Policies for single capability ids, beating the default; at most the node's
    /// `max_compatibility_overrides`.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, Policy>>)]
    pub overrides: Value,
}

/// A tenant's compatibility settings.
#[derive(Debug, Serialize, ToSchema)]
pub struct CompatibilitySettingsView {
    /// The tenant.
    pub tenant: String,
    /// The tenant's own default, or `null` when it follows the node's.
    pub default: Option<Policy>,
    /// The default that applies: the tenant's, else the node's.
    pub effective_default: Policy,
    /// Policies for single capability ids.
    pub overrides: BTreeMap<String, Policy>,
    /// The most overrides this node accepts per tenant.
    pub max_overrides: usize,
}

/// `POST /v1/compatibility/check` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckCompatibility {
    /// The descriptor to judge, as it would be published.
    #[schema(value_type = DescriptorDoc)]
    pub descriptor: Value,
}

fn view(
    state: &AppState,
    tenant: &TenantId,
    settings: CompatibilitySettings,
) -> CompatibilitySettingsView {
    let options = state.registry.options();
    CompatibilitySettingsView {
        tenant: tenant.to_string(),
        default: settings.default,
        effective_default: settings.default.unwrap_or(options.default_policy),
        overrides: settings
            .overrides
            .into_iter()
            .map(|(id, policy)| (id.to_string(), policy))
            .collect(),
        max_overrides: options.max_policy_overrides,
    }
}

/// The tenant an admin may manage: its own, or (operators) any existing one. Scope first,
/// so a non-admin learns nothing about other tenants.
fn managed_tenant(principal: &Principal, named: &str) -> Result<TenantId, ApiError> {
    require(principal, Scope::Admin)?;
    target_tenant(principal, Some(named))
}

/// A tenant's compatibility settings (its admins; operators for any tenant).
#[utoipa::path(get, path = "/v1/tenants/{tenant}/compatibility", tag = "admin",
    params(("tenant" = String, Path)),
    responses((status = 200, body = CompatibilitySettingsView),
              (status = 400, body = crate::error::ErrorEnvelope, description = "a path parameter that cannot be decoded"),
              (status = 401, body = crate::error::ErrorEnvelope), (status = 403, body = crate::error::ErrorEnvelope),
              (status = 404, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn get_settings(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(tenant): Path<String>,
) -> ApiResult<Json<CompatibilitySettingsView>> {
    let tenant = managed_tenant(&principal, &tenant)?;
    let settings = state.registry.compatibility(&tenant)?;
    Ok(Json(view(&state, &tenant, settings)))
}

/// Replace a tenant's compatibility settings (its admins; operators for any tenant).
///
/// Invalid settings are 400 `invalid_request` with `details.problems[]` (`pointer`, `code`:
/// `unknown_policy`, `invalid_capability_id`, `invalid_type` or `too_many_overrides`,
/// `message`), at most 100 of them; nothing is changed.
#[utoipa::path(put, path = "/v1/tenants/{tenant}/compatibility", tag = "admin",
    params(("tenant" = String, Path), ("Idempotency-Key" = Option<String>, Header)),
    request_body = PutCompatibility,
    responses((status = 200, body = CompatibilitySettingsView),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope), (status = 404, body = crate::error::ErrorEnvelope),
              (status = 409, body = crate::error::ErrorEnvelope, description = "an Idempotency-Key reused or in flight"),
              (status = 413, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn put_settings(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(tenant): Path<String>,
    body: StrictJson<PutCompatibility>,
) -> ApiResult<Json<CompatibilitySettingsView>> {
    let tenant = managed_tenant(&principal, &tenant)?;
    let settings = settings_of(&body.value)?;
    let writer = state.clone();
    let target = tenant.clone();
    // The registry commits durably (fsync); keep that off the async workers.
    let stored =
        tokio::task::spawn_blocking(move || writer.registry.set_compatibility(&target, settings))
            .await
            .map_err(|e| ApiError::new("internal", format!("settings task failed: {e}")))??;
    Ok(Json(view(&state, &tenant, stored)))
}

/// Judge a descriptor as publishing it would, without publishing it (the dry run).
///
/// The descriptor is checked by the contract rules first (422 `invalid_descriptor`, as for
/// publishing), then compared with what the caller's tenant has published, under the policy
/// that applies to its id. The answer says `allowed` or `refused`; nothing is written.
#[utoipa::path(post, path = "/v1/compatibility/check", tag = "providers",
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = CheckCompatibility,
    responses((status = 200, body = CompatibilityCheck),
              (status = 400, body = crate::error::ErrorEnvelope), (status = 401, body = crate::error::ErrorEnvelope),
              (status = 403, body = crate::error::ErrorEnvelope),
              (status = 409, body = crate::error::ErrorEnvelope, description = "an Idempotency-Key reused or in flight"),
              (status = 413, body = crate::error::ErrorEnvelope), (status = 422, body = crate::error::ErrorEnvelope)),
    security(("bearerAuth" = [])))]
pub async fn check(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: StrictJson<CheckCompatibility>,
) -> ApiResult<Json<CompatibilityCheck>> {
    require(&principal, Scope::Publish)?;
    let mut descriptors = build_descriptors(
        std::slice::from_ref(&body.value.descriptor),
        &state.limits,
        DescriptorsAt::Single,
        "nothing was checked",
    )?;
    let descriptor = descriptors
        .pop()
        .ok_or_else(|| ApiError::new("internal", "no descriptor was built"))?;
    let reader = state.clone();
    // Comparing schemas is CPU work proportional to the descriptors: off the async workers.
    let check = tokio::task::spawn_blocking(move || {
        reader
            .registry
            .check_compatibility(&principal.tenant, &descriptor)
    })
    .await
    .map_err(|e| ApiError::new("internal", format!("check task failed: {e}")))??;
    Ok(Json(check))
}

/// Validates a settings document, reporting every problem with its JSON pointer.
fn settings_of(body: &PutCompatibility) -> Result<CompatibilitySettings, ApiError> {
    let mut problems = Problems::default();
    let default = match &body.default {
        Value::Null => None,
        value => problems.policy("/default", value),
    };
    let mut overrides = BTreeMap::new();
    match &body.overrides {
        Value::Null => {}
        Value::Object(map) => {
            for (key, value) in map {
                let pointer = format!("/overrides/{}", escape_pointer(key));
                let id = match CapabilityId::parse(key) {
                    Ok(id) => Some(id),
                    Err(e) => {
                        problems.push(&pointer, "invalid_capability_id", e.to_string());
                        None
                    }
                };
                if let (Some(id), Some(policy)) = (id, problems.policy(&pointer, value)) {
                    overrides.insert(id, policy);
                }
            }
        }
        _ => problems.push(
            "/overrides",
            "invalid_type",
            "must be an object mapping capability ids to policies".into(),
        ),
    }
    problems.finish()?;
    Ok(CompatibilitySettings { default, overrides })
}

/// The problems of one settings document.
#[derive(Default)]
struct Problems {
    listed: Vec<Value>,
    count: usize,
}

impl Problems {
    fn push(&mut self, pointer: &str, code: &str, message: String) {
        self.count += 1;
        if self.listed.len() < MAX_REPORTED_PROBLEMS {
            self.listed
                .push(json!({"pointer": pointer, "code": code, "message": message}));
        }
    }

    /// The policy named by `value`, or a problem at `pointer`.
    fn policy(&mut self, pointer: &str, value: &Value) -> Option<Policy> {
        let names = || {
            Policy::ALL
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match value {
            Value::String(name) => {
                let policy = Policy::parse(name);
                if policy.is_none() {
                    let message = format!("unknown policy {name:?}; policies are {}", names());
                    self.push(pointer, "unknown_policy", message);
                }
                policy
            }
            _ => {
                let message = format!("must be a policy name: {}", names());
                self.push(pointer, "invalid_type", message);
                None
            }
        }
    }

    fn finish(self) -> Result<(), ApiError> {
        if self.count == 0 {
            return Ok(());
        }
        Err(ApiError::invalid(format!(
            "{} problem(s) in the compatibility settings; nothing was changed",
            self.count
        ))
        .with_details(json!({ "problems": self.listed, "count": self.count })))
    }
}

/// Escapes a key for a JSON pointer (RFC 6901: `~` as `~0`, `/` as `~1`).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(value: Value) -> PutCompatibility {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The (pointer, code) pairs reported, sorted.
    fn problems(value: Value) -> Vec<(String, String)> {
        let error = settings_of(&body(value))
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert_eq!(error.code, "invalid_request");
        let details = error.details.unwrap_or_default();
        let mut found: Vec<(String, String)> = details["problems"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|p| {
                        (
                            p["pointer"].as_str().unwrap_or_default().to_owned(),
                            p["code"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    }

    fn pair(pointer: &str, code: &str) -> (String, String) {
        (pointer.to_owned(), code.to_owned())
    }

    #[test]
    fn absent_and_null_fields_follow_the_node_with_no_overrides() {
        for value in [json!({}), json!({"default": null, "overrides": null})] {
            let settings = settings_of(&body(value)).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(settings, CompatibilitySettings::default());
        }
    }

    #[test]
    fn every_problem_is_reported_with_its_pointer() {
        let found = problems(json!({
            "default": "strict",
            "overrides": {"echo": "sometimes", "Bad Id": "semver", "a/b~c": "none", "ok": 3}
        }));
        assert_eq!(
            found,
            [
                pair("/default", "unknown_policy"),
                pair("/overrides/Bad Id", "invalid_capability_id"),
                pair("/overrides/a~1b~0c", "invalid_capability_id"),
                pair("/overrides/echo", "unknown_policy"),
                pair("/overrides/ok", "invalid_type"),
            ]
        );
        assert_eq!(
            problems(json!({"default": 1, "overrides": []})),
            [
                pair("/default", "invalid_type"),
                pair("/overrides", "invalid_type")
            ]
        );
    }

    #[test]
    fn at_most_a_hundred_problems_are_listed_and_all_are_counted() {
        let overrides: serde_json::Map<String, Value> = (0..150)
            .map(|i| (format!("id{i}"), json!("nope")))
            .collect();
        let error = settings_of(&body(json!({ "overrides": overrides })))
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        let details = error.details.unwrap_or_default();
        assert_eq!(details["count"], 150);
        assert_eq!(
            details["problems"].as_array().map(Vec::len),
            Some(MAX_REPORTED_PROBLEMS)
        );
    }
}
