//! The wire codec of the managed-provider protocol (see `docs/provider-protocol.md`).
//!
//! One JSON object per line, `\n`-terminated, UTF-8. Decoding of what a child sends is
//! strict: the line length is checked by the reader before any parsing, then the line
//! must be a JSON object whose `type` is one the child may send in the negotiated
//! protocol version, carrying exactly that message's fields (unknown or duplicate fields
//! are faults). Protocol 2 adds streaming: `chunk` and `ack` in both directions, `end`
//! from the node.

use std::num::NonZeroU32;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use thiserror::Error;

/// The highest protocol version this node speaks.
pub const PROTOCOL_VERSION: u32 = 2;
/// The lowest protocol version this node speaks.
pub const MIN_PROTOCOL_VERSION: u32 = 1;
/// The first protocol version with streaming calls (`chunk`, `end`, `ack`).
pub const STREAMING_PROTOCOL: u32 = 2;

/// Message types of streaming (protocol 2); a protocol-1 child sending them commits a
/// fault.
pub const STREAMING_TYPES: [&str; 3] = ["chunk", "end", "ack"];

/// A message a child may send (`chunk` and `ack` only in protocol 2).
#[derive(Debug, Clone, PartialEq)]
pub enum ChildMessage {
    /// The handshake answer to `hello`.
    Ready {
        /// The protocol version the child chose.
        protocol: u32,
        /// Descriptor objects, checked by the node before it accepts the child.
        descriptors: Vec<Value>,
    },
    /// The successful answer to a call.
    Result {
        /// The call being answered.
        call_id: String,
        /// The result value (the node's fabric checks it against `output_schema`).
        result: Value,
    },
    /// The failed answer to a call.
    Error {
        /// The call being answered.
        call_id: String,
        /// Human-readable reason, passed to the caller as a `provider_error`.
        message: String,
    },
    /// The answer to a ping.
    Pong {
        /// The ping's id, echoed.
        id: String,
    },
    /// One output chunk of a streaming call (protocol 2).
    Chunk {
        /// The call the chunk belongs to.
        call_id: String,
        /// The chunk (the node's fabric checks it against `output_chunk_schema`).
        chunk: Value,
    },
    /// The child consumed `chunks` input chunks of a call (protocol 2): credit back.
    Ack {
        /// The call whose input chunks were consumed.
        call_id: String,
        /// How many (at least 1).
        chunks: u32,
    },
}

/// Why a line from a child is not a valid protocol-1 message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// Not a JSON object with a string `type` (or not JSON at all).
    #[error("not a JSON object with a string \"type\": {0}")]
    Malformed(String),
    /// A `type` the child may not send.
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    /// A streaming type from a child that chose protocol 1.
    #[error(
        "message type {0:?} is reserved for protocol 2 (streaming); the child chose protocol 1"
    )]
    Reserved(String),
    /// The fields do not match the message type.
    #[error("invalid {kind:?} message: {message}")]
    Fields {
        /// The message type.
        kind: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadyWire {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    protocol: u32,
    descriptors: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultWire {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    call_id: String,
    result: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorWire {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    call_id: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PongWire {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChunkWire {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    call_id: String,
    chunk: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AckWire {
    #[serde(rename = "type")]
    _kind: IgnoredAny,
    call_id: String,
    chunks: NonZeroU32,
}

fn fields<'a, T: Deserialize<'a>>(kind: &str, line: &'a [u8]) -> Result<T, DecodeError> {
    serde_json::from_slice(line).map_err(|e| DecodeError::Fields {
        kind: kind.to_owned(),
        message: e.to_string(),
    })
}

/// Decodes one line (without its newline) a child wrote on stdout, for a child that chose
/// `protocol` (use [`MIN_PROTOCOL_VERSION`] before the handshake: `ready` decodes the
/// same in every version).
pub fn decode_child(line: &[u8], protocol: u32) -> Result<ChildMessage, DecodeError> {
    let peek: Peek =
        serde_json::from_slice(line).map_err(|e| DecodeError::Malformed(e.to_string()))?;
    let kind = peek.kind.as_str();
    match kind {
        "ready" => {
            let w: ReadyWire = fields(kind, line)?;
            Ok(ChildMessage::Ready {
                protocol: w.protocol,
                descriptors: w.descriptors,
            })
        }
        "result" => {
            let w: ResultWire = fields(kind, line)?;
            Ok(ChildMessage::Result {
                call_id: w.call_id,
                result: w.result,
            })
        }
        "error" => {
            let w: ErrorWire = fields(kind, line)?;
            Ok(ChildMessage::Error {
                call_id: w.call_id,
                message: w.message,
            })
        }
        "pong" => {
            let w: PongWire = fields(kind, line)?;
            Ok(ChildMessage::Pong { id: w.id })
        }
        other if protocol < STREAMING_PROTOCOL && STREAMING_TYPES.contains(&other) => {
            Err(DecodeError::Reserved(other.to_owned()))
        }
        "chunk" => {
            let w: ChunkWire = fields(kind, line)?;
            Ok(ChildMessage::Chunk {
                call_id: w.call_id,
                chunk: w.chunk,
            })
        }
        "ack" => {
            let w: AckWire = fields(kind, line)?;
            Ok(ChildMessage::Ack {
                call_id: w.call_id,
                chunks: w.chunks.get(),
            })
        }
        other => Err(DecodeError::UnknownType(other.to_owned())),
    }
}

fn line(value: &Value) -> String {
    // Serializing a `Value` cannot fail: its map keys are strings and it holds no NaN.
    let mut text = serde_json::to_string(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The node's `hello`, newline-terminated.
pub fn encode_hello(provider_id: &str, max_line_bytes: usize) -> String {
    line(&json!({
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "min_protocol": MIN_PROTOCOL_VERSION,
        "provider_id": provider_id,
        "max_line_bytes": max_line_bytes,
    }))
}

/// What a `call` line carries.
#[derive(Debug, Clone, Copy)]
pub struct CallLine<'a> {
    /// The node-minted call id, unique for the provider's lifetime.
    pub call_id: &'a str,
    /// The fabric's call id, for log correlation only.
    pub fabric_call_id: &'a str,
    /// Capability id.
    pub capability_id: &'a str,
    /// Exact version.
    pub version: &'a str,
    /// The pinned descriptor revision.
    pub revision: &'a str,
    /// Remaining budget in milliseconds (at least 1).
    pub deadline_ms: u64,
    /// The validated payload.
    pub payload: &'a Value,
    /// The flow-control window of a streaming call (`None` for a unary call: no field).
    pub window: Option<u32>,
}

/// A `call` line, newline-terminated.
pub fn encode_call(call: &CallLine<'_>) -> String {
    let mut message = json!({
        "type": "call",
        "call_id": call.call_id,
        "fabric_call_id": call.fabric_call_id,
        "capability_id": call.capability_id,
        "version": call.version,
        "revision": call.revision,
        "deadline_ms": call.deadline_ms,
        "payload": call.payload,
    });
    if let (Some(window), Some(fields)) = (call.window, message.as_object_mut()) {
        fields.insert("window".into(), json!(window));
    }
    line(&message)
}

/// An input `chunk` line of a streaming call, newline-terminated.
pub fn encode_chunk(call_id: &str, chunk: &Value) -> String {
    line(&json!({"type": "chunk", "call_id": call_id, "chunk": chunk}))
}

/// An `end` line (the caller half-closed its input), newline-terminated.
pub fn encode_end(call_id: &str) -> String {
    line(&json!({"type": "end", "call_id": call_id}))
}

/// An `ack` line (the node consumed `chunks` output chunks), newline-terminated.
pub fn encode_ack(call_id: &str, chunks: u32) -> String {
    line(&json!({"type": "ack", "call_id": call_id, "chunks": chunks}))
}

/// A `cancel` line, newline-terminated.
pub fn encode_cancel(call_id: &str) -> String {
    line(&json!({"type": "cancel", "call_id": call_id}))
}

/// A `ping` line, newline-terminated.
pub fn encode_ping(id: &str) -> String {
    line(&json!({"type": "ping", "id": id}))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn decode(text: &str) -> Result<ChildMessage, DecodeError> {
        decode_child(text.as_bytes(), 1)
    }

    #[test]
    fn valid_messages_decode() {
        assert_eq!(
            decode(r#"{"type":"ready","protocol":1,"descriptors":[{"id":"x"}]}"#).unwrap(),
            ChildMessage::Ready {
                protocol: 1,
                descriptors: vec![json!({"id": "x"})]
            }
        );
        assert_eq!(
            decode(r#"{"call_id":"7","type":"result","result":{"a":1}}"#).unwrap(),
            ChildMessage::Result {
                call_id: "7".into(),
                result: json!({"a": 1})
            }
        );
        assert_eq!(
            decode(r#"{"type":"error","call_id":"7","message":"no"}"#).unwrap(),
            ChildMessage::Error {
                call_id: "7".into(),
                message: "no".into()
            }
        );
        assert_eq!(
            decode(r#"{"type":"pong","id":"3"}"#).unwrap(),
            ChildMessage::Pong { id: "3".into() }
        );
    }

    #[test]
    fn faults_are_classified() {
        for bad in [
            "",
            "garbage",
            "[]",
            "42",
            r#"{"call_id":"1"}"#,
            r#"{"type":1}"#,
        ] {
            assert!(
                matches!(decode(bad), Err(DecodeError::Malformed(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            decode(r#"{"type":"call","call_id":"1"}"#),
            Err(DecodeError::UnknownType(_))
        ));
        assert!(matches!(
            decode(r#"{"type":"chunk","call_id":"1"}"#),
            Err(DecodeError::Reserved(_))
        ));
        for bad in [
            r#"{"type":"result","call_id":"1","result":{},"extra":true}"#,
            r#"{"type":"result","call_id":"1"}"#,
            r#"{"type":"result","call_id":1,"result":{}}"#,
            r#"{"type":"result","call_id":"1","call_id":"2","result":{}}"#,
            r#"{"type":"ready","protocol":-1,"descriptors":[]}"#,
            r#"{"type":"ready","protocol":1}"#,
            r#"{"type":"pong","id":"1","type":"pong"}"#,
        ] {
            assert!(
                matches!(
                    decode(bad),
                    Err(DecodeError::Fields { .. }) | Err(DecodeError::Malformed(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn encoded_lines_are_single_json_lines() {
        let payload = json!({"text": "a\nb"});
        let text = encode_call(&CallLine {
            call_id: "1",
            fabric_call_id: "c",
            capability_id: "py.echo",
            version: "1.0.0",
            revision: "r",
            deadline_ms: 5,
            payload: &payload,
            window: None,
        });
        assert!(!text.contains("window"));
        assert!(text.ends_with('\n'));
        assert_eq!(text.matches('\n').count(), 1);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["payload"], payload);
        assert_eq!(back["type"], "call");
        let hello: Value = serde_json::from_str(&encode_hello("py", 4096)).unwrap();
        assert_eq!(hello["protocol"], 2);
        assert_eq!(hello["min_protocol"], 1);
        assert_eq!(hello["max_line_bytes"], 4096);
    }
}
