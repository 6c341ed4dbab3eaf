//! The compatibility policy at publish, on a real redb file: baselines, back-fills,
//! pre-releases, all-or-nothing registrations, events, and settings that survive reopen.
//! (The policy × change matrix runs over HTTP in `weft-cli/tests/serve_compatibility.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use weft_compat::Bump;
use weft_contract::{CapabilityId, Descriptor, Limits};
use weft_registry::{
    CompatibilitySettings, NodeId, Policy, PolicySource, ProviderId, ProviderRegistration,
    PublishStatus, RedbStore, Registry, RegistryError, RegistryOptions, TenantId, Verdict,
};

fn open(path: &Path, options: RegistryOptions) -> Registry {
    let store = RedbStore::open(&path.join("weft.redb")).unwrap();
    let registry = Registry::open(Arc::new(store), options).unwrap();
    registry.bootstrap().unwrap();
    registry
}

/// `id@version` whose input `text` is at most `max_len` long: raising it is a compatible
/// (minor) change, lowering it a breaking one, and the description is documentation.
fn desc(id: &str, version: &str, max_len: u32, description: &str) -> Descriptor {
    Descriptor::from_value(
        &json!({"id": id, "version": version, "title": id, "description": description,
                "input_schema": {"type": "object",
                                 "properties": {"text": {"type": "string", "maxLength": max_len}}}}),
        &Limits::default(),
    )
    .unwrap()
}

fn publish(
    registry: &Registry,
    provider: &str,
    descriptors: Vec<Descriptor>,
) -> Result<weft_registry::Registration, RegistryError> {
    registry.register_provider(
        &TenantId::default_tenant(),
        ProviderId::parse(provider).unwrap(),
        ProviderRegistration {
            node_id: NodeId::parse("n1").unwrap(),
            transport: None,
            descriptors,
        },
    )
}

fn refusals(
    result: Result<weft_registry::Registration, RegistryError>,
) -> Vec<weft_registry::Refusal> {
    match result {
        Err(RegistryError::BreakingChange { refusals }) => refusals,
        other => panic!("expected breaking_change, got {other:?}"),
    }
}

fn tenant() -> TenantId {
    TenantId::default_tenant()
}

#[test]
fn a_refused_registration_writes_nothing_and_names_every_refused_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    publish(
        &registry,
        "p1",
        vec![desc("a", "1.0.0", 10, "A."), desc("b", "1.0.0", 10, "B.")],
    )
    .unwrap();
    let before = registry.latest_event_id(&tenant()).unwrap();
    let refused = refusals(publish(
        &registry,
        "p1",
        vec![
            desc("a", "1.1.0", 20, "A."), // compatible: would be accepted alone
            desc("b", "1.1.0", 5, "B."),  // breaking in a minor
            desc("c", "1.0.0", 10, "C."), // new
            desc("a", "1.0.0", 5, "A."),  // same version, breaking
        ],
    ));
    let refused: Vec<(usize, String)> = refused
        .iter()
        .map(|r| (r.index, format!("{}@{}", r.id, r.version)))
        .collect();
    assert_eq!(refused, [(1, "b@1.1.0".into()), (3, "a@1.0.0".into())]);
    // Nothing of it landed: no new version, no event, the provider unchanged.
    assert!(
        registry
            .capability_version(&tenant(), "a", "1.1.0")
            .is_err()
    );
    assert!(
        registry
            .capability_version(&tenant(), "c", "1.0.0")
            .is_err()
    );
    assert_eq!(registry.latest_event_id(&tenant()).unwrap(), before);
    let provider = registry
        .provider(&tenant(), &ProviderId::parse("p1").unwrap())
        .unwrap();
    assert_eq!(provider.descriptors.len(), 2);
}

#[test]
fn the_descriptors_of_one_registration_are_judged_against_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    // 1.1.0 breaks 1.0.0, which lands in the same registration: refused.
    let refused = refusals(publish(
        &registry,
        "p1",
        vec![desc("a", "1.1.0", 5, "A."), desc("a", "1.0.0", 10, "A.")],
    ));
    assert_eq!(refused.len(), 2, "each side of the broken pair is named");
    assert_eq!(refused[0].check.successor, None);
    assert_eq!(
        refused[0]
            .check
            .baseline
            .as_ref()
            .map(|b| b.version.as_str()),
        Some("1.0.0")
    );
    assert_eq!(
        refused[1]
            .check
            .successor
            .as_ref()
            .map(|s| (s.successor.version.as_str(), s.verdict)),
        Some(("1.1.0", Verdict::Refused))
    );
    // Compatible together: accepted, and 1.1.0 reports its comparison with 1.0.0.
    let r = publish(
        &registry,
        "p1",
        vec![desc("a", "1.1.0", 20, "A."), desc("a", "1.0.0", 10, "A.")],
    )
    .unwrap();
    let check = r.descriptors[0].compatibility.as_ref().unwrap();
    assert_eq!(check.required_bump, Bump::Minor);
    assert_eq!(check.allowed_bump, Bump::Minor);
}

#[test]
fn a_back_filled_version_must_fit_below_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    publish(&registry, "p1", vec![desc("a", "1.0.0", 10, "A.")]).unwrap();
    publish(&registry, "p2", vec![desc("a", "1.2.0", 30, "A.")]).unwrap();
    // 1.1.0 at 40 fits above 1.0.0 but 1.2.0 (30) would then break it.
    let refused = refusals(publish(&registry, "p3", vec![desc("a", "1.1.0", 40, "A.")]));
    let check = &refused[0].check;
    assert_eq!(check.required_bump, Bump::Minor);
    assert_eq!(check.allowed_bump, Bump::Minor);
    let successor = check.successor.as_ref().unwrap();
    assert_eq!(successor.successor.version, "1.2.0");
    assert_eq!(
        (successor.required_bump, successor.allowed_bump),
        (Bump::Major, Bump::Minor)
    );
    // 1.1.0 at 20 fits between both.
    let r = publish(&registry, "p3", vec![desc("a", "1.1.0", 20, "A.")]).unwrap();
    let check = r.descriptors[0].compatibility.as_ref().unwrap();
    assert_eq!(check.verdict, Verdict::Allowed);
    assert_eq!(check.baseline.as_ref().unwrap().version, "1.0.0");
    assert_eq!(check.successor.as_ref().unwrap().verdict, Verdict::Allowed);
}

#[test]
fn pre_releases_and_zero_majors_follow_cargo() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    publish(&registry, "p1", vec![desc("a", "1.0.0", 10, "A.")]).unwrap();
    // A pre-release may change anything, and is reported against its lower neighbour.
    let r = publish(&registry, "p2", vec![desc("a", "1.1.0-beta.1", 1, "A.")]).unwrap();
    let check = r.descriptors[0].compatibility.as_ref().unwrap();
    assert_eq!(
        (check.required_bump, check.allowed_bump, check.verdict),
        (Bump::Major, Bump::Major, Verdict::Allowed)
    );
    // The release after it is held to 1.0.0, not to the beta.
    let refused = refusals(publish(&registry, "p3", vec![desc("a", "1.1.0", 1, "A.")]));
    assert_eq!(refused[0].check.baseline.as_ref().unwrap().version, "1.0.0");
    // Before 1.0, the minor is the major: 0.2.0 may break 0.1.0; 0.1.1 may not.
    publish(&registry, "p4", vec![desc("z", "0.1.0", 10, "Z.")]).unwrap();
    publish(&registry, "p5", vec![desc("z", "0.2.0", 1, "Z.")]).unwrap();
    let refused = refusals(publish(&registry, "p6", vec![desc("z", "0.1.1", 1, "Z.")]));
    assert_eq!(
        (
            refused[0].check.required_bump,
            refused[0].check.allowed_bump
        ),
        (Bump::Major, Bump::Minor)
    );
}

#[test]
fn the_dry_run_judges_like_a_publish_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    let first = registry
        .check_compatibility(&tenant(), &desc("a", "1.0.0", 10, "A."))
        .unwrap();
    assert_eq!(
        (first.verdict, first.baseline.clone(), first.required_bump),
        (Verdict::Allowed, None, Bump::None)
    );
    publish(&registry, "p1", vec![desc("a", "1.0.0", 10, "A.")]).unwrap();
    let events = registry.latest_event_id(&tenant()).unwrap();
    let check = registry
        .check_compatibility(&tenant(), &desc("a", "1.0.1", 20, "A."))
        .unwrap();
    assert_eq!(check.verdict, Verdict::Refused);
    assert_eq!(
        (check.policy, check.policy_source),
        (Policy::Semver, PolicySource::Node)
    );
    assert_eq!(
        (check.required_bump, check.allowed_bump),
        (Bump::Minor, Bump::Patch)
    );
    assert!(
        registry
            .capability_version(&tenant(), "a", "1.0.1")
            .is_err()
    );
    assert_eq!(registry.latest_event_id(&tenant()).unwrap(), events);
}

#[test]
fn settings_persist_and_the_override_limit_holds_at_its_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let options = || RegistryOptions {
        default_policy: Policy::None,
        max_policy_overrides: 2,
        ..RegistryOptions::default()
    };
    let registry = open(dir.path(), options());
    let id = |s: &str| CapabilityId::parse(s).unwrap();
    let mut settings = CompatibilitySettings {
        default: Some(Policy::Immutable),
        ..Default::default()
    };
    settings.overrides.insert(id("a"), Policy::Semver);
    settings.overrides.insert(id("b"), Policy::None);
    registry
        .set_compatibility(&tenant(), settings.clone())
        .unwrap();
    let mut three = settings.clone();
    three.overrides.insert(id("c"), Policy::None);
    assert!(matches!(
        registry.set_compatibility(&tenant(), three),
        Err(RegistryError::TooManyOverrides { count: 3, limit: 2 })
    ));
    assert!(matches!(
        registry.set_compatibility(&TenantId::parse("nope").unwrap(), settings.clone()),
        Err(RegistryError::NotFound { .. })
    ));
    drop(registry);
    let registry = open(dir.path(), options());
    assert_eq!(registry.compatibility(&tenant()).unwrap(), settings);
    // The tenant's default (immutable) now beats the node's (none).
    publish(&registry, "p1", vec![desc("x", "1.0.0", 10, "X.")]).unwrap();
    let refused = refusals(publish(&registry, "p1", vec![desc("x", "1.0.0", 10, "X!")]));
    assert_eq!(
        (refused[0].check.policy, refused[0].check.policy_source),
        (Policy::Immutable, PolicySource::Tenant)
    );
}

#[test]
fn under_none_everything_lands_and_the_findings_are_recorded_in_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(
        dir.path(),
        RegistryOptions {
            default_policy: Policy::None,
            ..RegistryOptions::default()
        },
    );
    publish(&registry, "p1", vec![desc("a", "1.0.0", 10, "A.")]).unwrap();
    let after = registry.latest_event_id(&tenant()).unwrap();
    let r = publish(&registry, "p1", vec![desc("a", "1.0.0", 5, "A.")]).unwrap();
    assert_eq!(r.descriptors[0].status, PublishStatus::Revised);
    let check = r.descriptors[0].compatibility.as_ref().unwrap();
    assert_eq!(
        (check.verdict, check.required_bump, check.allowed_bump),
        (Verdict::Allowed, Bump::Major, Bump::Major)
    );
    let events = registry.events_after(&tenant(), after, 10).unwrap();
    let revised = events
        .iter()
        .find(|e| e.kind == "capability.revised")
        .unwrap();
    let recorded = &revised.data["compatibility"];
    assert_eq!(recorded["policy"], "none");
    assert_eq!(recorded["required_bump"], "major");
    assert_eq!(recorded["findings"][0]["effect"], "breaking");
    assert_eq!(recorded["baseline"]["version"], "1.0.0");
}
