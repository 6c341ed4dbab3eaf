//! Building the router and running the node.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use thiserror::Error;
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;
use weft_contract::Limits;
use weft_fabric::builtin::{BUILTIN_PROVIDER, Builtins};
use weft_fabric::{Fabric, FabricOptions};
use weft_provider::Provider;
use weft_registry::{
    NodeId, ProviderId, ProviderRegistration, RedbStore, Registry, RegistryOptions, TenantId,
};

use crate::agents::{self, AgentsSnapshot};
use crate::config::{ConfigError, ServerConfig};
use crate::error::ApiError;
use crate::features::FeatureCatalog;
use crate::state::{AppState, Inner};
use crate::{idempotency, layers, openapi, routes};

/// Why the node could not start or stopped abnormally.
#[derive(Debug, Error)]
pub enum ServeError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The data directory or a file in it is unusable.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// Where.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The registry could not be opened.
    #[error("registry: {0}")]
    Registry(#[from] weft_registry::RegistryError),
}

/// The `/v1` routes, behind authentication and idempotency.
fn api_routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route(
            "/v1/capabilities",
            get(routes::capabilities::list_capabilities),
        )
        .route(
            "/v1/capabilities/{capability_id}",
            get(routes::capabilities::get_capability),
        )
        .route(
            "/v1/capabilities/{capability_id}/versions/{version}",
            get(routes::capabilities::get_version),
        )
        .route(
            "/v1/providers/{provider_id}",
            put(routes::providers::register).get(routes::providers::get_provider),
        )
        .route(
            "/v1/providers/{provider_id}/unregister",
            post(routes::providers::unregister),
        )
        .route("/v1/taxonomy", get(routes::taxonomy::list_taxonomy))
        .route("/v1/verify", post(routes::verify::verify))
        .route(
            "/v1/taxonomy/{capability_id}",
            get(routes::taxonomy::get_taxonomy_entry),
        )
        .route("/v1/nodes", get(routes::nodes::list_nodes))
        .route("/v1/nodes/{node_id}", get(routes::nodes::get_node))
        .route("/v1/agents", get(routes::agents::list_agents))
        .route("/v1/agents/{name}", get(routes::agents::get_agent))
        .route("/v1/events", get(routes::events::events))
        .route("/v1/calls", post(routes::calls::call))
        .route("/v1/streams", get(routes::streams::streams))
        .route(
            "/v1/tokens",
            post(routes::admin::create_token).get(routes::admin::list_tokens),
        )
        .route(
            "/v1/tokens/{token_id}/revoke",
            post(routes::admin::revoke_token),
        )
        .route(
            "/v1/tenants",
            post(routes::admin::create_tenant).get(routes::admin::list_tenants),
        )
        .route(
            "/v1/tenants/{tenant}/compatibility",
            get(routes::compatibility::get_settings).put(routes::compatibility::put_settings),
        )
        .route(
            "/v1/compatibility/check",
            post(routes::compatibility::check),
        )
        // Layers run bottom-up: authenticate first, then idempotency (which needs the tenant).
        .layer(idempotency::IdempotencyLayer::new(state.clone()))
        .layer(layers::AuthLayer::new(state))
}

async fn not_found() -> ApiError {
    ApiError::new("not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        "method_not_allowed",
        "this route does not accept that method",
    )
}

/// The whole application, as the service each connection runs.
pub fn node_service(
    state: AppState,
) -> impl tower::Service<
    Request<hyper::body::Incoming>,
    Response = axum::response::Response,
    Error = Infallible,
    Future: Send + 'static,
> + Clone
+ Send
+ 'static {
    let max_body = state.config.max_body_bytes;
    let routed = Router::new()
        .route("/healthz", get(routes::health::healthz))
        .route("/readyz", get(routes::health::readyz))
        .route("/openapi.json", get(|| async { Json(openapi::document()) }))
        .route("/metrics", get(routes::diagnostics::metrics))
        .route(
            "/v1/diagnostics/node",
            get(routes::diagnostics::node).route_layer(layers::AuthLayer::new(state.clone())),
        )
        .merge(api_routes(state.clone()))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    // The cross-cutting layers wrap the routed application once. Added with
    // `Router::layer` they would wrap every route instead, and each layer clones the whole
    // stack beneath it on every request (profiled: a tenth of a call's instructions).
    //
    // Request spans and events (tower-http's `TraceLayer`, all at DEBUG) are built only when
    // the log filter lets them through: at the default `info` they would be created and
    // dropped unseen on every request (profiled: 3% of a call's instructions).
    let trace = tracing::enabled!(target: "tower_http::trace", tracing::Level::DEBUG).then(|| {
        ServiceBuilder::new()
            .map_response(|response: axum::http::Response<_>| response.map(Body::new))
            .layer(TraceLayer::new_for_http())
    });
    ServiceBuilder::new()
        .map_request(|request: Request<hyper::body::Incoming>| request.map(Body::new))
        .layer(layers::RequestIdLayer)
        .option_layer(trace)
        .layer(DefaultBodyLimit::max(max_body))
        .service(routed)
}

/// Opens the data directory and registry, bootstrapping on first start. Returns the state
/// and, on first start, the new admin token's secret.
pub fn open(config: ServerConfig) -> Result<(AppState, Option<String>), ServeError> {
    let io = |what, path: &Path| {
        let path = path.display().to_string();
        move |source| ServeError::Io { what, path, source }
    };
    std::fs::create_dir_all(&config.data_dir)
        .map_err(io("create data directory", &config.data_dir))?;
    let store = RedbStore::open(&config.data_dir.join("weft.redb"))
        .map_err(weft_registry::RegistryError::from)?;
    let limits = Limits::default();
    let registry = Registry::open(
        Arc::new(store),
        RegistryOptions {
            event_retention: config.event_retention,
            idempotency_ttl: Duration::from_secs(config.idempotency_hours.saturating_mul(3600)),
            limits,
            default_policy: config.compatibility_policy,
            max_policy_overrides: config.max_compatibility_overrides,
        },
    )?;
    let secret = registry.bootstrap()?;
    if let Some(secret) = &secret {
        write_secret(&config.data_dir.join("admin.token"), secret)
            .map_err(io("write admin token", &config.data_dir))?;
    }
    let features = FeatureCatalog::build(&config.features)?;
    let fabric = build_fabric(&config, &registry)?;
    let agents = match &config.agents_dir {
        Some(dir) => agents::load(dir),
        None => AgentsSnapshot::default(),
    };
    let state = AppState(Arc::new(Inner {
        registry,
        fabric,
        leases: Default::default(),
        features,
        agents: RwLock::new(Arc::new(agents)),
        in_flight: Mutex::new(Default::default()),
        config,
        limits,
        shutting_down: Default::default(),
        shutdown: tokio::sync::watch::Sender::new(false),
    }));
    Ok((state, secret))
}

/// The call path, with the built-in providers attached (and registered in the default
/// tenant) unless disabled.
fn build_fabric(config: &ServerConfig, registry: &Registry) -> Result<Fabric, ServeError> {
    let invalid = |setting, message: String| ConfigError::Invalid { setting, message };
    let node_id = NodeId::parse(&config.node_id).map_err(|e| invalid("node_id", e.to_string()))?;
    let mut options = FabricOptions::new(node_id.clone());
    options.max_concurrent_calls = config.max_concurrent_calls;
    options.max_concurrent_streams = config.max_concurrent_streams;
    options.default_timeout = Duration::from_secs_f64(config.default_timeout_seconds);
    options.max_timeout = Duration::from_secs_f64(config.max_timeout_seconds);
    options.max_payload_bytes = config.max_payload_bytes;
    let fabric = Fabric::new(options);
    if config.builtins {
        let builtins = Builtins::new().map_err(|e| invalid("builtins", e.to_string()))?;
        let provider_id =
            ProviderId::parse(BUILTIN_PROVIDER).map_err(|e| invalid("builtins", e.to_string()))?;
        let tenant = TenantId::default_tenant();
        registry.register_provider(
            &tenant,
            provider_id.clone(),
            ProviderRegistration {
                node_id,
                transport: None,
                descriptors: builtins.descriptors(),
            },
        )?;
        fabric.attach(tenant, provider_id, Arc::new(builtins));
    }
    Ok(fabric)
}

/// Writes the admin token readable by its owner only.
fn write_secret(path: &Path, secret: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(path)?;
    writeln!(file, "{secret}")
}

/// Binds, serves until SIGTERM/SIGINT, then drains in-flight requests and closes the store.
///
/// `on_ready` is called with the bound address once the node accepts connections.
pub async fn serve(state: AppState, on_ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    let listen = state.config.listen;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| ServeError::Io {
            what: "listen on",
            path: listen.to_string(),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Io {
        what: "listen on",
        path: listen.to_string(),
        source,
    })?;
    let addr_file = state.config.data_dir.join("weft.url");
    if let Err(error) = std::fs::write(&addr_file, format!("http://{bound}\n")) {
        tracing::warn!(%error, "could not write {}", addr_file.display());
    }
    if let Some(dir) = state.config.agents_dir.clone() {
        tokio::spawn(agents::watch(state.clone(), dir));
    }
    let children = crate::managed::start_all(&state);
    tokio::spawn(crate::remote::sweep_forever(state.clone()));
    on_ready(bound);
    tracing::info!(%bound, "weft node ready");
    let shutdown_state = state.clone();
    let header_read_timeout = Duration::from_secs_f64(state.config.header_read_timeout_seconds);
    serve_connections(
        listener,
        node_service(state),
        header_read_timeout,
        async move {
            shutdown_signal().await;
            shutdown_state.shutting_down.store(true, Ordering::SeqCst);
            shutdown_state.shutdown.send_replace(true);
            tracing::info!("shutting down: draining in-flight requests");
        },
    )
    .await;
    crate::managed::stop_all(&children).await;
    tracing::info!("stopped; store closed");
    Ok(())
}

/// Accepts connections until `shutdown` resolves, then stops accepting, asks every open
/// connection to finish its in-flight request and close, and waits for them.
///
/// This is `axum::serve` plus what it cannot be told: a header read timeout. hyper enforces
/// it only when a timer is set, which `axum::serve` does not do, and its automatic
/// HTTP/1-or-2 detection waits for the first bytes with no deadline at all. So the node
/// serves HTTP/1.1 (with upgrades, for WebSockets) itself: a client that withholds or
/// trickles its request head, or idles on a keep-alive connection, is disconnected after
/// `header_read_timeout` instead of holding a connection and its task forever (slow-loris).
async fn serve_connections<S>(
    listener: tokio::net::TcpListener,
    app: S,
    header_read_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) where
    S: tower::Service<
            Request<hyper::body::Incoming>,
            Response = axum::response::Response,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static,
{
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;

    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    // Dropped to tell the connections to shut down; each holds a `closed` receiver until it
    // ends, so `all_closed.closed()` resolves when the last one is gone.
    let (stop, stop_rx) = tokio::sync::watch::channel(());
    let (all_closed, closed) = tokio::sync::watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let tcp = match accepted {
            Ok((tcp, _peer)) => tcp,
            Err(error) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Small responses written in pieces would otherwise wait for delayed ACKs (~40 ms).
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let connection = builder
            .serve_connection(TokioIo::new(tcp), TowerToHyperService::new(app.clone()))
            .with_upgrades();
        let mut stop_rx = stop_rx.clone();
        let closed = closed.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let mut stopping = false;
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(error) = result {
                            tracing::trace!(%error, "connection ended with an error");
                        }
                        break;
                    }
                    _ = stop_rx.changed(), if !stopping => {
                        stopping = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(closed);
        });
    }
    drop(listener);
    drop(stop);
    drop(closed);
    all_closed.closed().await;
}

async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
