//! `GET /weft/v1/calls`: many unary calls over one long-lived WebSocket.
//!
//! The node sends call lines carrying `ref`, its number for the call, and may send
//! `{"type": "cancel", "ref": n}`; the SDK answers each call with one `{"ref": n, "result":
//! …}` or `{"ref": n, "error": {"message": …}}`, in the order the calls finish. One task runs
//! the whole connection — reading, the calls themselves, writing — so a call costs no
//! wake-up beyond the socket's own, and answers that finish together leave in one write.
//! At most `max_calls_per_connection` calls run at once; past that the SDK stops reading, and
//! the node's writes wait on TCP.

use std::collections::HashMap;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use futures_util::SinkExt;
use futures_util::future::{AbortHandle, Abortable, BoxFuture, FutureExt};
use futures_util::stream::{FuturesUnordered, SplitSink, StreamExt};
use serde::Deserialize;

use super::{CallLine, Served};
use crate::SharedProvider;
use crate::wire::MultiplexedAnswer;

/// Upgrades to the multiplexed call WebSocket, with the configured message limit.
pub(super) async fn upgrade(State(served): State<Served>, upgrade: WebSocketUpgrade) -> Response {
    super::configured(upgrade, &served.options).on_upgrade(move |socket| session(served, socket))
}

/// One node message, decoded.
enum Inbound {
    Call(u64, CallLine),
    Cancel(u64),
    /// Broken, but it names the call it was about: that call gets an error answer.
    BadCall(u64, String),
    /// Names no call: the connection cannot go on.
    Violation(String),
}

fn decode(text: &str) -> Inbound {
    // The common case first, in one pass; the rest only on the rare paths.
    let error = match serde_json::from_str::<CallLine>(text) {
        Ok(line) => {
            return match line.reference {
                Some(reference) => Inbound::Call(reference, line),
                None => Inbound::Violation("a call on this connection needs a `ref`".into()),
            };
        }
        Err(error) => error,
    };
    #[derive(Deserialize)]
    struct Tagged {
        #[serde(rename = "type", default)]
        kind: Option<String>,
        #[serde(rename = "ref", default)]
        reference: Option<u64>,
    }
    match serde_json::from_str::<Tagged>(text) {
        Ok(Tagged {
            kind: Some(kind),
            reference: Some(reference),
        }) if kind == "cancel" => Inbound::Cancel(reference),
        Ok(Tagged {
            reference: Some(reference),
            ..
        }) => Inbound::BadCall(reference, format!("malformed call line: {error}")),
        _ => Inbound::Violation(format!("malformed message: {error}")),
    }
}

/// The provider's answer to one call.
fn answer(provider: SharedProvider, reference: u64, line: CallLine) -> Running {
    async move {
        let outcome = match line.open() {
            Ok((context, payload)) => provider
                .call(&context, payload)
                .await
                .map_err(|e| e.into_message()),
            Err(message) => Err(message.to_owned()),
        };
        MultiplexedAnswer { reference, outcome }
    }
    .boxed()
}

type Running = BoxFuture<'static, MultiplexedAnswer>;
type Writer = SplitSink<WebSocket, Message>;

fn message_of(answer: &MultiplexedAnswer) -> Message {
    Message::Text(answer.to_text().into())
}

/// Closes the connection, saying why, after a message that names no call.
async fn refuse(write: &mut Writer, code: u16, why: String) {
    // A close reason is at most 123 bytes; cut at a character boundary.
    let mut end = why.len().min(123);
    while !why.is_char_boundary(end) {
        end -= 1;
    }
    let frame = CloseFrame {
        code,
        reason: why[..end].into(),
    };
    let _ = write.send(Message::Close(Some(frame))).await;
}

async fn session(served: Served, socket: WebSocket) {
    let (mut write, mut read) = socket.split();
    let mut running = FuturesUnordered::<Abortable<Running>>::new();
    let mut cancels: HashMap<u64, AbortHandle> = HashMap::new();
    let room = served.options.max_calls_per_connection.max(1);
    loop {
        tokio::select! {
            // Answers first: they free room, and the node is waiting on them.
            biased;
            Some(finished) = running.next(), if !running.is_empty() => {
                let mut finished = Some(finished);
                // Everything else already finished goes out in the same write.
                while let Some(done) = finished.take() {
                    if let Ok(answer) = done {
                        cancels.remove(&answer.reference);
                        if write.feed(message_of(&answer)).await.is_err() {
                            return;
                        }
                    }
                    finished = running.next().now_or_never().flatten();
                }
                if write.flush().await.is_err() {
                    return;
                }
            }
            message = read.next(), if running.len() < room => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(Message::Binary(_))) => {
                        let why = "binary messages are not part of the protocol".into();
                        return refuse(&mut write, close_code::PROTOCOL, why).await;
                    }
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                };
                match decode(text.as_str()) {
                    Inbound::Call(reference, _) if cancels.contains_key(&reference) => {
                        let why = format!("ref {reference} is already in flight");
                        return refuse(&mut write, close_code::POLICY, why).await;
                    }
                    Inbound::Call(reference, line) => {
                        let (cancel, registration) = AbortHandle::new_pair();
                        cancels.insert(reference, cancel);
                        let work = answer(served.provider.clone(), reference, line);
                        running.push(Abortable::new(work, registration));
                    }
                    Inbound::Cancel(reference) => {
                        if let Some(cancel) = cancels.remove(&reference) {
                            cancel.abort();
                        }
                    }
                    Inbound::BadCall(reference, message) => {
                        let answer = MultiplexedAnswer { reference, outcome: Err(message) };
                        if write.send(message_of(&answer)).await.is_err() {
                            return;
                        }
                    }
                    Inbound::Violation(why) => {
                        return refuse(&mut write, close_code::INVALID, why).await;
                    }
                }
            }
        }
    }
}
