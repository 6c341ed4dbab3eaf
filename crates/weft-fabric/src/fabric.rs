//! The unary call path.
//!
//! Guards run cheapest first, and everything before admission runs outside the concurrency
//! bound so that trivially rejectable calls never take a slot:
//!
//! 1. envelope (timeout range, call id) → `invalid_request`
//! 2. capability and version lookup → `not_found` / `version_mismatch`
//! 3. revision pin → `revision_mismatch`
//! 4. routing to a reachable, ready provider that published the current revision →
//!    `not_found` (no provider matches the caller's filters) / `unreachable`
//! 5. admission → `overloaded` (never queued)
//! 6. inside the one deadline: payload size → `payload_too_large`, input validation →
//!    `invalid_payload`, the provider → `provider_error` / `unreachable`; expiry → `timeout`
//! 7. after the slot is released: the result must be an object within the size limit and
//!    valid against `output_schema` → `invalid_result`. The caller never receives an
//!    unvalidated result.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use foldhash::HashMap;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::Semaphore;
use weft_contract::{IoMode, QualifiedId, SchemaRole};
use weft_provider::{CallContext, ProviderError, SharedProvider};
use weft_registry::{NodeId, ProviderId, Registry, RegistryError, TenantId};

use crate::diagnostics::{CallProbe, Diagnostics};
use crate::error::CallError;
use crate::response::CallResponse;

/// Tunables of the call path.
#[derive(Debug, Clone)]
pub struct FabricOptions {
    /// This node's id (what responses report as `node_id` for local providers).
    pub node_id: NodeId,
    /// Concurrent unary calls admitted; beyond it calls get `overloaded`.
    pub max_concurrent_calls: usize,
    /// Deadline when the caller gives none.
    pub default_timeout: Duration,
    /// Largest deadline a caller may ask for.
    pub max_timeout: Duration,
    /// Largest payload (as received) and result (compact JSON), in bytes.
    pub max_payload_bytes: usize,
    /// Most validation errors reported per payload or result.
    pub max_validation_errors: usize,
    /// Concurrent streams admitted; beyond it opens get `overloaded`.
    pub max_concurrent_streams: usize,
    /// Frames buffered per stream and direction before senders wait.
    pub stream_queue: usize,
}

impl FabricOptions {
    /// Defaults: 64 concurrent calls, 256 streams, 30 s default and 300 s maximum deadline,
    /// 1 MiB payloads, 64-frame stream queues.
    pub fn new(node_id: NodeId) -> Self {
        Self {
            node_id,
            max_concurrent_calls: 64,
            default_timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(300),
            max_payload_bytes: 1024 * 1024,
            max_validation_errors: 100,
            max_concurrent_streams: 256,
            stream_queue: 64,
        }
    }
}

/// `POST /v1/calls` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallRequest {
    /// Caller-chosen id (1–128 visible ASCII); minted when absent.
    #[serde(default)]
    pub call_id: Option<String>,
    /// Capability id.
    pub capability_id: String,
    /// Exact version.
    pub version: String,
    /// The revision pinned at discovery.
    pub descriptor_revision: String,
    /// The payload, kept as received so its size is measured without re-serializing.
    pub payload: Box<RawValue>,
    /// Deadline in seconds, in (0, max]; default 30.
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Only this provider.
    #[serde(default)]
    pub provider_id: Option<String>,
    /// Only providers on this node.
    #[serde(default)]
    pub node_id: Option<String>,
    /// Asks the node's edge to verify the result against the capability's standard
    /// taxonomy rule and attach the report (unary calls only). The fabric itself only
    /// refuses it on streams; verifying is the edge's job.
    #[serde(default)]
    pub verify: bool,
}

/// Which entry point is asking: unary calls and streams accept different I/O modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Unary,
    Stream,
}

/// What guards 2–4 found: the pinned descriptor and the provider chosen to serve it.
pub(crate) struct Resolved {
    pub(crate) descriptor: std::sync::Arc<weft_contract::Descriptor>,
    /// `id@version`, built once per call.
    pub(crate) qualified: QualifiedId,
    pub(crate) provider_id: ProviderId,
    pub(crate) node_id: NodeId,
    pub(crate) provider: SharedProvider,
}

/// The call path of one node.
pub struct Fabric {
    options: FabricOptions,
    admission: Arc<Semaphore>,
    pub(crate) stream_admission: Arc<Semaphore>,
    /// Per tenant, then per provider: looked up by reference on every call (a tuple key
    /// would need both ids cloned just to ask).
    providers: RwLock<HashMap<TenantId, HashMap<ProviderId, SharedProvider>>>,
    diagnostics: Diagnostics,
}

/// `call-` + the process start time + a counter: unique per node without a clock read on
/// every call.
fn mint_call_id() -> String {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static PREFIX: OnceLock<String> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let prefix = PREFIX.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("call-{nanos:x}-")
    });
    let mut counter = itoa::Buffer::new();
    let counter = counter.format(NEXT.fetch_add(1, Ordering::Relaxed));
    let mut id = String::with_capacity(prefix.len() + counter.len());
    id.push_str(prefix);
    id.push_str(counter);
    id
}

fn failures_json(errors: &weft_contract::ValidationErrors) -> Value {
    serde_json::to_value(&errors.errors).unwrap_or(Value::Null)
}

impl Fabric {
    /// A fabric with no providers attached.
    pub fn new(options: FabricOptions) -> Self {
        Self {
            admission: Arc::new(Semaphore::new(options.max_concurrent_calls)),
            stream_admission: Arc::new(Semaphore::new(options.max_concurrent_streams)),
            diagnostics: Diagnostics::new(&options),
            options,
            providers: RwLock::new(HashMap::default()),
        }
    }

    /// The options.
    pub fn options(&self) -> &FabricOptions {
        &self.options
    }

    /// The node's call and stream counters.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }

    /// Makes `provider` callable as `provider_id` for `tenant` on this node. (Registering
    /// its descriptors in the registry is the caller's job.)
    pub fn attach(&self, tenant: TenantId, provider_id: ProviderId, provider: SharedProvider) {
        self.providers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(tenant)
            .or_default()
            .insert(provider_id, provider);
    }

    /// Calls currently holding an admission slot.
    pub fn active_calls(&self) -> usize {
        self.options.max_concurrent_calls - self.admission.available_permits()
    }

    /// Streams currently holding a slot.
    pub fn active_streams(&self) -> usize {
        self.options.max_concurrent_streams - self.stream_admission.available_permits()
    }

    fn handle(&self, tenant: &TenantId, provider: &ProviderId) -> Option<SharedProvider> {
        self.providers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tenant)?
            .get(provider)
            .cloned()
    }

    /// Runs one unary call for `tenant` through every guard, counting its outcome in
    /// [`Fabric::diagnostics`].
    pub async fn call(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: CallRequest,
    ) -> Result<CallResponse, CallError> {
        // Set once admitted; dropped unfinished if the caller goes away first (`cancelled`).
        let mut probe = None;
        let outcome = self
            .guarded_call(registry, tenant, request, &mut probe)
            .await;
        if let Some(probe) = probe {
            probe.finish(outcome.as_ref().map(|_| ()).map_err(CallError::code));
        }
        outcome
    }

    async fn guarded_call(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: CallRequest,
        probe: &mut Option<CallProbe>,
    ) -> Result<CallResponse, CallError> {
        let started = Instant::now();
        let reject = |e| self.reject_call(registry, tenant, &request, e);
        // 1. Envelope.
        let (timeout, call_id) = self.check_envelope(&request).map_err(reject)?;
        let deadline = started + timeout;
        let resolved = self
            .resolve(registry, tenant, &request, Mode::Unary)
            .map_err(reject)?;
        let (descriptor, qualified, provider_id, node_id, provider) = (
            resolved.descriptor,
            resolved.qualified,
            resolved.provider_id,
            resolved.node_id,
            resolved.provider,
        );
        let (id, version) = (request.capability_id, request.version);
        // 5. Admission.
        let permit = self.admission.clone().try_acquire_owned().map_err(|_| {
            self.diagnostics
                .call_rejected(Some(&qualified), "overloaded");
            CallError::Overloaded {
                limit: self.options.max_concurrent_calls,
            }
        })?;
        *probe = Some(self.diagnostics.call_admitted(&qualified, started));
        // 6. Inside the deadline.
        let context = CallContext {
            call_id: call_id.clone(),
            capability: qualified,
            revision: descriptor.revision().clone(),
            deadline,
        };
        let max_errors = self.options.max_validation_errors;
        let limit = self.options.max_payload_bytes;
        let work = async {
            let raw = request.payload.get();
            if raw.len() > limit {
                return Err(CallError::PayloadTooLarge {
                    bytes: raw.len(),
                    limit,
                });
            }
            let payload: Value =
                serde_json::from_str(raw).map_err(|e| CallError::InvalidPayload {
                    message: e.to_string(),
                    errors: Value::Array(Vec::new()),
                })?;
            descriptor
                .validate(SchemaRole::Input, &payload, max_errors)
                .map_err(|errors| CallError::InvalidPayload {
                    message: errors.to_string(),
                    errors: failures_json(&errors),
                })?;
            provider.call(&context, payload).await.map_err(|e| {
                // A provider that gives up because the deadline passed (as managed children
                // do) answers for the same reason the deadline would: call it a timeout.
                if Instant::now() >= deadline {
                    return CallError::Timeout {
                        seconds: timeout.as_secs_f64(),
                    };
                }
                match e {
                    ProviderError::Failed(message) => CallError::ProviderError(message),
                    ProviderError::Unavailable(message) => CallError::Unreachable(message),
                    ProviderError::Transport(message) => CallError::Transport(message),
                }
            })
        };
        let result = tokio::time::timeout_at(deadline.into(), work)
            .await
            .map_err(|_| CallError::Timeout {
                seconds: timeout.as_secs_f64(),
            })??;
        drop(permit);
        // 7. Result checks, outside the bound.
        if !result.is_object() {
            return Err(CallError::InvalidResult {
                message: format!(
                    "the result must be a JSON object, got {}",
                    json_kind(&result)
                ),
                errors: None,
            });
        }
        let size = weft_contract::encoded_len(&result);
        if size > limit {
            return Err(CallError::InvalidResult {
                message: format!("the result is {size} bytes; the limit is {limit}"),
                errors: None,
            });
        }
        descriptor
            .validate(SchemaRole::Output, &result, max_errors)
            .map_err(|errors| CallError::InvalidResult {
                message: errors.to_string(),
                errors: Some(failures_json(&errors)),
            })?;
        Ok(CallResponse {
            call_id,
            result,
            capability_id: id,
            version,
            revision: descriptor.revision().as_str().to_owned(),
            provider_id: provider_id.into(),
            node_id: node_id.into(),
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            verification: None,
        })
    }

    /// Guard 1: the deadline (in range) and the call id (well-formed, or minted).
    pub(crate) fn check_envelope(
        &self,
        request: &CallRequest,
    ) -> Result<(Duration, String), CallError> {
        let timeout = match request.timeout_seconds {
            None => self.options.default_timeout,
            Some(t) if t.is_finite() && t > 0.0 && t <= self.options.max_timeout.as_secs_f64() => {
                Duration::from_secs_f64(t)
            }
            Some(t) => {
                return Err(CallError::InvalidRequest(format!(
                    "timeout_seconds must be greater than 0 and at most {}, got {t}",
                    self.options.max_timeout.as_secs_f64()
                )));
            }
        };
        let call_id = match &request.call_id {
            Some(id)
                if !id.is_empty()
                    && id.len() <= 128
                    && id.bytes().all(|b| b.is_ascii_graphic()) =>
            {
                id.clone()
            }
            Some(_) => {
                return Err(CallError::InvalidRequest(
                    "call_id must be 1 to 128 visible ASCII characters".into(),
                ));
            }
            None => mint_call_id(),
        };
        Ok((timeout, call_id))
    }

    /// Guards 2–4: lookup, revision pin, routing.
    pub(crate) fn resolve(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        request: &CallRequest,
        mode: Mode,
    ) -> Result<Resolved, CallError> {
        // 2. Lookup.
        let (id, version) = (request.capability_id.as_str(), request.version.as_str());
        let (descriptor, providers) = match registry.call_target(tenant, id, version) {
            Ok(target) if !target.1.is_empty() => target,
            Ok(_) | Err(RegistryError::NotFound { .. }) => {
                return Err(self.missing(registry, tenant, id, version));
            }
            Err(other) => return Err(CallError::Unreachable(format!("registry: {other}"))),
        };
        match (mode, descriptor.io_mode()) {
            (Mode::Unary, IoMode::Unary)
            | (
                Mode::Stream,
                IoMode::ServerStreaming | IoMode::ClientStreaming | IoMode::Bidirectional,
            ) => {}
            (Mode::Unary, other) => {
                return Err(CallError::NotFound(format!(
                    "{id}@{version} is {other}, not unary; open a stream to call it"
                )));
            }
            (Mode::Stream, _) => {
                return Err(CallError::NotFound(format!(
                    "{id}@{version} is unary; call it with POST /v1/calls"
                )));
            }
        }
        // 3. Revision pin.
        if request.descriptor_revision != descriptor.revision().as_str() {
            return Err(CallError::RevisionMismatch {
                current: descriptor.revision().to_string(),
                pinned: request.descriptor_revision.clone(),
            });
        }
        // 4. Routing.
        let qualified = descriptor.qualified_id();
        let wanted_provider = request.provider_id.as_deref();
        let wanted_node = request.node_id.as_deref();
        let candidates: Vec<_> = providers
            .iter()
            .filter(|p| wanted_provider.is_none_or(|w| p.provider_id.as_str() == w))
            .filter(|p| wanted_node.is_none_or(|w| p.node_id.as_str() == w))
            .collect();
        if candidates.is_empty() {
            return Err(CallError::NotFound(format!(
                "no provider matching the requested provider_id/node_id serves {qualified}"
            )));
        }
        // A provider that published an older revision of this id@version would answer
        // under a contract the caller did not pin: only current-revision providers qualify.
        let chosen = candidates
            .iter()
            .filter(|p| p.revision == descriptor.revision().as_str())
            .find_map(|p| {
                let handle = self.handle(tenant, &p.provider_id)?;
                handle.ready(&qualified).then_some((
                    p.provider_id.clone(),
                    p.node_id.clone(),
                    handle,
                ))
            });
        let Some((provider_id, node_id, provider)) = chosen else {
            return Err(CallError::Unreachable(format!(
                "no provider serving the current revision of {qualified} is reachable from node {}",
                self.options.node_id
            )));
        };
        Ok(Resolved {
            descriptor,
            qualified,
            provider_id,
            node_id,
            provider,
        })
    }

    /// `version_mismatch` when the id is served at other versions, else `not_found`.
    fn missing(
        &self,
        registry: &Registry,
        tenant: &TenantId,
        id: &str,
        version: &str,
    ) -> CallError {
        let available: Vec<String> = registry
            .capability_versions(tenant, id)
            .map(|versions| {
                versions
                    .into_iter()
                    .filter(|v| !v.providers.is_empty())
                    .map(|v| v.version)
                    .collect()
            })
            .unwrap_or_default();
        if available.is_empty() {
            CallError::NotFound(format!("no capability {id}@{version} is served"))
        } else {
            CallError::VersionMismatch {
                id: id.to_owned(),
                requested: version.to_owned(),
                available,
            }
        }
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
