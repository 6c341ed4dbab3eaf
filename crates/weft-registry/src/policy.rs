//! Compatibility policies: how strictly publishing guards a capability's contract, per
//! tenant and per capability id (`docs/compatibility.md`, "Policy at publish").

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use weft_contract::CapabilityId;

use crate::error::RegistryError;
use crate::ids::TenantId;
use crate::registry::{Registry, put};
use crate::store::Table;

/// How strictly publishing guards a capability's contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Within one major a new version must be compatible with its neighbours (a patch only
    /// documents); an `id@version` may only be re-published with documentation changes.
    #[default]
    Semver,
    /// As `semver` between versions, and an `id@version` never changes once published.
    Immutable,
    /// Everything is accepted; the findings are still reported and recorded.
    None,
}

impl Policy {
    /// Every policy, the default first.
    pub const ALL: [Policy; 3] = [Policy::Semver, Policy::Immutable, Policy::None];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Semver => "semver",
            Policy::Immutable => "immutable",
            Policy::None => "none",
        }
    }

    /// The policy with this wire name.
    pub fn parse(text: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the policy applied to a capability came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum PolicySource {
    /// The tenant's override for this capability id.
    Override,
    /// The tenant's default.
    Tenant,
    /// The node's default (the tenant set none).
    Node,
}

/// A tenant's compatibility settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompatibilitySettings {
    /// The tenant's default policy; `None` follows the node's default.
    pub default: Option<Policy>,
    /// Policies for single capability ids, beating the default.
    pub overrides: BTreeMap<CapabilityId, Policy>,
}

impl CompatibilitySettings {
    /// The policy for capability `id`, and where it came from, given the node's default.
    pub fn policy_for(&self, id: &CapabilityId, node_default: Policy) -> (Policy, PolicySource) {
        match (self.overrides.get(id), self.default) {
            (Some(policy), _) => (*policy, PolicySource::Override),
            (None, Some(policy)) => (policy, PolicySource::Tenant),
            (None, None) => (node_default, PolicySource::Node),
        }
    }

    /// The stored form.
    pub(crate) fn to_record(&self) -> SettingsRecord {
        SettingsRecord {
            default: self.default,
            overrides: self
                .overrides
                .iter()
                .map(|(id, policy)| (id.to_string(), *policy))
                .collect(),
        }
    }

    /// Rebuilds settings from their stored form; an invalid id is reported as the error.
    pub(crate) fn from_record(record: SettingsRecord) -> Result<Self, String> {
        let mut overrides = BTreeMap::new();
        for (id, policy) in record.overrides {
            let id = CapabilityId::parse(&id).map_err(|e| e.to_string())?;
            overrides.insert(id, policy);
        }
        Ok(Self {
            default: record.default,
            overrides,
        })
    }
}

/// [`CompatibilitySettings`] as stored in [`crate::Table::Compatibility`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SettingsRecord {
    #[serde(default)]
    pub(crate) default: Option<Policy>,
    #[serde(default)]
    pub(crate) overrides: BTreeMap<String, Policy>,
}

impl Registry {
    /// The compatibility settings of `tenant`.
    pub fn compatibility(&self, tenant: &TenantId) -> Result<CompatibilitySettings, RegistryError> {
        let state = self.read();
        let t = state
            .tenants
            .get(tenant)
            .ok_or_else(|| RegistryError::not_found(format!("tenant {tenant}")))?;
        Ok(t.compatibility.clone())
    }

    /// Replaces the compatibility settings of `tenant`, durably. More overrides than
    /// [`crate::RegistryOptions::max_policy_overrides`] are refused.
    pub fn set_compatibility(
        &self,
        tenant: &TenantId,
        settings: CompatibilitySettings,
    ) -> Result<CompatibilitySettings, RegistryError> {
        let limit = self.options.max_policy_overrides;
        if settings.overrides.len() > limit {
            return Err(RegistryError::TooManyOverrides {
                count: settings.overrides.len(),
                limit,
            });
        }
        let mut state = self.write();
        let t = state
            .tenants
            .get_mut(tenant)
            .ok_or_else(|| RegistryError::not_found(format!("tenant {tenant}")))?;
        self.store.apply(&[put(
            Table::Compatibility,
            tenant.to_string(),
            &settings.to_record(),
        )])?;
        t.compatibility = settings.clone();
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> CapabilityId {
        CapabilityId::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_none() {
        for policy in Policy::ALL {
            assert_eq!(Policy::parse(policy.as_str()), Some(policy));
        }
        assert_eq!(Policy::parse("Semver"), None);
        assert_eq!(Policy::parse("strict"), None);
        assert_eq!(Policy::default(), Policy::Semver);
    }

    #[test]
    fn an_override_beats_the_tenant_default_which_beats_the_node_default() {
        let mut settings = CompatibilitySettings::default();
        assert_eq!(
            settings.policy_for(&id("echo"), Policy::None),
            (Policy::None, PolicySource::Node)
        );
        settings.default = Some(Policy::Immutable);
        assert_eq!(
            settings.policy_for(&id("echo"), Policy::None),
            (Policy::Immutable, PolicySource::Tenant)
        );
        settings.overrides.insert(id("echo"), Policy::None);
        assert_eq!(
            settings.policy_for(&id("echo"), Policy::Semver),
            (Policy::None, PolicySource::Override)
        );
        assert_eq!(
            settings.policy_for(&id("other"), Policy::Semver),
            (Policy::Immutable, PolicySource::Tenant)
        );
    }

    #[test]
    fn records_round_trip_and_refuse_invalid_ids() {
        let mut settings = CompatibilitySettings {
            default: Some(Policy::None),
            ..Default::default()
        };
        settings.overrides.insert(id("a.b"), Policy::Immutable);
        let back = CompatibilitySettings::from_record(settings.to_record());
        assert_eq!(back, Ok(settings));
        let mut bad = SettingsRecord {
            default: None,
            overrides: BTreeMap::new(),
        };
        bad.overrides.insert("Not An Id".into(), Policy::Semver);
        assert!(CompatibilitySettings::from_record(bad).is_err());
    }
}
