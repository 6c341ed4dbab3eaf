//! Registering and unregistering providers, and the revision histories that follows.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use weft_contract::Descriptor;

use crate::compatibility::{CompatibilityCheck, Refusal, assess};
use crate::error::RegistryError;
use crate::ids::{NodeId, ProviderId, TenantId};
use crate::model::{EventRecord, ProviderRecord, RevisionEntry, ServedDescriptor, VersionRecord};
use crate::registry::{Announcement, Registry, TenantState, VersionState, put};
use crate::store::{Table, Write};
use crate::util::{event_key, now_rfc3339, tenant_key};

/// What publishing did to one `id@version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PublishStatus {
    /// The `id@version` was not known before.
    New,
    /// Known, and this content is a new (or different) current revision.
    Revised,
    /// Known with exactly this content: nothing changed.
    Unchanged,
}

/// One descriptor's outcome in a registration.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DescriptorOutcome {
    /// Capability id.
    pub id: String,
    /// Contract version.
    pub version: String,
    /// The revision now current.
    pub revision: String,
    /// What happened.
    pub status: PublishStatus,
    /// The compatibility check, when the descriptor was compared with a published one
    /// (absent for `unchanged` and for a capability's first version).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<CompatibilityCheck>,
}

/// The result of `register_provider`.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The provider as stored now.
    pub record: ProviderRecord,
    /// Whether the provider was new.
    pub created: bool,
    /// Whether anything was written at all.
    pub changed: bool,
    /// Per-descriptor outcomes, in request order.
    pub descriptors: Vec<DescriptorOutcome>,
}

/// What a provider registration carries.
#[derive(Debug, Clone)]
pub struct ProviderRegistration {
    /// The node the provider runs on.
    pub node_id: NodeId,
    /// How to reach it; opaque to the registry.
    pub transport: Option<serde_json::Value>,
    /// The descriptors it serves (already checked by the contract core).
    pub descriptors: Vec<Descriptor>,
}

/// Events accumulated for one batch, committed to memory only after the store accepted it.
struct EventBatch {
    next: u64,
    oldest: u64,
    records: Vec<EventRecord>,
}

impl EventBatch {
    fn new(tenant: &TenantState) -> Self {
        Self {
            next: tenant.next_event,
            oldest: tenant.oldest_event,
            records: Vec::new(),
        }
    }

    fn push(&mut self, kind: &str, data: serde_json::Value) {
        self.records.push(EventRecord {
            id: self.next,
            kind: kind.to_owned(),
            at: now_rfc3339(),
            data,
        });
        self.next += 1;
    }

    /// Puts the new events and deletes those beyond `retention`.
    fn writes(&mut self, tenant: &TenantId, retention: u64, writes: &mut Vec<Write>) {
        for record in &self.records {
            writes.push(put(
                Table::Events,
                event_key(tenant.as_str(), record.id),
                record,
            ));
        }
        while self.next - self.oldest > retention.max(1) {
            writes.push(Write::Delete {
                table: Table::Events,
                key: event_key(tenant.as_str(), self.oldest),
            });
            self.oldest += 1;
        }
    }
}

impl Registry {
    /// Registers (or re-registers) a provider with the descriptors it serves.
    ///
    /// Publishing an `id@version` with identical content is a no-op; with different content
    /// it becomes the new current revision of that `id@version`, and the old one stays in
    /// its history. Identity stays separate: the provider id names who serves, the node id
    /// where, the descriptor `id@version` what.
    ///
    /// Every new or changed descriptor is judged by the tenant's compatibility policy
    /// (`compatibility::assess`); if any is refused the whole registration is refused with
    /// [`RegistryError::BreakingChange`] and nothing is written.
    pub fn register_provider(
        &self,
        tenant: &TenantId,
        provider: ProviderId,
        registration: ProviderRegistration,
    ) -> Result<Registration, RegistryError> {
        let mut seen = BTreeSet::new();
        for d in &registration.descriptors {
            if !seen.insert(d.qualified_id()) {
                return Err(RegistryError::Invalid(format!(
                    "descriptor {} appears more than once",
                    d.qualified_id()
                )));
            }
        }
        let mut state = self.write();
        let tenant_state = state
            .tenants
            .get_mut(tenant)
            .ok_or_else(|| RegistryError::not_found(format!("tenant {tenant}")))?;
        let mut checks = Vec::with_capacity(registration.descriptors.len());
        let mut refusals = Vec::new();
        for (index, d) in registration.descriptors.iter().enumerate() {
            let key = (d.id().clone(), d.version().clone());
            let unchanged = tenant_state
                .versions
                .get(&key)
                .is_some_and(|v| v.record.current == d.revision().as_str());
            if unchanged {
                checks.push(None);
                continue;
            }
            let check = assess(
                tenant_state,
                self.options.default_policy,
                d,
                &registration.descriptors,
            );
            if !check.allowed() {
                refusals.push(Refusal {
                    index,
                    id: d.id().to_string(),
                    version: d.version().to_string(),
                    check: check.clone(),
                });
            }
            checks.push(check.compared().then_some(check));
        }
        if !refusals.is_empty() {
            return Err(RegistryError::BreakingChange { refusals });
        }
        let now = now_rfc3339();
        let existing = tenant_state.providers.get(&provider).cloned();
        let mut writes = Vec::new();
        let mut events = EventBatch::new(tenant_state);
        let mut outcomes = Vec::new();
        let mut new_versions = Vec::new();
        for (d, check) in registration.descriptors.iter().zip(checks) {
            let key = (d.id().clone(), d.version().clone());
            let revision = d.revision().to_string();
            let (status, record) = match tenant_state.versions.get(&key) {
                None => (
                    PublishStatus::New,
                    VersionRecord {
                        id: d.id().to_string(),
                        version: d.version().to_string(),
                        current: revision.clone(),
                        history: vec![RevisionEntry {
                            revision: revision.clone(),
                            published_at: now.clone(),
                        }],
                    },
                ),
                Some(v) if v.record.current == revision => {
                    (PublishStatus::Unchanged, v.record.clone())
                }
                Some(v) => {
                    let mut record = v.record.clone();
                    record.current = revision.clone();
                    if !record.history.iter().any(|h| h.revision == revision) {
                        record.history.push(RevisionEntry {
                            revision: revision.clone(),
                            published_at: now.clone(),
                        });
                    }
                    (PublishStatus::Revised, record)
                }
            };
            if status != PublishStatus::Unchanged {
                writes.push(Write::Put {
                    table: Table::Contents,
                    key: revision.clone(),
                    value: d.canonical_json(),
                });
                writes.push(put(
                    Table::Versions,
                    tenant_key(tenant.as_str(), &d.qualified_id().to_string()),
                    &record,
                ));
                let previous = tenant_state
                    .versions
                    .get(&key)
                    .map(|v| v.record.current.clone());
                let mut data = json!({"id": record.id, "version": record.version,
                    "revision": revision, "previous_revision": previous, "provider_id": provider});
                if let (Some(check), Some(fields)) = (&check, data.as_object_mut()) {
                    // Serializing a plain record cannot fail.
                    if let Ok(value) = serde_json::to_value(check) {
                        fields.insert("compatibility".into(), value);
                    }
                }
                events.push(
                    if status == PublishStatus::New {
                        "capability.published"
                    } else {
                        "capability.revised"
                    },
                    data,
                );
                new_versions.push((key, record, Arc::new(d.clone())));
            }
            outcomes.push(DescriptorOutcome {
                id: d.id().to_string(),
                version: d.version().to_string(),
                revision,
                status,
                compatibility: check,
            });
        }
        let served: Vec<ServedDescriptor> = outcomes
            .iter()
            .map(|o| ServedDescriptor {
                id: o.id.clone(),
                version: o.version.clone(),
                revision: o.revision.clone(),
            })
            .collect();
        let unchanged_provider = existing.as_ref().is_some_and(|e| {
            e.node_id == registration.node_id
                && e.transport == registration.transport
                && e.descriptors == served
        });
        let record = ProviderRecord {
            provider_id: provider.clone(),
            node_id: registration.node_id.clone(),
            transport: registration.transport.clone(),
            descriptors: served,
            registered_at: existing
                .as_ref()
                .map_or_else(|| now.clone(), |e| e.registered_at.clone()),
            updated_at: if unchanged_provider {
                existing
                    .as_ref()
                    .map_or_else(|| now.clone(), |e| e.updated_at.clone())
            } else {
                now.clone()
            },
        };
        if unchanged_provider && new_versions.is_empty() {
            return Ok(Registration {
                record,
                created: false,
                changed: false,
                descriptors: outcomes,
            });
        }
        writes.push(put(
            Table::Providers,
            tenant_key(tenant.as_str(), provider.as_str()),
            &record,
        ));
        events.push(
            if existing.is_some() { "provider.updated" } else { "provider.registered" },
            json!({"provider_id": provider, "node_id": record.node_id,
                   "descriptors": record.descriptors.iter().map(|d| format!("{}@{}", d.id, d.version)).collect::<Vec<_>>()}),
        );
        events.writes(tenant, self.options.event_retention, &mut writes);
        self.store.apply(&writes)?;

        // Durable: now make it visible.
        for (key, version_record, descriptor) in new_versions {
            let providers = tenant_state
                .versions
                .get(&key)
                .map(|v| v.providers.clone())
                .unwrap_or_default();
            tenant_state.versions.insert(
                key,
                VersionState::new(version_record, descriptor, providers),
            );
        }
        tenant_state.detach_provider(&provider);
        tenant_state.attach_provider(record.clone());
        tenant_state.next_event = events.next;
        tenant_state.oldest_event = events.oldest;
        // Announced under the lock, so subscribers see events in id order.
        self.announce(tenant, events.records);
        drop(state);
        Ok(Registration {
            record,
            created: existing.is_none(),
            changed: true,
            descriptors: outcomes,
        })
    }

    /// Unregisters a provider. Idempotent: `Ok(false)` when it was not registered.
    /// Its descriptors' revision histories stay; they are no longer listed as served.
    pub fn unregister_provider(
        &self,
        tenant: &TenantId,
        provider: &ProviderId,
    ) -> Result<bool, RegistryError> {
        let mut state = self.write();
        let tenant_state = state
            .tenants
            .get_mut(tenant)
            .ok_or_else(|| RegistryError::not_found(format!("tenant {tenant}")))?;
        let Some(existing) = tenant_state.providers.get(provider).cloned() else {
            return Ok(false);
        };
        let mut writes = vec![Write::Delete {
            table: Table::Providers,
            key: tenant_key(tenant.as_str(), provider.as_str()),
        }];
        let mut events = EventBatch::new(tenant_state);
        events.push(
            "provider.unregistered",
            json!({"provider_id": provider, "node_id": existing.node_id}),
        );
        events.writes(tenant, self.options.event_retention, &mut writes);
        self.store.apply(&writes)?;
        tenant_state.detach_provider(provider);
        tenant_state.next_event = events.next;
        tenant_state.oldest_event = events.oldest;
        // Announced under the lock, so subscribers see events in id order.
        self.announce(tenant, events.records);
        drop(state);
        Ok(true)
    }

    fn announce(&self, tenant: &TenantId, records: Vec<EventRecord>) {
        for record in records {
            // No subscriber is fine: events are durable and can be read back.
            let _ = self.events.send(Announcement {
                tenant: tenant.clone(),
                event: Arc::new(record),
            });
        }
    }
}
