//! WebSocket pieces of `weft bench stream`: a lean caller of the node's `GET /v1/streams`
//! protocol, and the direct baseline — the same chunk producer served over a bare axum
//! WebSocket, without the fabric.
//!
//! The caller sends the call envelope as its first message, then reads text frames until
//! the terminal. It does not parse the frames: it recognizes their `kind` by substring
//! (a chunk's payload `{"n": …}` cannot contain one), so the client spends as little of the
//! shared cores as possible.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::WebSocketUpgrade;
use axum::extract::ws::{Message as ServerMessage, WebSocket};
use axum::routing::get;
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::BenchError;
use crate::servers::{InProcess, start};

/// Where streams are opened: the node's `/v1/streams` (with its token) or the direct server.
#[derive(Debug, Clone)]
pub struct WsTarget {
    /// Name in tables and errors.
    pub name: String,
    /// Server address.
    pub addr: SocketAddr,
    /// Path of the WebSocket endpoint.
    pub path: String,
    /// Bearer token, if the server wants one.
    pub token: Option<String>,
}

/// A client-side WebSocket over a plain TCP stream.
pub type Client = WebSocketStream<TcpStream>;

/// Client settings: `read_buffer` is the read buffer each connection allocates up front.
pub fn client_config(read_buffer: usize) -> WebSocketConfig {
    WebSocketConfig::default().read_buffer_size(read_buffer)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// What one frame was, as far as the caller cares.
enum Seen {
    Started,
    Chunk,
    Completed,
}

fn classify(text: &str) -> Result<Seen, String> {
    let bytes = text.as_bytes();
    if contains(bytes, br#""kind":"chunk""#) {
        Ok(Seen::Chunk)
    } else if contains(bytes, br#""kind":"started""#) {
        Ok(Seen::Started)
    } else if contains(bytes, br#""kind":"completed""#) {
        Ok(Seen::Completed)
    } else {
        Err(format!("unexpected message: {text}"))
    }
}

impl WsTarget {
    /// Connects (TCP_NODELAY), upgrades, and sends `envelope` as the first message.
    pub async fn open(&self, envelope: &str, config: WebSocketConfig) -> Result<Client, String> {
        let tcp = TcpStream::connect(self.addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
        let mut request = format!("ws://{}{}", self.addr, self.path)
            .into_client_request()
            .map_err(|e| format!("request: {e}"))?;
        if let Some(token) = &self.token {
            let value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|e| format!("token: {e}"))?;
            request.headers_mut().insert("authorization", value);
        }
        let (mut ws, _) = tokio_tungstenite::client_async_with_config(request, tcp, Some(config))
            .await
            .map_err(|e| format!("upgrade: {e}"))?;
        ws.send(Message::text(envelope))
            .await
            .map_err(|e| format!("sending the envelope: {e}"))?;
        Ok(ws)
    }
}

/// Reads frames until `started` (the stream is open on the other side).
pub async fn until_started(ws: &mut Client) -> Result<(), String> {
    let text = next_text(ws).await?;
    match classify(&text)? {
        Seen::Started => Ok(()),
        _ => Err(format!("expected started, got {text}")),
    }
}

async fn next_text(ws: &mut Client) -> Result<String, String> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => return Ok(text.as_str().to_owned()),
            Some(Ok(Message::Close(_))) | None => {
                return Err("the socket closed before the terminal".into());
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("read: {e}")),
        }
    }
}

/// Reads a whole stream to its `completed` terminal; returns (chunks, chunk bytes), and
/// fails unless exactly `expected` chunks arrived.
pub async fn read_to_end(ws: &mut Client, expected: u64) -> Result<(u64, u64), String> {
    let (mut chunks, mut bytes) = (0_u64, 0_u64);
    loop {
        let text = match ws.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) | None => {
                return Err("the socket closed before the terminal".into());
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(format!("read: {e}")),
        };
        match classify(text.as_str())? {
            Seen::Chunk => {
                chunks += 1;
                bytes += text.len() as u64;
            }
            Seen::Started => {}
            Seen::Completed => break,
        }
    }
    if chunks != expected {
        return Err(format!("{chunks} chunks arrived, {expected} expected"));
    }
    Ok((chunks, bytes))
}

/// A frame exactly as the node serializes one (same keys, same order).
#[derive(Serialize)]
struct DirectFrame<'a> {
    call_id: &'a str,
    direction: &'static str,
    sequence: u64,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<Value>,
}

fn text(frame: &DirectFrame<'_>) -> ServerMessage {
    ServerMessage::Text(serde_json::to_string(frame).unwrap_or_default().into())
}

/// One direct stream: the envelope's `payload.to` chunks `{"n": …}`, produced and sent the
/// way the built-in `count` produces them, framed as the node frames them — with no
/// fabric between (no validation, no queues, no tasks). With `batch` 1 every frame is
/// flushed on its own (a plain producer); with more, frames are flushed `batch` at a time
/// (the node coalesces up to 64 queued frames per write: this is its ideal writer).
async fn direct_stream(mut socket: WebSocket, batch: u64) {
    let to = match socket.recv().await {
        Some(Ok(ServerMessage::Text(envelope))) => serde_json::from_str::<Value>(&envelope)
            .ok()
            .and_then(|v| v["payload"]["to"].as_u64())
            .unwrap_or(0),
        _ => return,
    };
    let call_id = "direct-0123456789abcdef0123";
    let mut frame = DirectFrame {
        call_id,
        direction: "provider_to_caller",
        sequence: 0,
        kind: "started",
        payload: None,
    };
    if socket.send(text(&frame)).await.is_err() {
        return;
    }
    for n in 1..=to {
        frame.sequence = n;
        frame.kind = "chunk";
        frame.payload = Some(json!({ "n": n }));
        let sent = if n % batch == 0 || n == to {
            socket.send(text(&frame)).await
        } else {
            socket.feed(text(&frame)).await
        };
        if sent.is_err() {
            return;
        }
    }
    frame.sequence = to + 1;
    frame.kind = "completed";
    frame.payload = Some(json!({ "count": to }));
    let _ = socket.send(text(&frame)).await;
    let _ = socket.close().await;
}

/// Path of the direct baseline that flushes every frame.
pub const DIRECT_PATH: &str = "/v1/streams";
/// Path of the direct baseline that flushes 64 frames at a time.
pub const DIRECT_BATCHED_PATH: &str = "/v1/streams-batched";

/// The direct baselines at [`DIRECT_PATH`] and [`DIRECT_BATCHED_PATH`] (no auth), on
/// their own runtime.
pub fn direct_server(workers: usize) -> Result<InProcess, BenchError> {
    let app = Router::new()
        .route(
            DIRECT_PATH,
            get(|upgrade: WebSocketUpgrade| async move {
                upgrade.on_upgrade(|socket| direct_stream(socket, 1))
            }),
        )
        .route(
            DIRECT_BATCHED_PATH,
            get(|upgrade: WebSocketUpgrade| async move {
                upgrade.on_upgrade(|socket| direct_stream(socket, 64))
            }),
        );
    start("stream-direct", workers, app)
}
