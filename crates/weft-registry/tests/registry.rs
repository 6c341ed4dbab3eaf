//! The registry over a real redb file: auth, publishing, revisions, discovery, events,
//! and persistence across reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use weft_contract::{Descriptor, Limits};
use weft_registry::{
    CapabilityFilter, NodeId, ProviderId, ProviderRegistration, PublishStatus, RedbStore, Registry,
    RegistryError, RegistryOptions, Scope, TenantId,
};

fn open(path: &Path, options: RegistryOptions) -> Registry {
    let store = RedbStore::open(&path.join("weft.redb")).unwrap();
    Registry::open(Arc::new(store), options).unwrap()
}

fn descriptor(id: &str, version: &str, description: &str) -> Descriptor {
    Descriptor::from_value(
        &json!({"id": id, "version": version, "title": id, "description": description,
                "input_schema": {"type": "object"}}),
        &Limits::default(),
    )
    .unwrap()
}

fn registration(node: &str, descriptors: Vec<Descriptor>) -> ProviderRegistration {
    ProviderRegistration {
        node_id: NodeId::parse(node).unwrap(),
        transport: None,
        descriptors,
    }
}

fn pid(s: &str) -> ProviderId {
    ProviderId::parse(s).unwrap()
}

#[test]
fn bootstrap_creates_one_admin_and_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    let secret = registry.bootstrap().unwrap().unwrap();
    assert!(secret.starts_with("weft_"));
    assert!(registry.bootstrap().unwrap().is_none());
    let principal = registry.authenticate(&secret).unwrap();
    assert_eq!(principal.tenant, TenantId::default_tenant());
    assert!(principal.is_operator());
    assert!(principal.has(Scope::Publish));
    assert!(registry.authenticate("weft_nope").is_none());
    drop(registry);
    // Reopened: the same secret still works, and no second admin is minted.
    let registry = open(dir.path(), RegistryOptions::default());
    assert!(registry.bootstrap().unwrap().is_none());
    assert!(registry.authenticate(&secret).is_some());
}

#[test]
fn tokens_are_scoped_tenant_bound_and_revocable() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    registry.bootstrap().unwrap();
    let acme = TenantId::parse("acme").unwrap();
    registry.create_tenant(acme.clone(), "Acme".into()).unwrap();
    assert!(matches!(
        registry.create_tenant(acme.clone(), "again".into()),
        Err(RegistryError::Conflict(_))
    ));
    let (token, secret) = registry
        .create_token(&acme, "reader".into(), vec![Scope::Read])
        .unwrap();
    let p = registry.authenticate(&secret).unwrap();
    assert_eq!(p.tenant, acme);
    assert!(p.has(Scope::Read) && !p.has(Scope::Publish) && !p.is_operator());
    // Another tenant cannot see or revoke it.
    let default = TenantId::default_tenant();
    assert!(matches!(
        registry.revoke_token(&default, &token.id),
        Err(RegistryError::NotFound { .. })
    ));
    assert!(
        registry
            .list_tokens(&default, None, 100)
            .unwrap()
            .items
            .iter()
            .all(|t| t.id != token.id)
    );
    let revoked = registry.revoke_token(&acme, &token.id).unwrap();
    assert!(revoked.revoked_at.is_some());
    assert!(registry.authenticate(&secret).is_none());
    // Revoking twice is fine and keeps the first time.
    assert_eq!(
        registry.revoke_token(&acme, &token.id).unwrap().revoked_at,
        revoked.revoked_at
    );
    assert!(registry.create_token(&acme, "none".into(), vec![]).is_err());
    drop(registry);
    let registry = open(dir.path(), RegistryOptions::default());
    assert!(
        registry.authenticate(&secret).is_none(),
        "revocation survives restart"
    );
}

#[test]
fn publishing_tracks_revisions_per_id_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    registry.bootstrap().unwrap();
    let t = TenantId::default_tenant();
    let v1 = descriptor("echo", "1.0.0", "Echo.");
    let r = registry
        .register_provider(&t, pid("p1"), registration("n1", vec![v1.clone()]))
        .unwrap();
    assert!(r.created && r.changed);
    assert_eq!(r.descriptors[0].status, PublishStatus::New);
    // Identical content: a no-op.
    let r = registry
        .register_provider(&t, pid("p1"), registration("n1", vec![v1.clone()]))
        .unwrap();
    assert!(!r.created && !r.changed);
    assert_eq!(r.descriptors[0].status, PublishStatus::Unchanged);
    // Different content under the same id@version: a new revision, history kept.
    let v1b = descriptor("echo", "1.0.0", "Echo, better.");
    let r = registry
        .register_provider(&t, pid("p1"), registration("n1", vec![v1b.clone()]))
        .unwrap();
    assert_eq!(r.descriptors[0].status, PublishStatus::Revised);
    let detail = registry.capability_version(&t, "echo", "1.0.0").unwrap();
    assert_eq!(detail.record.current, v1b.revision().to_string());
    let history: Vec<&str> = detail
        .record
        .history
        .iter()
        .map(|h| h.revision.as_str())
        .collect();
    assert_eq!(history, [v1.revision().as_str(), v1b.revision().as_str()]);
    assert_eq!(detail.providers.len(), 1);
    // Duplicates in one registration are refused.
    assert!(matches!(
        registry.register_provider(
            &t,
            pid("p2"),
            registration("n1", vec![v1.clone(), v1b.clone()])
        ),
        Err(RegistryError::Invalid(_))
    ));
    drop(registry);
    let registry = open(dir.path(), RegistryOptions::default());
    let detail = registry.capability_version(&t, "echo", "1.0.0").unwrap();
    assert_eq!(detail.descriptor.revision(), v1b.revision());
    assert_eq!(detail.record.history.len(), 2);
    assert_eq!(detail.providers[0].node_id.as_str(), "n1");
}

#[test]
fn listing_filters_and_paginates_in_a_fixed_order() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    registry.bootstrap().unwrap();
    let t = TenantId::default_tenant();
    for (provider, node, items) in [
        (
            "p1",
            "n1",
            vec![("echo", "1.0.0"), ("echo", "1.10.0"), ("echo", "1.2.0")],
        ),
        (
            "p2",
            "n2",
            vec![("stt.realtime", "0.1.0"), ("alpha", "2.0.0")],
        ),
    ] {
        let ds = items
            .into_iter()
            .map(|(id, v)| descriptor(id, v, &format!("{id} does things")))
            .collect();
        registry
            .register_provider(&t, pid(provider), registration(node, ds))
            .unwrap();
    }
    let all = |filter: &CapabilityFilter| {
        let mut out = Vec::new();
        let mut cursor = None;
        loop {
            let page = registry
                .list_capabilities(&t, filter, cursor.as_deref(), 2)
                .unwrap();
            assert!(page.items.len() <= 2);
            out.extend(page.items.iter().map(|d| d.qualified_id().to_string()));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        out
    };
    assert_eq!(
        all(&CapabilityFilter::default()),
        [
            "alpha@2.0.0",
            "echo@1.0.0",
            "echo@1.2.0",
            "echo@1.10.0",
            "stt.realtime@0.1.0"
        ]
    );
    let by_node = CapabilityFilter {
        node_id: Some(NodeId::parse("n2").unwrap()),
        ..Default::default()
    };
    assert_eq!(all(&by_node), ["alpha@2.0.0", "stt.realtime@0.1.0"]);
    let by_id = CapabilityFilter {
        id: Some("echo".into()),
        ..Default::default()
    };
    assert_eq!(all(&by_id), ["echo@1.0.0", "echo@1.2.0", "echo@1.10.0"]);
    let by_q = CapabilityFilter {
        q: Some("STT.REAL".into()),
        ..Default::default()
    };
    assert_eq!(all(&by_q), ["stt.realtime@0.1.0"]);
    let by_provider = CapabilityFilter {
        provider_id: Some(pid("p1")),
        ..Default::default()
    };
    assert_eq!(all(&by_provider).len(), 3);
    assert!(
        registry
            .list_capabilities(&t, &CapabilityFilter::default(), Some("garbage!"), 2)
            .is_err()
    );

    let nodes = registry.list_nodes(&t, None, 10).unwrap();
    assert_eq!(nodes.items.len(), 2);
    assert_eq!(nodes.items[0].tags, ["echo"]);
    assert_eq!(
        registry
            .node(&t, &NodeId::parse("n2").unwrap())
            .unwrap()
            .tags,
        ["alpha", "stt.realtime"]
    );

    // Unregistering hides what only that provider served; history stays.
    assert!(registry.unregister_provider(&t, &pid("p2")).unwrap());
    assert!(
        !registry.unregister_provider(&t, &pid("p2")).unwrap(),
        "idempotent"
    );
    assert_eq!(all(&CapabilityFilter::default()).len(), 3);
    assert!(registry.node(&t, &NodeId::parse("n2").unwrap()).is_err());
    assert!(
        registry
            .capability_version(&t, "alpha", "2.0.0")
            .unwrap()
            .providers
            .is_empty()
    );
}

#[test]
fn re_registering_moves_what_a_provider_serves_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let t = TenantId::default_tenant();
    let ids = |registry: &Registry, node: &str| {
        let filter = CapabilityFilter {
            node_id: Some(NodeId::parse(node).unwrap()),
            ..Default::default()
        };
        registry
            .list_capabilities(&t, &filter, None, 100)
            .unwrap()
            .items
            .iter()
            .map(|d| d.qualified_id().to_string())
            .collect::<Vec<_>>()
    };
    {
        let registry = open(dir.path(), RegistryOptions::default());
        registry.bootstrap().unwrap();
        let ds = |names: &[&str]| names.iter().map(|n| descriptor(n, "1.0.0", n)).collect();
        registry
            .register_provider(&t, pid("p1"), registration("n1", ds(&["a", "b"])))
            .unwrap();
        registry
            .register_provider(&t, pid("p2"), registration("n1", ds(&["b"])))
            .unwrap();
        assert_eq!(ids(&registry, "n1"), ["a@1.0.0", "b@1.0.0"]);
        // p1 moves to n2 and drops `a`: n1 keeps only what p2 serves.
        registry
            .register_provider(&t, pid("p1"), registration("n2", ds(&["b", "c"])))
            .unwrap();
        assert_eq!(ids(&registry, "n1"), ["b@1.0.0"]);
        assert_eq!(ids(&registry, "n2"), ["b@1.0.0", "c@1.0.0"]);
        assert!(
            registry
                .capability_version(&t, "a", "1.0.0")
                .unwrap()
                .providers
                .is_empty()
        );
        assert!(
            registry
                .check_node(&t, &NodeId::parse("n2").unwrap())
                .is_ok()
        );
        assert!(matches!(
            registry.check_node(&t, &NodeId::parse("n3").unwrap()),
            Err(RegistryError::NotFound { .. })
        ));
    }
    // The index is rebuilt from the store.
    let registry = open(dir.path(), RegistryOptions::default());
    assert_eq!(ids(&registry, "n2"), ["b@1.0.0", "c@1.0.0"]);
    assert!(registry.unregister_provider(&t, &pid("p1")).unwrap());
    assert!(ids(&registry, "n1") == ["b@1.0.0"]);
    assert!(
        registry
            .check_node(&t, &NodeId::parse("n2").unwrap())
            .is_err()
    );
}

#[test]
fn tenants_never_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let registry = open(dir.path(), RegistryOptions::default());
    registry.bootstrap().unwrap();
    let a = TenantId::default_tenant();
    let b = TenantId::parse("other").unwrap();
    registry.create_tenant(b.clone(), "Other".into()).unwrap();
    registry
        .register_provider(
            &a,
            pid("p"),
            registration("n", vec![descriptor("secret", "1.0.0", "x")]),
        )
        .unwrap();
    assert!(
        registry
            .list_capabilities(&b, &CapabilityFilter::default(), None, 10)
            .unwrap()
            .items
            .is_empty()
    );
    assert!(matches!(
        registry.capability_versions(&b, "secret"),
        Err(RegistryError::NotFound { .. })
    ));
    assert!(matches!(
        registry.provider(&b, &pid("p")),
        Err(RegistryError::NotFound { .. })
    ));
    assert!(registry.list_nodes(&b, None, 10).unwrap().items.is_empty());
    assert!(registry.events_after(&b, 0, 10).unwrap().is_empty());
}

#[test]
fn the_change_feed_resumes_exactly_and_reports_what_retention_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let options = RegistryOptions {
        event_retention: 5,
        ..Default::default()
    };
    let registry = open(dir.path(), options.clone());
    registry.bootstrap().unwrap();
    let t = TenantId::default_tenant();
    let mut rx = registry.subscribe();
    for i in 0..4 {
        // Each registration of a new provider with a new descriptor: 2 events.
        registry
            .register_provider(
                &t,
                pid(&format!("p{i}")),
                registration("n", vec![descriptor(&format!("c{i}"), "1.0.0", "x")]),
            )
            .unwrap();
    }
    assert_eq!(registry.latest_event_id(&t).unwrap(), 8);
    let live: Vec<u64> = (0..8).map(|_| rx.try_recv().unwrap().event.id).collect();
    assert_eq!(live, (1..=8).collect::<Vec<_>>());
    // Retention keeps 5: events 4..=8.
    let kept: Vec<u64> = registry
        .events_after(&t, 3, 100)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(kept, [4, 5, 6, 7, 8]);
    let tail: Vec<u64> = registry
        .events_after(&t, 6, 100)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(tail, [7, 8]);
    assert!(registry.events_after(&t, 8, 100).unwrap().is_empty());
    assert!(matches!(
        registry.events_after(&t, 2, 100),
        Err(RegistryError::EventsGone {
            requested: 2,
            oldest: 4
        })
    ));
    let first = &registry.events_after(&t, 3, 1).unwrap()[0];
    assert_eq!(first.kind, "provider.registered");
    drop(registry);
    let registry = open(dir.path(), options);
    registry
        .register_provider(
            &t,
            pid("late"),
            registration("n", vec![descriptor("late", "1.0.0", "x")]),
        )
        .unwrap();
    let after: Vec<u64> = registry
        .events_after(&t, 8, 100)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(after, [9, 10], "ids continue after restart");
    assert!(
        registry.events_after(&t, 4, 100).is_err(),
        "retention applied across restart"
    );
}

#[test]
fn idempotent_responses_expire() {
    let dir = tempfile::tempdir().unwrap();
    let options = RegistryOptions {
        idempotency_ttl: std::time::Duration::from_secs(0),
        ..Default::default()
    };
    let registry = open(dir.path(), options);
    registry.bootstrap().unwrap();
    let t = TenantId::default_tenant();
    let record = weft_registry::model::IdempotencyRecord {
        request_sha256: "x".into(),
        status: 201,
        body: "{}".into(),
        stored_at_unix: 0,
    };
    registry
        .store_idempotent_response(&t, "PUT /v1/providers/p", "k1", &record)
        .unwrap();
    assert!(
        registry
            .idempotent_response(&t, "PUT /v1/providers/p", "k1")
            .unwrap()
            .is_none()
    );
}
