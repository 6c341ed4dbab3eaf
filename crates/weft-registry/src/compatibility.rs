//! Compatibility at publish: which published versions a descriptor is compared with, what
//! the policy allows, and the verdict (`docs/compatibility.md`, "Policy at publish").
//!
//! The rules themselves (what changed, what it needs) are `weft-compat`'s; this module only
//! picks the baseline and applies the [`Policy`].

use std::collections::BTreeMap;

use serde::Serialize;
use weft_compat::{Bump, Finding, bump_between, compare};
use weft_contract::{CapabilityVersion, Descriptor};

use crate::error::RegistryError;
use crate::ids::TenantId;
use crate::policy::{Policy, PolicySource};
use crate::registry::{Registry, TenantState, VersionKey};

/// Whether a policy lets a descriptor be published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Publishing it is allowed.
    Allowed,
    /// Publishing it would be refused with `breaking_change`.
    Refused,
}

impl Verdict {
    fn of(allowed: bool) -> Self {
        if allowed {
            Verdict::Allowed
        } else {
            Verdict::Refused
        }
    }
}

/// A published `id@version`, at the revision a descriptor was compared with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Baseline {
    /// Capability id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its current revision, the one compared with.
    pub revision: String,
}

impl Baseline {
    fn of(descriptor: &Descriptor) -> Self {
        Self {
            id: descriptor.id().to_string(),
            version: descriptor.version().to_string(),
            revision: descriptor.revision().to_string(),
        }
    }
}

/// When a version is published below an existing one of the same major (a back-fill): the
/// comparison of the new descriptor with the next higher version, which must stay allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuccessorCheck {
    /// Whether the step from the new version to this one is allowed.
    pub verdict: Verdict,
    /// The next higher published version, at its current revision.
    pub successor: Baseline,
    /// The bump the changes from the new descriptor to the successor need.
    pub required_bump: Bump,
    /// The largest bump the step between the two version numbers allows.
    pub allowed_bump: Bump,
    /// Every change from the new descriptor to the successor.
    pub findings: Vec<Finding>,
}

/// What publishing one descriptor would do to the contract, and whether the policy allows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CompatibilityCheck {
    /// `refused` when the baseline or the successor comparison breaks the policy.
    pub verdict: Verdict,
    /// The policy applied.
    pub policy: Policy,
    /// Where that policy came from.
    pub policy_source: PolicySource,
    /// What the descriptor was compared with: the current revision of the same `id@version`
    /// when it is re-published, else the nearest lower published version; `null` for the
    /// first version of a capability.
    pub baseline: Option<Baseline>,
    /// The smallest bump the changes from the baseline need (`none` without a baseline).
    pub required_bump: Bump,
    /// The largest bump the policy allows from the baseline to this version.
    pub allowed_bump: Bump,
    /// Every change from the baseline, in descriptor order.
    pub findings: Vec<Finding>,
    /// The comparison with the next higher version, for a back-filled version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub successor: Option<SuccessorCheck>,
}

impl CompatibilityCheck {
    /// Whether anything was compared (so the check is worth reporting).
    pub fn compared(&self) -> bool {
        self.baseline.is_some() || self.successor.is_some()
    }

    /// Whether the policy allows publishing.
    pub fn allowed(&self) -> bool {
        self.verdict == Verdict::Allowed
    }
}

/// One descriptor of a registration that the policy refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// Its position in the registration's descriptor list.
    pub index: usize,
    /// Capability id.
    pub id: String,
    /// Version.
    pub version: String,
    /// Why.
    #[serde(flatten)]
    pub check: CompatibilityCheck,
}

/// The published descriptors a new one is compared with.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Neighbours<'a> {
    /// The current revision of the same `id@version`, when it is re-published.
    pub(crate) same: Option<&'a Descriptor>,
    /// The nearest lower version (see [`nearest_versions`]).
    pub(crate) lower: Option<&'a Descriptor>,
    /// The nearest higher version (see [`nearest_versions`]).
    pub(crate) higher: Option<&'a Descriptor>,
}

/// Among the other published versions of one capability (`known`, in any order, without
/// `version` itself), the nearest lower and nearest higher version a new `version` is
/// checked against.
///
/// A release compares with releases only: pre-releases promise nothing to the releases
/// around them. A pre-release compares with the nearest lower version of any kind, for the
/// record, and binds no higher version.
pub(crate) fn nearest_versions<'a>(
    known: impl IntoIterator<Item = &'a CapabilityVersion>,
    version: &CapabilityVersion,
) -> (Option<&'a CapabilityVersion>, Option<&'a CapabilityVersion>) {
    let release = !version.is_prerelease();
    let mut lower: Option<&CapabilityVersion> = None;
    let mut higher: Option<&CapabilityVersion> = None;
    for candidate in known {
        if release && candidate.is_prerelease() {
            continue;
        }
        if candidate < version && lower.is_none_or(|l| candidate > l) {
            lower = Some(candidate);
        }
        if release && candidate > version && higher.is_none_or(|h| candidate < h) {
            higher = Some(candidate);
        }
    }
    (lower, higher)
}

/// The largest bump `policy` allows for publishing `version` over an earlier version
/// `earlier` — or, when `earlier` is `None`, over the current revision of the same
/// `id@version` (a re-publish).
pub(crate) fn allowed_bump(
    policy: Policy,
    earlier: Option<&CapabilityVersion>,
    version: &CapabilityVersion,
) -> Bump {
    match (policy, earlier) {
        (Policy::None, _) => Bump::Major,
        // Re-publishing an `id@version`: documentation only, or nothing at all.
        (Policy::Semver, None) => Bump::Patch,
        (Policy::Immutable, None) => Bump::None,
        // Pre-releases promise nothing to the versions around them.
        (_, Some(_)) if version.is_prerelease() => Bump::Major,
        (_, Some(earlier)) => bump_between(earlier, version).unwrap_or(Bump::None),
    }
}

/// Judges publishing `new` under `policy` against its published `neighbours`.
pub(crate) fn judge(
    policy: Policy,
    policy_source: PolicySource,
    new: &Descriptor,
    neighbours: Neighbours<'_>,
) -> CompatibilityCheck {
    let (baseline, allowed) = match (neighbours.same, neighbours.lower) {
        (Some(same), _) => (Some(same), allowed_bump(policy, None, new.version())),
        (None, Some(lower)) => (
            Some(lower),
            allowed_bump(policy, Some(lower.version()), new.version()),
        ),
        (None, None) => (None, Bump::Major),
    };
    let (required, findings) = match baseline {
        Some(old) => {
            let report = compare(old, new);
            (report.required_bump, report.findings)
        }
        None => (Bump::None, Vec::new()),
    };
    let successor = match (neighbours.same, neighbours.higher) {
        (None, Some(higher)) => {
            let report = compare(new, higher);
            let allowed = match policy {
                Policy::None => Bump::Major,
                _ => bump_between(new.version(), higher.version()).unwrap_or(Bump::None),
            };
            Some(SuccessorCheck {
                verdict: Verdict::of(report.required_bump <= allowed),
                successor: Baseline::of(higher),
                required_bump: report.required_bump,
                allowed_bump: allowed,
                findings: report.findings,
            })
        }
        _ => None,
    };
    let successor_allowed = successor
        .as_ref()
        .is_none_or(|s| s.verdict == Verdict::Allowed);
    CompatibilityCheck {
        verdict: Verdict::of(required <= allowed && successor_allowed),
        policy,
        policy_source,
        baseline: baseline.map(Baseline::of),
        required_bump: required,
        allowed_bump: allowed,
        findings,
        successor,
    }
}

impl Registry {
    /// Judges publishing `descriptor` in `tenant` under the policy that applies to it, as
    /// `register_provider` would, without writing anything (the dry run).
    pub fn check_compatibility(
        &self,
        tenant: &TenantId,
        descriptor: &Descriptor,
    ) -> Result<CompatibilityCheck, RegistryError> {
        let state = self.read();
        let t = state
            .tenants
            .get(tenant)
            .ok_or_else(|| RegistryError::not_found(format!("tenant {tenant}")))?;
        Ok(assess(t, self.options.default_policy, descriptor, &[]))
    }
}

/// Judges publishing `descriptor` against what tenant `t` has published, counting the
/// other descriptors of the same registration (`batch`) as published too: they land
/// together, so each must fit the versions the others create or replace.
pub(crate) fn assess(
    t: &TenantState,
    node_default: Policy,
    descriptor: &Descriptor,
    batch: &[Descriptor],
) -> CompatibilityCheck {
    let (policy, source) = t.compatibility.policy_for(descriptor.id(), node_default);
    let key = (descriptor.id().clone(), descriptor.version().clone());
    let same_id = |((id, _), _): &(&VersionKey, _)| id == descriptor.id();
    // Every other version of the id, the registration's own content winning.
    let mut others: BTreeMap<&CapabilityVersion, &Descriptor> = BTreeMap::new();
    let below = t.versions.range(..key.clone()).rev().take_while(same_id);
    let above = t.versions.range(key.clone()..).take_while(same_id);
    for ((_, version), v) in below.chain(above) {
        others.insert(version, &v.current);
    }
    for other in batch.iter().filter(|d| d.id() == descriptor.id()) {
        others.insert(other.version(), other);
    }
    others.remove(descriptor.version());
    let (lower, higher) = nearest_versions(others.keys().copied(), descriptor.version());
    let neighbours = Neighbours {
        same: t.versions.get(&key).map(|v| &*v.current),
        lower: lower.and_then(|v| others.get(v).copied()),
        higher: higher.and_then(|v| others.get(v).copied()),
    };
    judge(policy, source, descriptor, neighbours)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> CapabilityVersion {
        CapabilityVersion::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn nearest(known: &[&str], version: &str) -> (Option<String>, Option<String>) {
        let known: Vec<CapabilityVersion> = known.iter().map(|k| v(k)).collect();
        let (lower, higher) = nearest_versions(&known, &v(version));
        (
            lower.map(ToString::to_string),
            higher.map(ToString::to_string),
        )
    }

    fn some(text: &str) -> Option<String> {
        Some(text.to_owned())
    }

    #[test]
    fn the_first_version_has_no_baseline() {
        assert_eq!(nearest(&[], "1.0.0"), (None, None));
    }

    #[test]
    fn a_new_highest_version_compares_with_the_highest_below_it() {
        let known = ["1.0.0", "1.2.0", "1.1.0", "0.9.0"];
        assert_eq!(nearest(&known, "1.3.0"), (some("1.2.0"), None));
        assert_eq!(nearest(&known, "1.2.1"), (some("1.2.0"), None));
    }

    #[test]
    fn a_new_major_compares_with_the_previous_major_for_the_record() {
        // allowed_bump then makes any change allowed: the step is a major.
        assert_eq!(nearest(&["1.4.2", "1.0.0"], "2.0.0"), (some("1.4.2"), None));
    }

    #[test]
    fn a_back_filled_version_has_both_neighbours() {
        let known = ["1.0.0", "1.2.0", "2.0.0"];
        assert_eq!(nearest(&known, "1.1.0"), (some("1.0.0"), some("1.2.0")));
        assert_eq!(nearest(&known, "1.0.5"), (some("1.0.0"), some("1.2.0")));
        // Below every version: only the successor binds it.
        assert_eq!(nearest(&known, "0.5.0"), (None, some("1.0.0")));
    }

    #[test]
    fn releases_skip_pre_releases_on_both_sides() {
        let known = ["1.0.0", "1.1.0-beta.1", "1.1.0-beta.2", "1.2.0-rc.1"];
        assert_eq!(nearest(&known, "1.1.0"), (some("1.0.0"), None));
        assert_eq!(nearest(&known, "1.0.1"), (some("1.0.0"), None));
    }

    #[test]
    fn a_pre_release_compares_with_the_nearest_lower_version_of_any_kind() {
        let known = ["1.0.0", "1.1.0-beta.1", "1.1.0"];
        assert_eq!(
            nearest(&known, "1.1.0-beta.2"),
            (some("1.1.0-beta.1"), None)
        );
        assert_eq!(nearest(&known, "1.1.0-alpha"), (some("1.0.0"), None));
        assert_eq!(nearest(&known, "0.1.0-alpha"), (None, None));
    }

    #[test]
    fn the_policy_decides_the_allowed_bump() {
        let one = v("1.0.0");
        assert_eq!(allowed_bump(Policy::Semver, None, &one), Bump::Patch);
        assert_eq!(allowed_bump(Policy::Immutable, None, &one), Bump::None);
        assert_eq!(allowed_bump(Policy::None, None, &one), Bump::Major);
        for policy in [Policy::Semver, Policy::Immutable] {
            let from_one = |to: &str| allowed_bump(policy, Some(&one), &v(to));
            assert_eq!(from_one("1.0.1"), Bump::Patch);
            assert_eq!(from_one("1.1.0"), Bump::Minor);
            assert_eq!(from_one("2.0.0"), Bump::Major);
            assert_eq!(from_one("1.1.0-beta.1"), Bump::Major);
            // Before 1.0 the minor is the major, as in Cargo.
            assert_eq!(
                allowed_bump(policy, Some(&v("0.1.0")), &v("0.2.0")),
                Bump::Major
            );
            assert_eq!(
                allowed_bump(policy, Some(&v("0.1.0")), &v("0.1.1")),
                Bump::Minor
            );
        }
        assert_eq!(
            allowed_bump(Policy::None, Some(&one), &v("1.0.1")),
            Bump::Major
        );
    }
}
