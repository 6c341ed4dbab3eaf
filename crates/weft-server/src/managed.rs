//! Managed child providers (`[[managed]]` in the config): started with the node, their
//! descriptors registered from each handshake, re-registered when a restarted child
//! publishes a different set, and stopped with the node.

use std::sync::Arc;

use weft_managed::{ManagedConfig, ManagedProvider};
use weft_registry::{NodeId, ProviderId, ProviderRegistration, TenantId};

use crate::config::ManagedEntry;
use crate::state::AppState;

/// Starts every configured child. A child that cannot start is logged and retried with
/// backoff; the node serves everything else meanwhile.
pub fn start_all(state: &AppState) -> Vec<Arc<ManagedProvider>> {
    let mut started = Vec::new();
    for entry in &state.config.managed {
        match start(state, entry) {
            Ok(provider) => started.push(provider),
            Err(message) => {
                tracing::error!(provider = %entry.id, "managed provider not started: {message}")
            }
        }
    }
    started
}

fn start(state: &AppState, entry: &ManagedEntry) -> Result<Arc<ManagedProvider>, String> {
    let provider_id = ProviderId::parse(&entry.id).map_err(|e| e.to_string())?;
    let tenant = match &entry.tenant {
        Some(t) => TenantId::parse(t).map_err(|e| e.to_string())?,
        None => TenantId::default_tenant(),
    };
    let node_id = NodeId::parse(&state.config.node_id).map_err(|e| e.to_string())?;
    let mut config = ManagedConfig::new(entry.id.clone(), entry.command.clone());
    config.env = entry
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    config.cwd = entry.cwd.clone();
    if let Some(window) = entry.stream_window {
        config.stream_window = window;
    }
    let provider = ManagedProvider::spawn(config).map_err(|e| e.to_string())?;
    state
        .fabric
        .attach(tenant.clone(), provider_id.clone(), provider.clone());
    let mut updates = provider.descriptor_updates();
    let registrar = state.clone();
    tokio::spawn(async move {
        loop {
            let descriptors = updates.borrow_and_update().clone();
            // The same taxonomy binding as a publish over HTTP; a refused set is logged and
            // not registered, like any other registration failure.
            let bound = match crate::taxonomy::check(registrar.config.taxonomy, &descriptors) {
                Ok(warnings) => {
                    for w in warnings {
                        tracing::warn!(provider = %provider_id, id = %w.id, code = %w.code, "{}", w.message);
                    }
                    true
                }
                Err(e) => {
                    tracing::error!(provider = %provider_id, code = e.code, details = ?e.details, "managed provider not registered: {}", e.message);
                    false
                }
            };
            if bound && !descriptors.is_empty() {
                let registration = ProviderRegistration {
                    node_id: node_id.clone(),
                    transport: Some(serde_json::json!({"kind": "managed"})),
                    descriptors,
                };
                let (state, tenant, id) = (registrar.clone(), tenant.clone(), provider_id.clone());
                let outcome = tokio::task::spawn_blocking(move || {
                    state.registry.register_provider(&tenant, id, registration)
                })
                .await;
                match outcome {
                    Ok(Ok(r)) => {
                        tracing::info!(provider = %r.record.provider_id, descriptors = r.descriptors.len(), "managed provider registered")
                    }
                    Ok(Err(e)) => tracing::error!(%e, "could not register managed provider"),
                    Err(e) => tracing::error!(%e, "registration task failed"),
                }
            }
            if updates.changed().await.is_err() {
                return;
            }
        }
    });
    Ok(provider)
}

/// Stops every child: closes its stdin, waits the grace period, then kills it.
pub async fn stop_all(providers: &[Arc<ManagedProvider>]) {
    for provider in providers {
        provider.shutdown().await;
    }
}
