//! Remote HTTP providers: a provider process registers with
//! `transport: {"kind": "http", "url": "http://host:port", "lease_seconds": n}` (1–300,
//! default 15), renews the lease by re-sending its `PUT` before it lapses, and answers calls
//! over a few long-lived multiplexed WebSockets at `{url}/weft/v1/calls`
//! (`crate::remote_mux`), or — for a provider that does not serve that route — one
//! `POST {url}/weft/v1/call` each (the SDK's `weft_provider::http` serves both). While the
//! lease holds, the node routes calls to it; once it lapses the provider's descriptors leave
//! listings, its node shows `stale`, and calls answer `unreachable` — until it renews.
//! Streaming calls go over one WebSocket per call (`crate::remote_stream`); the protocol is
//! in `docs/remote-providers.md`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use http_body_util::Full;
use serde_json::Value;
use weft_contract::{Descriptor, QualifiedId};
use weft_provider::{CallContext, ChunkSink, ChunkSource, Provider, ProviderError};
use weft_registry::{ProviderId, TenantId};

use crate::error::ApiError;
use crate::remote_mux::{MuxError, MuxHost};
use crate::remote_pool::{HttpPool, PoolError};
use crate::state::AppState;

/// Longest lease a provider may ask for.
pub const MAX_LEASE_SECONDS: u64 = 300;
/// Lease when the registration names none.
pub const DEFAULT_LEASE_SECONDS: u64 = 15;

/// Where and for how long a remote provider is reachable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTransport {
    /// `http://host:port` (no TLS in this build).
    pub url: String,
    /// How long one registration keeps the provider live.
    pub lease: Duration,
    /// `host:port`, for the connection pool and the `Host` header.
    pub authority: String,
}

/// Reads an `http` transport from a registration; other kinds are opaque to the node.
pub fn parse_transport(transport: Option<&Value>) -> Result<Option<RemoteTransport>, ApiError> {
    let Some(transport) = transport else {
        return Ok(None);
    };
    if transport.get("kind").and_then(Value::as_str) != Some("http") {
        return Ok(None);
    }
    let url = transport
        .get("url")
        .and_then(Value::as_str)
        .map(|u| u.trim_end_matches('/'))
        .filter(|u| {
            u.strip_prefix("http://")
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
        })
        .ok_or_else(|| {
            ApiError::invalid(
                "transport.url must be http://host:port (TLS is not supported in this build)",
            )
        })?;
    let lease = match transport.get("lease_seconds") {
        None => DEFAULT_LEASE_SECONDS,
        Some(v) => v
            .as_u64()
            .filter(|s| (1..=MAX_LEASE_SECONDS).contains(s))
            .ok_or_else(|| {
                ApiError::invalid(format!(
                    "transport.lease_seconds must be a whole number from 1 to {MAX_LEASE_SECONDS}"
                ))
            })?,
    };
    let authority = url.trim_start_matches("http://").to_owned();
    // The same check the pool's requests will pass: a usable `Host` header value.
    hyper::header::HeaderValue::from_str(&authority)
        .map_err(|e| ApiError::invalid(format!("transport.url is not a usable URL: {e}")))?;
    Ok(Some(RemoteTransport {
        url: url.to_owned(),
        lease: Duration::from_secs(lease),
        authority,
    }))
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A provider reached over HTTP while its lease holds.
pub struct RemoteProvider {
    /// `http://host:port`; streams open `ws://host:port/weft/v1/stream`.
    url: String,
    /// `host:port` of `url`.
    authority: String,
    descriptors: Vec<Descriptor>,
    expires_ms: AtomicU64,
    lapsed: AtomicBool,
    pool: Arc<HttpPool>,
    /// The multiplexed call connections to `authority`, shared by every registration there.
    multiplexed: Arc<MuxHost>,
    /// Set once the provider answered the multiplexed route's upgrade with a plain HTTP
    /// status: until it registers again, its calls go as one `POST` each.
    post_only: AtomicBool,
    /// The node's `max_payload_bytes`, which bounds streamed messages too.
    payload_limit: usize,
}

impl RemoteProvider {
    fn live(&self) -> bool {
        now_ms() < self.expires_ms.load(Ordering::SeqCst)
    }

    /// One call as one `POST /weft/v1/call`.
    async fn post(&self, context: &CallContext, payload: &Value) -> Result<Value, ProviderError> {
        let bytes = weft_provider::wire::call_line(context, payload).into_bytes();
        let request = hyper::Request::post(weft_provider::wire::CALL_PATH)
            .header(hyper::header::HOST, self.authority.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| ProviderError::Failed(format!("could not build the call: {e}")))?;
        // No timer of its own: the fabric runs this inside the call's one deadline and
        // drops it (closing the exchange) when the deadline passes.
        let limit = crate::remote_stream::message_limit(self.payload_limit);
        let (status, body) = self
            .pool
            .send(&self.authority, request, limit)
            .await
            .map_err(|e| match e {
                PoolError::TooLarge { .. } => {
                    ProviderError::Transport(format!("remote provider: {e}"))
                }
                _ => ProviderError::Unavailable(format!("remote provider: {e}")),
            })?;
        if status != 200 {
            return Err(ProviderError::Failed(format!(
                "remote provider answered HTTP {status}"
            )));
        }
        let answer: Value = serde_json::from_slice(&body).map_err(|e| {
            ProviderError::Failed(format!("remote provider answered malformed JSON: {e}"))
        })?;
        let Value::Object(mut answer) = answer else {
            return Err(ProviderError::Failed(
                "remote provider answered JSON that is not an object".into(),
            ));
        };
        if let Some(result) = answer.remove("result") {
            return Ok(result);
        }
        let message = answer
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("remote provider failed");
        Err(ProviderError::Failed(message.to_owned()))
    }
}

impl Provider for RemoteProvider {
    fn descriptors(&self) -> Vec<Descriptor> {
        self.descriptors.clone()
    }

    fn ready(&self, _capability: &QualifiedId) -> bool {
        self.live()
    }

    fn call<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async move {
            if !self.post_only.load(Ordering::Relaxed) {
                match self.multiplexed.call(context, &payload).await {
                    Ok(result) => return Ok(result),
                    Err(MuxError::Call(error)) => return Err(error),
                    Err(MuxError::NotServed(status)) => {
                        tracing::info!(
                            authority = %self.authority,
                            status,
                            "remote provider does not serve multiplexed calls; using POST"
                        );
                        self.post_only.store(true, Ordering::Relaxed);
                    }
                }
            }
            self.post(context, &payload).await
        }
        .boxed()
    }

    fn stream<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
        input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        crate::remote_stream::stream(
            &self.url,
            self.payload_limit,
            context,
            payload,
            input,
            output,
        )
        .boxed()
    }
}

/// The leases of every remote provider on this node.
pub struct Leases {
    remotes: Mutex<HashMap<(TenantId, ProviderId), Arc<RemoteProvider>>>,
    pool: Arc<HttpPool>,
    /// Multiplexed call connections per `host:port`, kept across renewals.
    multiplexed: Mutex<HashMap<String, Arc<MuxHost>>>,
}

impl Default for Leases {
    fn default() -> Self {
        Self {
            remotes: Mutex::new(HashMap::new()),
            pool: Arc::new(HttpPool::new(256, Duration::from_secs(2))),
            multiplexed: Mutex::new(HashMap::new()),
        }
    }
}

impl Leases {
    /// Records a (re)registration: the lease starts over and calls route to `transport`.
    pub fn renew(
        &self,
        state: &AppState,
        tenant: &TenantId,
        provider: &ProviderId,
        transport: RemoteTransport,
        descriptors: Vec<Descriptor>,
    ) {
        let multiplexed = Arc::clone(
            self.multiplexed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(transport.authority.clone())
                .or_insert_with(|| {
                    Arc::new(MuxHost::new(
                        &transport.authority,
                        state.config.remote_connections,
                        crate::remote_stream::message_limit(state.config.max_payload_bytes),
                    ))
                }),
        );
        let remote = Arc::new(RemoteProvider {
            authority: transport.authority,
            url: transport.url,
            descriptors,
            expires_ms: AtomicU64::new(
                now_ms()
                    .saturating_add(u64::try_from(transport.lease.as_millis()).unwrap_or(u64::MAX)),
            ),
            lapsed: AtomicBool::new(false),
            pool: Arc::clone(&self.pool),
            multiplexed,
            post_only: AtomicBool::new(false),
            payload_limit: state.config.max_payload_bytes,
        });
        state
            .fabric
            .attach(tenant.clone(), provider.clone(), remote.clone());
        state.registry.set_provider_live(tenant, provider, true);
        self.remotes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((tenant.clone(), provider.clone()), remote);
    }

    /// Forgets a provider (unregistered, or re-registered without an http transport), and
    /// closes the multiplexed connections to its address unless another provider there
    /// still holds a registration.
    pub fn forget(&self, tenant: &TenantId, provider: &ProviderId) {
        let mut remotes = self.remotes.lock().unwrap_or_else(|p| p.into_inner());
        let Some(gone) = remotes.remove(&(tenant.clone(), provider.clone())) else {
            return;
        };
        if remotes.values().any(|r| r.authority == gone.authority) {
            return;
        }
        let host = self
            .multiplexed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&gone.authority);
        if let Some(host) = host {
            host.close();
        }
    }

    /// Marks every provider whose lease just lapsed.
    pub fn sweep(&self, state: &AppState) {
        let remotes = self.remotes.lock().unwrap_or_else(|p| p.into_inner());
        for ((tenant, provider), remote) in remotes.iter() {
            if !remote.live() && !remote.lapsed.swap(true, Ordering::SeqCst) {
                tracing::warn!(%tenant, %provider, "remote provider lease lapsed");
                state.registry.set_provider_live(tenant, provider, false);
            }
        }
    }
}

/// Checks leases a few times a second for as long as the node runs.
pub async fn sweep_forever(state: AppState) {
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        state.leases.sweep(&state);
    }
}
