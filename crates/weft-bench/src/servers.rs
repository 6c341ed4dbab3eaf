//! In-process servers the scenarios compare the node against.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::post;
use axum::serve::ListenerExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_provider::{CallContext, Provider, ProviderError};

use crate::BenchError;
use crate::load::runtime;

/// A server running on its own runtime; stops when dropped.
pub struct InProcess {
    /// Where it listens.
    pub addr: SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

/// Serves `app` on 127.0.0.1 (ephemeral port, TCP_NODELAY) on a runtime of its own.
pub(crate) fn start(name: &str, workers: usize, app: Router) -> Result<InProcess, BenchError> {
    let runtime = runtime(name, workers)?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .map_err(BenchError::io("binding an in-process server"))?;
    let addr = listener
        .local_addr()
        .map_err(BenchError::io("reading a bound address"))?;
    runtime.spawn(async move {
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let _ = axum::serve(listener, app).await;
    });
    Ok(InProcess {
        addr,
        _runtime: runtime,
    })
}

/// The ceiling of this machine: a bare axum JSON echo at `POST /echo` (parse into a
/// `Value`, serialize back) on the same HTTP stack and allocator as the node, with as many
/// workers as the node has.
pub fn limit_echo(workers: usize) -> Result<InProcess, BenchError> {
    let app = Router::new().route(
        "/echo",
        post(|axum::Json(v): axum::Json<Value>| async move { axum::Json(v) }),
    );
    start("limit-echo", workers, app)
}

/// The descriptor of the remote echo: `{"text": string}` in and out.
pub fn remote_echo_descriptor() -> Value {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                      "required": ["text"], "additionalProperties": false});
    json!({"id": "remote.echo", "version": "1.0.0", "title": "Echo (remote)",
           "description": "Echo served by a remote provider.", "input_schema": text, "output_schema": text})
}

struct RemoteEcho(Descriptor);

impl Provider for RemoteEcho {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.0.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        Box::pin(async move { Ok(payload) })
    }
}

/// An echo served by the provider SDK's HTTP server, as a remote provider process would
/// serve it; returns the server and the descriptor's revision.
pub fn remote_echo(workers: usize) -> Result<(InProcess, String), BenchError> {
    let descriptor = Descriptor::from_value(&remote_echo_descriptor(), &Limits::default())
        .map_err(|e| BenchError::Node(format!("remote echo descriptor: {e}")))?;
    let revision = descriptor.revision().to_string();
    let app = weft_provider::http::router(Arc::new(RemoteEcho(descriptor)));
    Ok((start("remote-echo", workers, app)?, revision))
}
