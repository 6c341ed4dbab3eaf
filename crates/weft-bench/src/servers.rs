//! In-process servers the scenarios compare the node against.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
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

fn remote_echo_built() -> Result<Descriptor, BenchError> {
    Descriptor::from_value(&remote_echo_descriptor(), &Limits::default())
        .map_err(|e| BenchError::Node(format!("remote echo descriptor: {e}")))
}

/// The remote echo descriptor's revision (what a caller pins).
pub fn remote_echo_revision() -> Result<String, BenchError> {
    Ok(remote_echo_built()?.revision().to_string())
}

/// An echo served by the provider SDK's HTTP server, as a remote provider process would
/// serve it.
pub fn remote_echo(workers: usize) -> Result<InProcess, BenchError> {
    let app = weft_provider::http::router(Arc::new(RemoteEcho(remote_echo_built()?)));
    start("remote-echo", workers, app)
}

/// A server the scenarios compare the node against. Each runs in a child process of its
/// own (`weft bench-peer NAME`), as the node does: a server inside the load generator's
/// process would switch threads more cheaply than one across a process boundary, and the
/// comparison would flatter it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// [`limit_echo`].
    LimitEcho,
    /// [`remote_echo`].
    RemoteEcho,
    /// [`crate::mcp::mcp_echo`].
    McpEcho,
}

impl Peer {
    /// Every peer.
    pub const ALL: [Peer; 3] = [Peer::LimitEcho, Peer::RemoteEcho, Peer::McpEcho];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Peer::LimitEcho => "limit-echo",
            Peer::RemoteEcho => "remote-echo",
            Peer::McpEcho => "mcp-echo",
        }
    }

    /// The peer called `name`.
    pub fn from_name(name: &str) -> Option<Peer> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Serves `peer` from this process until stdin closes (the parent's end of the pipe goes
/// away with it); prints `listening on ADDR` once it accepts connections.
pub fn serve_peer(peer: Peer, workers: usize) -> Result<(), BenchError> {
    let server = match peer {
        Peer::LimitEcho => limit_echo(workers)?,
        Peer::RemoteEcho => remote_echo(workers)?,
        Peer::McpEcho => crate::mcp::mcp_echo(workers)?,
    };
    let mut out = std::io::stdout();
    writeln!(out, "listening on {}", server.addr)
        .and_then(|()| out.flush())
        .map_err(BenchError::io("announcing the peer's address"))?;
    let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
    Ok(())
}

/// A [`Peer`] running as a child process; killed when dropped.
pub struct PeerProcess {
    /// Where it listens.
    pub addr: SocketAddr,
    child: Child,
}

impl PeerProcess {
    /// Starts `weft bench-peer NAME --workers N` and waits for its address.
    pub fn start(weft: &Path, peer: Peer, workers: usize) -> Result<Self, BenchError> {
        let mut child = Command::new(weft)
            .args(["bench-peer", peer.name(), "--workers", &workers.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(BenchError::io("starting a bench peer"))?;
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            BufReader::new(stdout)
                .read_line(&mut line)
                .map_err(BenchError::io("reading a bench peer's address"))?;
        }
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|a| a.parse().ok());
        match addr {
            Some(addr) => Ok(Self { addr, child }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(BenchError::Node(format!(
                    "bench peer {} did not start (said {line:?})",
                    peer.name()
                )))
            }
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
