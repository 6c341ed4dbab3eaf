//! Rebuilding the in-memory state from the store at start.

use std::collections::HashMap;
use std::sync::Arc;

use weft_contract::{CapabilityId, CapabilityVersion, Descriptor};

use crate::error::RegistryError;
use crate::ids::TenantId;
use crate::model::{ProviderRecord, TenantRecord, TokenRecord, VersionRecord};
use crate::policy::{CompatibilitySettings, SettingsRecord};
use crate::registry::{RegistryOptions, State, TenantState, VersionState, decode};
use crate::store::{Store, Table};

fn split_tenant(key: &str) -> Result<(TenantId, &str), RegistryError> {
    let corrupt = |message: &str| RegistryError::Corrupt {
        table: "key",
        key: key.to_owned(),
        message: message.to_owned(),
    };
    let (tenant, rest) = key
        .split_once('/')
        .ok_or_else(|| corrupt("no tenant prefix"))?;
    Ok((
        TenantId::parse(tenant).map_err(|e| corrupt(&e.to_string()))?,
        rest,
    ))
}

/// Reads every table and rebuilds the registry's state, checking that each stored
/// descriptor still hashes to the revision it is stored under.
pub(crate) fn load_state(
    store: &dyn Store,
    options: &RegistryOptions,
) -> Result<State, RegistryError> {
    let mut state = State::default();
    for (key, bytes) in store.scan(Table::Tenants)? {
        let record: TenantRecord = decode(Table::Tenants, &key, &bytes)?;
        state
            .tenants
            .insert(record.id.clone(), TenantState::new(record));
    }
    for (key, bytes) in store.scan(Table::Tokens)? {
        let token: TokenRecord = decode(Table::Tokens, &key, &bytes)?;
        state.index_token(token);
    }
    for (key, bytes) in store.scan(Table::Compatibility)? {
        let record: SettingsRecord = decode(Table::Compatibility, &key, &bytes)?;
        let settings = CompatibilitySettings::from_record(record).map_err(|message| {
            RegistryError::Corrupt {
                table: Table::Compatibility.name(),
                key: key.clone(),
                message,
            }
        })?;
        let tenant = TenantId::parse(&key).map_err(|e| RegistryError::Corrupt {
            table: Table::Compatibility.name(),
            key: key.clone(),
            message: e.to_string(),
        })?;
        if let Some(t) = state.tenants.get_mut(&tenant) {
            t.compatibility = settings;
        }
    }
    let mut descriptors: HashMap<String, Arc<Descriptor>> = HashMap::new();
    for (key, bytes) in store.scan(Table::Versions)? {
        let (tenant, _) = split_tenant(&key)?;
        let record: VersionRecord = decode(Table::Versions, &key, &bytes)?;
        let current = match descriptors.get(&record.current) {
            Some(d) => d.clone(),
            None => {
                let d = Arc::new(load_descriptor(store, &record.current, options)?);
                descriptors.insert(record.current.clone(), d.clone());
                d
            }
        };
        let version_key = (
            CapabilityId::parse(&record.id).map_err(|e| corrupt_version(&key, e))?,
            CapabilityVersion::parse(&record.version).map_err(|e| corrupt_version(&key, e))?,
        );
        let Some(tenant_state) = state.tenants.get_mut(&tenant) else {
            continue;
        };
        tenant_state.versions.insert(
            version_key,
            VersionState::new(record, current, Default::default()),
        );
    }
    for (key, bytes) in store.scan(Table::Providers)? {
        let (tenant, _) = split_tenant(&key)?;
        let record: ProviderRecord = decode(Table::Providers, &key, &bytes)?;
        let Some(tenant_state) = state.tenants.get_mut(&tenant) else {
            continue;
        };
        tenant_state.attach_provider(record);
    }
    for (key, _) in store.scan(Table::Events)? {
        let (tenant, sequence) = split_tenant(&key)?;
        let sequence: u64 = sequence.parse().map_err(|_| RegistryError::Corrupt {
            table: "events",
            key: key.clone(),
            message: "sequence is not a number".into(),
        })?;
        if let Some(t) = state.tenants.get_mut(&tenant) {
            // Keys arrive in order, so the first seen is the oldest.
            if t.next_event == 1 {
                t.oldest_event = sequence;
            }
            t.next_event = t.next_event.max(sequence + 1);
        }
    }
    Ok(state)
}

fn corrupt_version(key: &str, error: impl std::fmt::Display) -> RegistryError {
    RegistryError::Corrupt {
        table: "versions",
        key: key.to_owned(),
        message: error.to_string(),
    }
}

fn load_descriptor(
    store: &dyn Store,
    revision: &str,
    options: &RegistryOptions,
) -> Result<Descriptor, RegistryError> {
    let corrupt = |message: String| RegistryError::Corrupt {
        table: "contents",
        key: revision.to_owned(),
        message,
    };
    let bytes = store
        .get(Table::Contents, revision)?
        .ok_or_else(|| corrupt("missing".into()))?;
    let value: serde_json::Value = decode(Table::Contents, revision, &bytes)?;
    let descriptor =
        Descriptor::from_value(&value, &options.limits).map_err(|e| corrupt(e.to_string()))?;
    if descriptor.revision().as_str() != revision {
        return Err(corrupt(format!(
            "content hashes to {}, not to its key",
            descriptor.revision()
        )));
    }
    Ok(descriptor)
}
