//! Reading the registry: capabilities, versions, providers, nodes, and the change feed.

use std::ops::Bound;
use std::sync::Arc;

use weft_contract::{CapabilityId, CapabilityVersion, Descriptor, IoMode, QualifiedId};

use crate::error::RegistryError;
use crate::ids::{NodeId, ProviderId, TenantId};
use crate::model::{
    EventRecord, NodeView, ProviderRecord, ProviderRef, VersionRecord, VersionSummary,
};
use crate::registry::{Page, Registry, TenantState, VersionKey, VersionState, decode, paginate};
use crate::store::Table;
use crate::util::{decode_cursor, encode_cursor, event_key};

/// Filters for listing capabilities; all given filters must match.
#[derive(Debug, Clone, Default)]
pub struct CapabilityFilter {
    /// Exactly this capability id.
    pub id: Option<String>,
    /// Exactly this I/O mode.
    pub io_mode: Option<IoMode>,
    /// Served by a provider on this node.
    pub node_id: Option<NodeId>,
    /// Served by this provider.
    pub provider_id: Option<ProviderId>,
    /// Case-insensitive substring of id, title or description.
    pub q: Option<String>,
}

/// One `id@version` with everything known about it.
#[derive(Debug, Clone)]
pub struct VersionDetail {
    /// The current descriptor.
    pub descriptor: Arc<Descriptor>,
    /// The revision history.
    pub record: VersionRecord,
    /// Who serves it.
    pub providers: Vec<ProviderRef>,
}

fn providers_of(v: &VersionState) -> Vec<ProviderRef> {
    v.provider_refs.to_vec()
}

fn matches(
    filter: &CapabilityFilter,
    needle: Option<&str>,
    v: &VersionState,
    lapsed: &std::collections::BTreeSet<ProviderId>,
) -> bool {
    let d = &v.current;
    // Cheapest and most selective first: a search rejects most versions on their text
    // alone, without touching their providers.
    if let Some(needle) = needle
        && !v.search_text.contains(needle)
    {
        return false;
    }
    if filter.id.as_deref().is_some_and(|id| id != d.id().as_str()) {
        return false;
    }
    if filter.io_mode.is_some_and(|m| m != d.io_mode()) {
        return false;
    }
    // Listed while at least one provider serves it with a live lease.
    if !v.providers.keys().any(|p| !lapsed.contains(p)) {
        return false;
    }
    if let Some(node) = &filter.node_id
        && !v.providers.values().any(|(n, _)| n == node)
    {
        return false;
    }
    if let Some(provider) = &filter.provider_id
        && !v.providers.contains_key(provider)
    {
        return false;
    }
    true
}

impl Registry {
    fn with_tenant<T>(
        &self,
        tenant: &TenantId,
        f: impl FnOnce(&TenantState) -> Result<T, RegistryError>,
    ) -> Result<T, RegistryError> {
        let state = self.read();
        let t = state
            .tenants
            .get(tenant)
            .ok_or_else(|| RegistryError::not_found(format!("tenant {tenant}")))?;
        f(t)
    }

    /// The served capabilities visible to `tenant`, ordered by id, then version (SemVer
    /// order). Only versions with at least one registered provider are listed.
    pub fn list_capabilities(
        &self,
        tenant: &TenantId,
        filter: &CapabilityFilter,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<Arc<Descriptor>>, RegistryError> {
        let start = match after {
            None => Bound::Unbounded,
            Some(cursor) => {
                let key = decode_cursor(cursor)?;
                let q = QualifiedId::parse(&key).map_err(|_| {
                    RegistryError::Invalid(format!(
                        "cursor {cursor:?} is not one this server issued"
                    ))
                })?;
                Bound::Excluded((q.id, q.version))
            }
        };
        let needle = filter.q.as_ref().map(|q| q.to_lowercase());
        self.with_tenant(tenant, |t| {
            // Narrow the scan to what the named node or provider serves, when one is given:
            // describing a node then costs its own descriptors, not the whole registry.
            // The versions each provider serves are indexed when it is attached, so this
            // neither parses ids nor looks at other providers.
            let narrowed: Option<Vec<&VersionKey>> = match (&filter.node_id, &filter.provider_id) {
                (None, None) => None,
                (node, provider) => {
                    let providers: Vec<&ProviderId> = match (node, provider) {
                        (_, Some(p)) => vec![p],
                        (Some(n), None) => t
                            .nodes
                            .get(n)
                            .map(|set| set.iter().collect())
                            .unwrap_or_default(),
                        (None, None) => Vec::new(),
                    };
                    let mut keys: Vec<&VersionKey> = providers
                        .into_iter()
                        .filter_map(|p| t.served.get(p))
                        .flatten()
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    Some(keys)
                }
            };
            let candidates: Box<dyn Iterator<Item = (&VersionKey, &VersionState)>> = match &narrowed
            {
                Some(keys) => Box::new(
                    keys.iter()
                        .filter(|k| match &start {
                            Bound::Excluded(after) => **k > after,
                            _ => true,
                        })
                        .filter_map(|k| t.versions.get_key_value(*k)),
                ),
                None => Box::new(t.versions.range((start.clone(), Bound::Unbounded))),
            };
            let mut items = Vec::new();
            let mut last: Option<&VersionKey> = None;
            let mut more = false;
            for (key, v) in candidates {
                if let Some(id) = filter.id.as_deref() {
                    match key.0.as_str().cmp(id) {
                        std::cmp::Ordering::Less => continue,
                        std::cmp::Ordering::Greater => break,
                        std::cmp::Ordering::Equal => {}
                    }
                }
                if !matches(filter, needle.as_deref(), v, &t.lapsed) {
                    continue;
                }
                if items.len() == limit {
                    more = true;
                    break;
                }
                items.push(v.current.clone());
                last = Some(key);
            }
            Ok(Page {
                items,
                next_cursor: more
                    .then(|| last.map(|(id, version)| encode_cursor(&format!("{id}@{version}"))))
                    .flatten(),
            })
        })
    }

    /// Every version ever published under `id`, with who serves each (possibly nobody).
    pub fn capability_versions(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Vec<VersionSummary>, RegistryError> {
        self.with_tenant(tenant, |t| {
            let versions: Vec<VersionSummary> = t
                .versions
                .iter()
                .filter(|(key, _)| key.0.as_str() == id)
                .map(|(_, v)| VersionSummary {
                    version: v.record.version.clone(),
                    revision: v.record.current.clone(),
                    io_mode: v.current.io_mode(),
                    title: v.current.title().to_owned(),
                    providers: providers_of(v),
                })
                .collect();
            if versions.is_empty() {
                return Err(RegistryError::not_found(format!("capability {id}")));
            }
            Ok(versions)
        })
    }

    /// One `id@version`: its current descriptor, revision history and providers.
    pub fn capability_version(
        &self,
        tenant: &TenantId,
        id: &str,
        version: &str,
    ) -> Result<VersionDetail, RegistryError> {
        let not_found = || RegistryError::not_found(format!("capability {id}@{version}"));
        let key = (
            CapabilityId::parse(id).map_err(|_| not_found())?,
            CapabilityVersion::parse(version).map_err(|_| not_found())?,
        );
        self.with_tenant(tenant, |t| {
            let v = t.versions.get(&key).ok_or_else(not_found)?;
            Ok(VersionDetail {
                descriptor: v.current.clone(),
                record: v.record.clone(),
                providers: providers_of(v),
            })
        })
    }

    /// What a call needs of `id@version`: the current descriptor and who serves it — without
    /// copying the revision history, since this runs on every call.
    pub fn call_target(
        &self,
        tenant: &TenantId,
        id: &str,
        version: &str,
    ) -> Result<(Arc<Descriptor>, Arc<[ProviderRef]>), RegistryError> {
        let not_found = || RegistryError::not_found(format!("capability {id}@{version}"));
        let key = (
            CapabilityId::parse(id).map_err(|_| not_found())?,
            CapabilityVersion::parse(version).map_err(|_| not_found())?,
        );
        self.with_tenant(tenant, |t| {
            let v = t.versions.get(&key).ok_or_else(not_found)?;
            Ok((v.current.clone(), v.provider_refs.clone()))
        })
    }

    /// One provider.
    pub fn provider(
        &self,
        tenant: &TenantId,
        provider: &ProviderId,
    ) -> Result<ProviderRecord, RegistryError> {
        self.with_tenant(tenant, |t| {
            t.providers
                .get(provider)
                .cloned()
                .ok_or_else(|| RegistryError::not_found(format!("provider {provider}")))
        })
    }

    fn node_view(t: &TenantState, node: &NodeId) -> Option<NodeView> {
        let providers = t.nodes.get(node)?;
        let mut tags = std::collections::BTreeSet::new();
        let mut last_seen = String::new();
        for p in providers {
            if let Some(record) = t.providers.get(p) {
                tags.extend(record.descriptors.iter().map(|d| d.id.clone()));
                if record.updated_at > last_seen {
                    last_seen = record.updated_at.clone();
                }
            }
        }
        Some(NodeView {
            node_id: node.clone(),
            tags: tags.into_iter().collect(),
            providers: providers.iter().cloned().collect(),
            // `stale` when every provider on the node let its lease lapse.
            status: if providers.iter().all(|p| t.lapsed.contains(p)) {
                "stale".into()
            } else {
                "ready".into()
            },
            last_seen,
        })
    }

    /// The nodes of `tenant`, in id order.
    pub fn list_nodes(
        &self,
        tenant: &TenantId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<NodeView>, RegistryError> {
        self.with_tenant(tenant, |t| {
            let views: Vec<(String, NodeView)> = t
                .nodes
                .keys()
                .filter_map(|n| Self::node_view(t, n).map(|v| (n.to_string(), v)))
                .collect();
            paginate(views, after, limit)
        })
    }

    /// Whether `node` exists for `tenant` (not found otherwise), without building its view.
    pub fn check_node(&self, tenant: &TenantId, node: &NodeId) -> Result<(), RegistryError> {
        self.with_tenant(tenant, |t| {
            if t.nodes.contains_key(node) {
                Ok(())
            } else {
                Err(RegistryError::not_found(format!("node {node}")))
            }
        })
    }

    /// One node.
    pub fn node(&self, tenant: &TenantId, node: &NodeId) -> Result<NodeView, RegistryError> {
        self.with_tenant(tenant, |t| {
            Self::node_view(t, node).ok_or_else(|| RegistryError::not_found(format!("node {node}")))
        })
    }

    /// Events of `tenant` with ids greater than `after`, oldest first, at most `limit`.
    ///
    /// Fails with [`RegistryError::EventsGone`] when events after `after` were already
    /// dropped by retention, so a resuming client never silently misses a change.
    pub fn events_after(
        &self,
        tenant: &TenantId,
        after: u64,
        limit: usize,
    ) -> Result<Vec<EventRecord>, RegistryError> {
        let (oldest, next) = self.with_tenant(tenant, |t| Ok((t.oldest_event, t.next_event)))?;
        if after.saturating_add(1) < oldest {
            return Err(RegistryError::EventsGone {
                requested: after,
                oldest,
            });
        }
        if after.saturating_add(1) >= next {
            return Ok(Vec::new());
        }
        let from = event_key(tenant.as_str(), after.saturating_add(1));
        let to = event_key(tenant.as_str(), u64::MAX);
        self.store
            .range(Table::Events, &from, &to, limit)?
            .into_iter()
            .map(|(key, bytes)| decode(Table::Events, &key, &bytes))
            .collect()
    }

    /// The id of the latest event of `tenant` (0 when there is none yet).
    pub fn latest_event_id(&self, tenant: &TenantId) -> Result<u64, RegistryError> {
        self.with_tenant(tenant, |t| Ok(t.next_event - 1))
    }
}
