//! Streaming calls to remote HTTP providers: one WebSocket per call to
//! `ws://host:port/weft/v1/stream` (the protocol is in `docs/remote-providers.md`; the
//! message types are `weft_provider::wire`, shared with the SDK's server side).
//!
//! The node sends the call line, then the caller's chunks and `end` as the fabric hands them
//! over; it reads the provider's messages one at a time and reads the next only after the
//! fabric's [`ChunkSink::send`] accepted the previous chunk, so a slow caller holds the
//! provider back through TCP. Writing happens on a small task of its own, so a provider that
//! reads its input slowly never stops the node from reading output. When the call ends
//! without the provider's terminal (cancel, deadline, a broken contract), dropping the
//! stream's future tells that task to send `cancel` and close.

use std::convert::Infallible;
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use weft_provider::wire::{self, NodeMessage, ProviderMessage};
use weft_provider::{CallContext, ChunkSink, ChunkSource, ProviderError};

/// Room for the framing around one payload-sized chunk in a provider message.
pub const FRAMING_ROOM: usize = 64 * 1024;

/// The longest message the node takes from a remote provider, on any route: one
/// payload-sized value plus [`FRAMING_ROOM`].
pub fn message_limit(payload_limit: usize) -> usize {
    payload_limit.saturating_add(FRAMING_ROOM)
}
/// How long dialing and the WebSocket handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the node tries to deliver `cancel` and its close before dropping the socket.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

pub(crate) type Socket = WebSocketStream<TcpStream>;

/// Runs one streaming call against the remote provider at `url` (`http://host:port`).
/// `payload_limit` is the node's `max_payload_bytes`; provider messages may exceed it by
/// [`FRAMING_ROOM`].
pub async fn stream(
    url: &str,
    payload_limit: usize,
    context: &CallContext,
    payload: Value,
    input: Option<ChunkSource>,
    output: ChunkSink,
) -> Result<Option<Value>, ProviderError> {
    let socket = connect(url, message_limit(payload_limit)).await?;
    let (write, mut read) = socket.split();
    let (outgoing, queue) = mpsc::channel(1);
    let (ending, ended) = oneshot::channel();
    tokio::spawn(write_loop(write, queue, ended));
    let mut ending = Ending(Some(ending));
    let line = wire::call_line(context, &payload);
    // A writer that is already gone shows up as a broken socket on the read side.
    let _ = outgoing.send(line).await;
    let received = tokio::select! {
        received = receive(&mut read, &output) => received,
        never = forward(input, outgoing) => match never {},
    };
    if received.is_ok() {
        // The provider sent its terminal: close without `cancel`.
        ending.close();
    }
    match received? {
        Terminal::Completed(result) => Ok(result),
        Terminal::Error(message) => Err(ProviderError::Failed(message)),
    }
}

/// Why a WebSocket to a provider could not be opened.
pub(crate) enum DialError {
    /// The provider answered the upgrade with this HTTP status instead of switching
    /// protocols: it is up, but does not serve that route.
    Refused(u16),
    /// Nothing usable answered (refused, reset, timed out, not HTTP).
    Unreachable(String),
}

/// Dials `authority` (`host:port`) with TCP_NODELAY and opens a WebSocket on `path`, taking
/// messages of at most `message_limit` bytes.
pub(crate) async fn dial(
    authority: &str,
    path: &str,
    message_limit: usize,
) -> Result<Socket, DialError> {
    let unreachable = |e: &dyn std::fmt::Display| DialError::Unreachable(e.to_string());
    let dial = async {
        let tcp = TcpStream::connect(authority)
            .await
            .map_err(|e| unreachable(&e))?;
        tcp.set_nodelay(true).map_err(|e| unreachable(&e))?;
        let config = WebSocketConfig::default()
            .read_buffer_size(wire::WEBSOCKET_READ_BUFFER)
            .max_message_size(Some(message_limit))
            .max_frame_size(Some(message_limit));
        let request = format!("ws://{authority}{path}");
        tokio_tungstenite::client_async_with_config(request, tcp, Some(config))
            .await
            .map(|(socket, _)| socket)
            .map_err(|e| match e {
                WsError::Http(response) => DialError::Refused(response.status().as_u16()),
                other => unreachable(&other),
            })
    };
    tokio::time::timeout(CONNECT_TIMEOUT, dial)
        .await
        .map_err(|_| unreachable(&"connecting timed out"))?
}

/// Opens the streaming WebSocket of the provider at `url`.
async fn connect(url: &str, message_limit: usize) -> Result<Socket, ProviderError> {
    let authority = url.strip_prefix("http://").unwrap_or(url);
    dial(authority, wire::STREAM_PATH, message_limit)
        .await
        .map_err(|e| match e {
            DialError::Refused(status) => {
                ProviderError::Failed(format!("remote provider refused the stream: HTTP {status}"))
            }
            DialError::Unreachable(why) => {
                ProviderError::Unavailable(format!("remote provider unreachable: {why}"))
            }
        })
}

/// The provider's terminal.
enum Terminal {
    Completed(Option<Value>),
    Error(String),
}

fn broken(why: &str) -> ProviderError {
    ProviderError::Failed(format!(
        "the remote provider's stream ended without a terminal message: {why}"
    ))
}

/// Reads provider messages until the terminal, handing each chunk to the fabric and reading
/// the next message only once the fabric took it.
async fn receive(
    read: &mut SplitStream<Socket>,
    output: &ChunkSink,
) -> Result<Terminal, ProviderError> {
    loop {
        let text = match read.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            // Framing broken: `transport_error`, as for a managed child past its window.
            Some(Ok(Message::Binary(_))) => {
                return Err(ProviderError::Transport(
                    "the remote provider sent a binary message".into(),
                ));
            }
            Some(Ok(Message::Close(_))) | None => return Err(broken("the socket closed")),
            Some(Err(WsError::Capacity(e))) => {
                return Err(ProviderError::Transport(format!(
                    "the remote provider sent a message over the limit: {e}"
                )));
            }
            Some(Err(e)) => return Err(broken(&e.to_string())),
        };
        match ProviderMessage::parse(text.as_str()) {
            Ok(ProviderMessage::Chunk(chunk)) => output
                .send(chunk)
                .await
                .map_err(|e| ProviderError::Failed(e.to_string()))?,
            Ok(ProviderMessage::Completed(result)) => return Ok(Terminal::Completed(result)),
            Ok(ProviderMessage::Error(message)) => return Ok(Terminal::Error(message)),
            Err(e) => {
                return Err(ProviderError::Transport(format!(
                    "the remote provider sent a malformed message: {e}"
                )));
            }
        }
    }
}

/// Forwards the caller's chunks, then `end`; never returns (the call ends on the read side).
async fn forward(input: Option<ChunkSource>, outgoing: mpsc::Sender<String>) -> Infallible {
    if let Some(mut input) = input {
        let mut open = true;
        while let Some(chunk) = input.next().await {
            let text = NodeMessage::Chunk(chunk).into_text();
            if outgoing.send(text).await.is_err() {
                open = false;
                break;
            }
        }
        if open {
            let _ = outgoing.send(NodeMessage::End.into_text()).await;
        }
    }
    std::future::pending().await
}

/// How the writer finishes the socket.
enum Close {
    /// After the provider's terminal: a plain close.
    Done,
    /// Anything else: `cancel`, then close.
    Cancel,
}

/// Tells the writer how to finish; dropping it unfinished (the fabric dropped the call on
/// cancel or deadline, or the provider broke the protocol) means [`Close::Cancel`].
struct Ending(Option<oneshot::Sender<Close>>);

impl Ending {
    fn close(&mut self) {
        if let Some(ending) = self.0.take() {
            let _ = ending.send(Close::Done);
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        if let Some(ending) = self.0.take() {
            let _ = ending.send(Close::Cancel);
        }
    }
}

/// Writes queued messages until told how the call ended, then finishes the socket (bounded
/// by [`CLOSE_WAIT`], so a provider that stopped reading cannot keep it open).
async fn write_loop(
    mut write: SplitSink<Socket, Message>,
    mut queue: mpsc::Receiver<String>,
    mut ending: oneshot::Receiver<Close>,
) {
    let mut open = true;
    let close = loop {
        tokio::select! {
            biased;
            close = &mut ending => break close.unwrap_or(Close::Cancel),
            text = queue.recv(), if open => match text {
                Some(text) => tokio::select! {
                    biased;
                    close = &mut ending => break close.unwrap_or(Close::Cancel),
                    sent = write.send(Message::text(text)) => if sent.is_err() { return },
                },
                None => open = false,
            },
        }
    };
    let finish = async {
        if matches!(close, Close::Cancel) {
            write
                .send(Message::text(NodeMessage::Cancel.into_text()))
                .await?;
        }
        write.close().await
    };
    let _ = tokio::time::timeout(CLOSE_WAIT, finish).await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::time::Instant;

    use axum::Router;
    use axum::extract::ws::{Message as AxumMessage, WebSocketUpgrade};
    use axum::routing::get;
    use serde_json::json;
    use weft_contract::{CapabilityId, CapabilityVersion, DescriptorRevision, QualifiedId};

    use super::*;

    /// A fake provider that answers the call line with `script`, then reports every later
    /// message it reads on the returned channel.
    async fn fake(script: Vec<String>) -> (String, mpsc::UnboundedReceiver<String>) {
        let (seen, seen_rx) = mpsc::unbounded_channel();
        let app = Router::new().route(
            wire::STREAM_PATH,
            get(move |upgrade: WebSocketUpgrade| async move {
                upgrade.on_upgrade(move |mut socket| async move {
                    let _line = socket.recv().await;
                    for text in script {
                        let _ = socket.send(AxumMessage::Text(text.into())).await;
                    }
                    while let Some(Ok(message)) = socket.recv().await {
                        if let AxumMessage::Text(text) = message {
                            let _ = seen.send(text.to_string());
                        }
                    }
                })
            }),
        );
        (serve(app).await, seen_rx)
    }

    /// Serves `app` on an ephemeral port; returns its `http://` URL.
    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn context() -> CallContext {
        CallContext {
            call_id: "c-1".into(),
            capability: QualifiedId::new(
                CapabilityId::parse("t.stream").unwrap(),
                CapabilityVersion::parse("1.0.0").unwrap(),
            ),
            revision: DescriptorRevision::parse(&format!("sha256:{}", "0".repeat(64))).unwrap(),
            deadline: Instant::now() + Duration::from_secs(10),
        }
    }

    async fn run(url: &str, limit: usize) -> (Result<Option<Value>, ProviderError>, Vec<Value>) {
        let (tx, mut rx) = mpsc::channel(8);
        let result = stream(url, limit, &context(), json!({}), None, ChunkSink::new(tx)).await;
        let mut chunks = Vec::new();
        while let Ok(chunk) = rx.try_recv() {
            chunks.push(chunk);
        }
        (result, chunks)
    }

    fn chunk(n: u64) -> String {
        ProviderMessage::Chunk(json!({ "n": n })).into_text()
    }

    #[tokio::test]
    async fn terminals_and_broken_streams_map_to_provider_errors() {
        let completed = ProviderMessage::Completed(Some(json!({"count": 1}))).into_text();
        let (url, _) = fake(vec![chunk(1), completed]).await;
        let (result, chunks) = run(&url, 1024).await;
        assert_eq!(result, Ok(Some(json!({"count": 1}))));
        assert_eq!(chunks, [json!({"n": 1})]);

        let error = ProviderMessage::Error("nope".into()).into_text();
        let (url, _) = fake(vec![chunk(1), error]).await;
        assert_eq!(
            run(&url, 1024).await.0,
            Err(ProviderError::Failed("nope".into()))
        );

        for (script, expected) in [
            (
                vec![chunk(1), r#"{"type": "started"}"#.to_owned()],
                "malformed",
            ),
            (vec![chunk(1), "not json".to_owned()], "malformed"),
            // Over the payload limit (0 here) plus the framing room.
            (
                vec![ProviderMessage::Chunk(json!("x".repeat(FRAMING_ROOM))).into_text()],
                "limit",
            ),
        ] {
            let (url, _) = fake(script).await;
            match run(&url, 0).await.0 {
                Err(ProviderError::Transport(message)) => {
                    assert!(message.contains(expected), "{message}")
                }
                other => panic!("expected a failure mentioning {expected}, got {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_closed_socket_is_never_a_completion() {
        // The fake closes its side right after the script (the handler returns on close).
        let app = Router::new().route(
            wire::STREAM_PATH,
            get(|upgrade: WebSocketUpgrade| async move {
                upgrade.on_upgrade(|mut socket| async move {
                    let _line = socket.recv().await;
                    let _ = socket.send(AxumMessage::Text(chunk(1).into())).await;
                })
            }),
        );
        let url = serve(app).await;
        match run(&url, 1024).await.0 {
            Err(ProviderError::Failed(message)) => {
                assert!(message.contains("without a terminal"), "{message}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn nothing_listening_is_unavailable() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        assert!(matches!(
            run(&url, 1024).await.0,
            Err(ProviderError::Unavailable(_))
        ));
    }

    #[tokio::test]
    async fn dropping_the_call_sends_cancel() {
        let (url, mut seen) = fake(vec![chunk(1)]).await;
        let (tx, mut rx) = mpsc::channel(8);
        let context = context();
        let mut call = Box::pin(stream(
            &url,
            1024,
            &context,
            json!({}),
            None,
            ChunkSink::new(tx),
        ));
        // Run the call until its first chunk arrived, then drop it (as the fabric does on
        // cancel or deadline).
        tokio::select! {
            _ = &mut call => panic!("the call ended without a terminal"),
            chunk = rx.recv() => assert_eq!(chunk, Some(json!({"n": 1}))),
        }
        drop(call);
        let cancel = tokio::time::timeout(Duration::from_secs(10), seen.recv()).await;
        assert_eq!(cancel.unwrap().as_deref(), Some(r#"{"type":"cancel"}"#));
    }
}
