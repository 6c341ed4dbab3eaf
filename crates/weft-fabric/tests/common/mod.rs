//! Shared fixtures of the fabric tests: a real registry on redb in a temp dir, a fabric,
//! and an in-process provider that behaves (or misbehaves) as told.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_fabric::diagnostics::CapabilitySnapshot;
use weft_fabric::{CallError, CallRequest, Fabric, FabricOptions};
use weft_provider::{CallContext, Provider, ProviderError};
use weft_registry::{
    NodeId, ProviderId, ProviderRegistration, RedbStore, Registry, RegistryOptions, TenantId,
};

#[derive(Clone)]
pub enum Behaviour {
    Echo,
    Sleep(Duration),
    Fail,
    Unavailable,
    BrokenHop,
    Return(Value),
}

pub struct TestProvider {
    pub descriptors: Vec<Descriptor>,
    pub behaviour: Behaviour,
}

impl Provider for TestProvider {
    fn descriptors(&self) -> Vec<Descriptor> {
        self.descriptors.clone()
    }
    fn call<'a>(
        &'a self,
        _c: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        let behaviour = self.behaviour.clone();
        async move {
            match behaviour {
                Behaviour::Echo => Ok(payload),
                Behaviour::Sleep(d) => {
                    tokio::time::sleep(d).await;
                    Ok(payload)
                }
                Behaviour::Fail => Err(ProviderError::Failed("RuntimeError: boom".into())),
                Behaviour::Unavailable => Err(ProviderError::Unavailable("socket closed".into())),
                Behaviour::BrokenHop => Err(ProviderError::Transport("window exceeded".into())),
                Behaviour::Return(v) => Ok(v),
            }
        }
        .boxed()
    }
}

pub fn text_descriptor(id: &str, version: &str, io_mode: &str) -> Descriptor {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                      "required": ["text"], "additionalProperties": false});
    let mut value = json!({"id": id, "version": version, "title": id, "description": "test",
                           "io_mode": io_mode, "input_schema": text, "output_schema": text});
    if io_mode == "server_streaming" {
        value["output_chunk_schema"] = json!({"type": "object"});
    }
    Descriptor::from_value(&value, &Limits::default()).unwrap()
}

pub struct World {
    _dir: tempfile::TempDir,
    pub registry: Registry,
    pub fabric: Fabric,
    pub tenant: TenantId,
}

pub fn world(max_concurrent: usize) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("r.redb")).unwrap();
    let registry = Registry::open(Arc::new(store), RegistryOptions::default()).unwrap();
    registry.bootstrap().unwrap();
    let mut options = FabricOptions::new(NodeId::parse("n1").unwrap());
    options.max_concurrent_calls = max_concurrent;
    World {
        _dir: dir,
        registry,
        fabric: Fabric::new(options),
        tenant: TenantId::default_tenant(),
    }
}

impl World {
    pub fn serve(&self, provider: &str, behaviour: Behaviour, descriptors: Vec<Descriptor>) {
        let provider_id = ProviderId::parse(provider).unwrap();
        self.registry
            .register_provider(
                &self.tenant,
                provider_id.clone(),
                ProviderRegistration {
                    node_id: NodeId::parse("n1").unwrap(),
                    transport: None,
                    descriptors: descriptors.clone(),
                },
            )
            .unwrap();
        self.fabric.attach(
            self.tenant.clone(),
            provider_id,
            Arc::new(TestProvider {
                descriptors,
                behaviour,
            }),
        );
    }

    pub async fn call(
        &self,
        id: &str,
        version: &str,
        revision: &str,
        payload: &str,
        timeout: Option<f64>,
    ) -> Result<weft_fabric::CallResponse, CallError> {
        let request = CallRequest {
            call_id: None,
            capability_id: id.into(),
            version: version.into(),
            descriptor_revision: revision.into(),
            payload: serde_json::value::RawValue::from_string(payload.into()).unwrap(),
            timeout_seconds: timeout,
            provider_id: None,
            node_id: None,
            verify: false,
        };
        self.fabric
            .call(&self.registry, &self.tenant, request)
            .await
    }

    /// Serves `id@1.0.0` from provider `id`; returns its revision.
    pub fn serve_text(&self, id: &str, behaviour: Behaviour) -> String {
        let descriptor = text_descriptor(id, "1.0.0", "unary");
        let revision = descriptor.revision().to_string();
        let provider_id = ProviderId::parse(id).unwrap();
        self.registry
            .register_provider(
                &self.tenant,
                provider_id.clone(),
                ProviderRegistration {
                    node_id: NodeId::parse("n1").unwrap(),
                    transport: None,
                    descriptors: vec![descriptor.clone()],
                },
            )
            .unwrap();
        let provider = TestProvider {
            descriptors: vec![descriptor],
            behaviour,
        };
        self.fabric
            .attach(self.tenant.clone(), provider_id, Arc::new(provider));
        revision
    }

    pub fn counters(&self, qualified: &str) -> CapabilitySnapshot {
        let snapshot = self.fabric.diagnostics().snapshot();
        snapshot
            .capabilities
            .get(qualified)
            .cloned()
            .unwrap_or_else(|| panic!("no counters for {qualified}: {:?}", snapshot.capabilities))
    }
}
