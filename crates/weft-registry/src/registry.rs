//! The registry: state in memory, every change made durable in the [`Store`] first.
//!
//! Invariant: the in-memory state always equals what the store holds. Every mutation takes
//! the write lock, computes its writes, applies them to the store (durably), and only then
//! updates memory and announces events — so an acknowledged change is on disk, and a failed
//! write leaves memory untouched.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::broadcast;
use weft_contract::{CapabilityId, CapabilityVersion, Descriptor, Limits};

use crate::error::RegistryError;
use crate::ids::{NodeId, ProviderId, Scope, TenantId};
use crate::model::{
    EventRecord, IdempotencyRecord, ProviderRecord, ProviderRef, TenantRecord, TokenRecord,
    VersionRecord,
};
use crate::policy::{CompatibilitySettings, Policy};
use crate::store::{Store, Table, Write};
use crate::util::{now_unix, tenant_key};

/// Tunables of a registry.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// Events kept per tenant for resumption; older ones are deleted as new ones arrive.
    pub event_retention: u64,
    /// How long an idempotent response is replayable.
    pub idempotency_ttl: Duration,
    /// Limits used to rebuild stored descriptors.
    pub limits: Limits,
    /// The compatibility policy of tenants that set no default of their own.
    pub default_policy: Policy,
    /// The most per-capability policy overrides one tenant may set.
    pub max_policy_overrides: usize,
}

/// Default of [`RegistryOptions::max_policy_overrides`].
pub const DEFAULT_MAX_POLICY_OVERRIDES: usize = 1000;

impl Default for RegistryOptions {
    fn default() -> Self {
        Self {
            event_retention: 10_000,
            idempotency_ttl: Duration::from_secs(24 * 60 * 60),
            limits: Limits::default(),
            default_policy: Policy::default(),
            max_policy_overrides: DEFAULT_MAX_POLICY_OVERRIDES,
        }
    }
}

/// Who is calling: resolved from a bearer token. A shared handle — every request carries
/// one, and handlers and layers pass it around, so cloning it must not copy its strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(Arc<PrincipalData>);

/// What a [`Principal`] is (reached through `Deref`: `principal.tenant`).
#[derive(Debug, PartialEq, Eq)]
pub struct PrincipalData {
    /// The tenant the token acts for.
    pub tenant: TenantId,
    /// The token's id.
    pub token_id: String,
    /// The token's scopes.
    pub scopes: Vec<Scope>,
}

impl std::ops::Deref for Principal {
    type Target = PrincipalData;
    fn deref(&self) -> &PrincipalData {
        &self.0
    }
}

impl Principal {
    /// A principal for `tenant`, acting through token `token_id` with `scopes`.
    pub fn new(tenant: TenantId, token_id: String, scopes: Vec<Scope>) -> Self {
        Self(Arc::new(PrincipalData {
            tenant,
            token_id,
            scopes,
        }))
    }

    /// Whether the token grants `scope` (`admin` grants every scope).
    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope) || self.scopes.contains(&Scope::Admin)
    }

    /// Whether this is an administrator of the default tenant, who manages tenants.
    pub fn is_operator(&self) -> bool {
        self.tenant == TenantId::default_tenant() && self.scopes.contains(&Scope::Admin)
    }
}

/// One `id@version` in a tenant.
#[derive(Debug, Clone)]
pub(crate) struct VersionState {
    pub(crate) record: VersionRecord,
    pub(crate) current: Arc<Descriptor>,
    /// Providers serving this version → (their node, the revision they published).
    /// Changed only through [`VersionState::serve`] and [`VersionState::unserve`], which
    /// keep `provider_refs` equal to it.
    pub(crate) providers: BTreeMap<ProviderId, (NodeId, String)>,
    /// `providers` as the list a call routes over, shared: a call takes an `Arc`, not a
    /// copy of three strings per provider.
    pub(crate) provider_refs: Arc<[ProviderRef]>,
    /// Lowercased id, title and description, for `q` searches without allocating.
    pub(crate) search_text: String,
}

impl VersionState {
    pub(crate) fn new(
        record: VersionRecord,
        current: Arc<Descriptor>,
        providers: BTreeMap<ProviderId, (NodeId, String)>,
    ) -> Self {
        let search_text = format!(
            "{}\n{}\n{}",
            current.id(),
            current.title(),
            current.description()
        )
        .to_lowercase();
        let mut state = Self {
            record,
            current,
            providers,
            provider_refs: Arc::from(Vec::new()),
            search_text,
        };
        state.refresh_refs();
        state
    }

    /// Records that `provider` on `node` serves this version at `revision`.
    pub(crate) fn serve(&mut self, provider: ProviderId, node: NodeId, revision: String) {
        self.providers.insert(provider, (node, revision));
        self.refresh_refs();
    }

    /// Records that `provider` no longer serves this version.
    pub(crate) fn unserve(&mut self, provider: &ProviderId) {
        if self.providers.remove(provider).is_some() {
            self.refresh_refs();
        }
    }

    fn refresh_refs(&mut self) {
        self.provider_refs = self
            .providers
            .iter()
            .map(|(provider_id, (node_id, revision))| ProviderRef {
                provider_id: provider_id.clone(),
                node_id: node_id.clone(),
                revision: revision.clone(),
            })
            .collect();
    }
}

pub(crate) type VersionKey = (CapabilityId, CapabilityVersion);

#[derive(Debug, Clone)]
pub(crate) struct TenantState {
    pub(crate) record: TenantRecord,
    pub(crate) providers: BTreeMap<ProviderId, ProviderRecord>,
    pub(crate) versions: BTreeMap<VersionKey, VersionState>,
    pub(crate) nodes: BTreeMap<NodeId, BTreeSet<ProviderId>>,
    /// The versions each provider serves, parsed once when it is attached: describing a
    /// node or detaching a provider then touches only those versions.
    pub(crate) served: HashMap<ProviderId, Vec<VersionKey>>,
    /// Providers whose lease lapsed: kept, but hidden from listings until they renew.
    /// Liveness is not persisted: after a restart every provider must renew its lease.
    pub(crate) lapsed: BTreeSet<ProviderId>,
    /// The id the next event will get.
    pub(crate) next_event: u64,
    /// The oldest retained event id (equal to `next_event` when none is retained).
    pub(crate) oldest_event: u64,
    /// The tenant's compatibility policy settings.
    pub(crate) compatibility: CompatibilitySettings,
}

impl TenantState {
    pub(crate) fn new(record: TenantRecord) -> Self {
        Self {
            record,
            providers: BTreeMap::new(),
            versions: BTreeMap::new(),
            nodes: BTreeMap::new(),
            served: HashMap::new(),
            lapsed: BTreeSet::new(),
            next_event: 1,
            oldest_event: 1,
            compatibility: CompatibilitySettings::default(),
        }
    }

    /// Adds a provider to the indexes (its versions must already be present).
    pub(crate) fn attach_provider(&mut self, record: ProviderRecord) {
        let mut keys = Vec::with_capacity(record.descriptors.len());
        for served in &record.descriptors {
            if let (Ok(id), Ok(version)) = (
                CapabilityId::parse(&served.id),
                CapabilityVersion::parse(&served.version),
            ) {
                let key = (id, version);
                if let Some(v) = self.versions.get_mut(&key) {
                    v.serve(
                        record.provider_id.clone(),
                        record.node_id.clone(),
                        served.revision.clone(),
                    );
                    keys.push(key);
                }
            }
        }
        self.served.insert(record.provider_id.clone(), keys);
        self.nodes
            .entry(record.node_id.clone())
            .or_default()
            .insert(record.provider_id.clone());
        self.providers.insert(record.provider_id.clone(), record);
    }

    /// Removes a provider from the indexes; returns its record.
    pub(crate) fn detach_provider(&mut self, provider: &ProviderId) -> Option<ProviderRecord> {
        // Re-registering renews liveness; unregistering forgets it.
        self.lapsed.remove(provider);
        let record = self.providers.remove(provider)?;
        for key in self.served.remove(provider).unwrap_or_default() {
            if let Some(v) = self.versions.get_mut(&key) {
                v.unserve(provider);
            }
        }
        if let Some(on_node) = self.nodes.get_mut(&record.node_id) {
            on_node.remove(provider);
            if on_node.is_empty() {
                self.nodes.remove(&record.node_id);
            }
        }
        Some(record)
    }
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) tenants: BTreeMap<TenantId, TenantState>,
    pub(crate) tokens: BTreeMap<String, TokenRecord>,
    /// SHA-256 of a secret (the 32 bytes, not hex: no formatting per request) → the
    /// principal its token acts as, built once per token (the token's record still
    /// decides, on every request, whether it is revoked).
    pub(crate) tokens_by_hash: foldhash::HashMap<[u8; 32], Principal>,
}

impl State {
    /// Indexes a token (created, bootstrapped or loaded) by id and by its secret's hash.
    pub(crate) fn index_token(&mut self, token: TokenRecord) {
        let principal =
            Principal::new(token.tenant.clone(), token.id.clone(), token.scopes.clone());
        // A stored hash that is not 64 hex digits matches no secret: the token cannot
        // authenticate (nothing else about it changes).
        if let Some(digest) = crate::util::sha256_from_hex(&token.secret_sha256) {
            self.tokens_by_hash.insert(digest, principal);
        }
        self.tokens.insert(token.id.clone(), token);
    }
}

/// A change announced to subscribers of the change feed.
#[derive(Debug, Clone)]
pub struct Announcement {
    /// The tenant it belongs to.
    pub tenant: TenantId,
    /// The event.
    pub event: Arc<EventRecord>,
}

/// The registry of one weft node.
pub struct Registry {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) state: RwLock<State>,
    pub(crate) events: broadcast::Sender<Announcement>,
    pub(crate) options: RegistryOptions,
}

/// A page of results and the cursor for the next one.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items, in the listing's documented order.
    pub items: Vec<T>,
    /// Opaque cursor for the next page, when there is one.
    pub next_cursor: Option<String>,
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing these plain records cannot fail: no maps with non-string keys, no NaN.
    serde_json::to_vec(value).unwrap_or_default()
}

pub(crate) fn decode<T: DeserializeOwned>(
    table: Table,
    key: &str,
    bytes: &[u8],
) -> Result<T, RegistryError> {
    serde_json::from_slice(bytes).map_err(|e| RegistryError::Corrupt {
        table: table.name(),
        key: key.to_owned(),
        message: e.to_string(),
    })
}

pub(crate) fn put<T: Serialize>(table: Table, key: String, value: &T) -> Write {
    Write::Put {
        table,
        key,
        value: encode(value),
    }
}

impl Registry {
    /// Opens the registry over `store`, loading everything it holds.
    pub fn open(store: Arc<dyn Store>, options: RegistryOptions) -> Result<Self, RegistryError> {
        let state = crate::load::load_state(store.as_ref(), &options)?;
        let (events, _) = broadcast::channel(1024);
        Ok(Self {
            store,
            state: RwLock::new(state),
            events,
            options,
        })
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-written (memory is
        // only changed after the store accepted the batch), so a poisoned lock is usable.
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks a provider's lease as lapsed (`live = false`) or renewed. A lapsed provider
    /// stays registered but its descriptors leave listings, and its node shows `stale`.
    /// Returns whether anything changed.
    pub fn set_provider_live(&self, tenant: &TenantId, provider: &ProviderId, live: bool) -> bool {
        let mut state = self.write();
        let Some(t) = state.tenants.get_mut(tenant) else {
            return false;
        };
        if !t.providers.contains_key(provider) {
            return false;
        }
        if live {
            t.lapsed.remove(provider)
        } else {
            t.lapsed.insert(provider.clone())
        }
    }

    /// A stored response for `(tenant, route, key)` that has not expired.
    pub fn idempotent_response(
        &self,
        tenant: &TenantId,
        route: &str,
        key: &str,
    ) -> Result<Option<IdempotencyRecord>, RegistryError> {
        let store_key = tenant_key(tenant.as_str(), &format!("{route}/{key}"));
        let Some(bytes) = self.store.get(Table::Idempotency, &store_key)? else {
            return Ok(None);
        };
        let record: IdempotencyRecord = decode(Table::Idempotency, &store_key, &bytes)?;
        let age = now_unix().saturating_sub(record.stored_at_unix);
        Ok((age < self.options.idempotency_ttl.as_secs()).then_some(record))
    }

    /// Stores a response for replay under `(tenant, route, key)`.
    pub fn store_idempotent_response(
        &self,
        tenant: &TenantId,
        route: &str,
        key: &str,
        record: &IdempotencyRecord,
    ) -> Result<(), RegistryError> {
        let store_key = tenant_key(tenant.as_str(), &format!("{route}/{key}"));
        Ok(self
            .store
            .apply(&[put(Table::Idempotency, store_key, record)])?)
    }

    /// Subscribes to every tenant's announcements (filter by tenant on receipt).
    pub fn subscribe(&self) -> broadcast::Receiver<Announcement> {
        self.events.subscribe()
    }

    /// The options this registry was opened with.
    pub fn options(&self) -> &RegistryOptions {
        &self.options
    }
}

/// Cuts a key-sorted list into a page after the cursor's key.
pub(crate) fn paginate<T>(
    records: Vec<(String, T)>,
    after: Option<&str>,
    limit: usize,
) -> Result<Page<T>, RegistryError> {
    let after = after.map(crate::util::decode_cursor).transpose()?;
    let mut items = Vec::new();
    let mut last_key = None;
    let mut more = false;
    for (key, record) in records {
        if after.as_deref().is_some_and(|a| key.as_str() <= a) {
            continue;
        }
        if items.len() == limit {
            more = true;
            break;
        }
        last_key = Some(key);
        items.push(record);
    }
    Ok(Page {
        items,
        next_cursor: if more {
            last_key.map(|k| crate::util::encode_cursor(&k))
        } else {
            None
        },
    })
}
