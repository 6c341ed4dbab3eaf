//! `GET /weft/v1/stream`: one streaming call per WebSocket, driving [`Provider::stream`].
//!
//! The node's first message is the call line; then it sends `chunk`, `end` and `cancel`
//! messages, and the SDK sends the provider's `chunk`s followed by exactly one `completed` or
//! `error`, then closes. Flow control: the provider's input queue and output queue are
//! bounded (`stream_queue`); the SDK reads the next node message only once the input queue
//! has room, and writes output only as fast as the socket takes it, so a slow side holds the
//! other back through TCP instead of growing memory. Cancellation (a `cancel` message, the
//! socket closing, or the deadline passing) drops the provider's future, as the in-process
//! fabric does.
//!
//! [`Provider::stream`]: crate::Provider::stream

use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use futures_util::future::BoxFuture;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::{CallLine, Served};
use crate::wire::{NodeMessage, ProviderMessage};
use crate::{CallContext, ChunkSink, ChunkSource, ProviderError};

/// How long the SDK waits for the call line after the upgrade.
const CALL_LINE_WAIT: Duration = Duration::from_secs(10);
/// How long past the call's deadline the SDK waits for the node's `cancel` before ending
/// the call itself (the node owns the deadline; this only guards against a vanished node).
const DEADLINE_GRACE: Duration = Duration::from_secs(1);

/// Upgrades to the streaming WebSocket, with the configured message limit.
pub(super) async fn upgrade(State(served): State<Served>, upgrade: WebSocketUpgrade) -> Response {
    super::configured(upgrade, &served.options).on_upgrade(move |socket| session(served, socket))
}

fn text(message: ProviderMessage) -> Message {
    Message::Text(message.into_text().into())
}

/// The call line, decoded: the context, the payload, and whether the call takes chunks.
async fn open(
    served: &Served,
    read: &mut SplitStream<WebSocket>,
) -> Result<(CallContext, Value, bool), String> {
    let line = match tokio::time::timeout(CALL_LINE_WAIT, read.next()).await {
        Ok(Some(Ok(Message::Text(text)))) => serde_json::from_str::<CallLine>(text.as_str())
            .map_err(|e| format!("malformed call line: {e}"))?,
        Ok(Some(Ok(_))) => return Err("the first message must be the call line (text)".into()),
        _ => return Err("no call line arrived".into()),
    };
    let (context, payload) = line.open()?;
    let has_input = served
        .provider
        .descriptors()
        .iter()
        .find(|d| d.qualified_id() == context.capability)
        .map(|d| d.io_mode().has_input_chunks())
        .ok_or_else(|| format!("this provider does not serve {}", context.capability))?;
    Ok((context, payload, has_input))
}

async fn session(served: Served, socket: WebSocket) {
    let (mut write, mut read) = socket.split();
    let (context, payload, has_input) = match open(&served, &mut read).await {
        Ok(opened) => opened,
        Err(message) => {
            let _ = write.send(text(ProviderMessage::Error(message))).await;
            let _ = write.close().await;
            return;
        }
    };
    let queue = served.options.stream_queue.max(1);
    let (mut input, source) = if has_input {
        let (tx, rx) = mpsc::channel(queue);
        (Input::Open(tx), Some(ChunkSource::new(rx)))
    } else {
        (Input::Closed, None)
    };
    let (output, chunks) = mpsc::channel(queue);
    let (terminal, terminal_rx) = oneshot::channel();
    let mut terminal = Some(terminal);
    let mut work = Some(
        served
            .provider
            .stream(&context, payload, source, ChunkSink::new(output)),
    );
    let writer = write_output(&mut write, chunks, terminal_rx);
    tokio::pin!(writer);
    let deadline = tokio::time::sleep_until((context.deadline + DEADLINE_GRACE).into());
    tokio::pin!(deadline);
    // Ends when the terminal is written (or cannot be), or when the call is cancelled:
    // either way the provider's future, if still running, is dropped on the way out.
    loop {
        let room = input.clone();
        tokio::select! {
            () = &mut writer => break,
            result = finish(&mut work) => {
                work = None;
                end(&mut terminal, match result {
                    Ok(completed) => ProviderMessage::Completed(completed),
                    Err(error) => ProviderMessage::Error(error.into_message()),
                });
            }
            () = &mut deadline, if terminal.is_some() => {
                work = None;
                end(&mut terminal, ProviderMessage::Error("the call's deadline passed".into()));
            }
            incoming = next_message(&mut read, room) => match incoming {
                Incoming::Chunk(permit, chunk) => {
                    permit.send(chunk);
                }
                Incoming::Discarded => {}
                Incoming::InputDropped => input = Input::Discard,
                Incoming::End => input = Input::Closed,
                Incoming::Cancel | Incoming::Gone => break,
                Incoming::Malformed(message) => {
                    work = None;
                    input = Input::Closed;
                    end(&mut terminal, ProviderMessage::Error(message));
                }
            },
        }
    }
}

/// Sends the terminal once; later outcomes (after a malformed message, say) are dropped.
fn end(terminal: &mut Option<oneshot::Sender<ProviderMessage>>, message: ProviderMessage) {
    if let Some(terminal) = terminal.take() {
        let _ = terminal.send(message);
    }
}

type Work<'a> = BoxFuture<'a, Result<Option<Value>, ProviderError>>;

/// The provider's outcome; pending forever once it has been taken.
async fn finish(work: &mut Option<Work<'_>>) -> Result<Option<Value>, ProviderError> {
    match work {
        Some(work) => work.await,
        None => std::future::pending().await,
    }
}

/// Where caller chunks go.
#[derive(Clone)]
enum Input {
    /// Into the provider's bounded queue.
    Open(mpsc::Sender<Value>),
    /// Nowhere: the provider dropped its [`ChunkSource`]; later chunks are discarded.
    Discard,
    /// The call takes no (more) chunks: one is a protocol violation.
    Closed,
}

/// What one node message means for the session.
enum Incoming {
    Chunk(mpsc::OwnedPermit<Value>, Value),
    Discarded,
    InputDropped,
    End,
    Cancel,
    Gone,
    Malformed(String),
}

/// Reads the next node message — only once the input queue has room, so the SDK never reads
/// ahead of the provider (the node's writes then wait on TCP).
async fn next_message(read: &mut SplitStream<WebSocket>, input: Input) -> Incoming {
    let (permit, discard) = match input {
        Input::Open(queue) => match queue.reserve_owned().await {
            Ok(permit) => (Some(permit), false),
            Err(_) => return Incoming::InputDropped,
        },
        Input::Discard => (None, true),
        Input::Closed => (None, false),
    };
    loop {
        let text = match read.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(_))) => {
                return Incoming::Malformed("binary messages are not part of the protocol".into());
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Close(_)) | Err(_)) | None => return Incoming::Gone,
        };
        return match NodeMessage::parse(text.as_str()) {
            Ok(NodeMessage::Chunk(chunk)) => match permit {
                Some(permit) => Incoming::Chunk(permit, chunk),
                None if discard => Incoming::Discarded,
                None => Incoming::Malformed(
                    "a chunk after end, or for a call that takes no chunks".into(),
                ),
            },
            Ok(NodeMessage::End) => Incoming::End,
            Ok(NodeMessage::Cancel) => Incoming::Cancel,
            Err(e) => Incoming::Malformed(format!("malformed message from the node: {e}")),
        };
    }
}

/// Writes the provider's chunks as the socket takes them, then the terminal, then closes.
/// Chunks queued before the terminal are written before it. Returns once the terminal is
/// out, or when the socket fails (the node is gone).
async fn write_output(
    write: &mut SplitSink<WebSocket, Message>,
    mut chunks: mpsc::Receiver<Value>,
    mut terminal: oneshot::Receiver<ProviderMessage>,
) {
    let mut open = true;
    loop {
        tokio::select! {
            biased;
            chunk = chunks.recv(), if open => match chunk {
                Some(chunk) => {
                    if write.send(text(ProviderMessage::Chunk(chunk))).await.is_err() {
                        return;
                    }
                }
                None => open = false,
            },
            message = &mut terminal => {
                if let Ok(message) = message {
                    let _ = write.send(text(message)).await;
                    let _ = write.close().await;
                }
                return;
            }
        }
    }
}
