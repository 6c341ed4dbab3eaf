//! The remote-provider wire format, shared by the node (client) and the SDK (server) so the
//! two sides cannot drift: the call line, and the messages of a streaming call's WebSocket
//! (`docs/remote-providers.md` is the normative description).
//!
//! Every message is one JSON object in one WebSocket text message, tagged by `type`.
//! Unknown fields are ignored, so either side may add optional fields later.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use thiserror::Error;

use crate::CallContext;

/// The path a node posts unary calls to.
pub const CALL_PATH: &str = "/weft/v1/call";

/// The path a node opens one WebSocket per streaming call on.
pub const STREAM_PATH: &str = "/weft/v1/stream";

/// The path a node opens its long-lived, multiplexed unary-call WebSockets on.
pub const CALLS_PATH: &str = "/weft/v1/calls";

/// The read buffer every weft WebSocket is opened with, on either side. tungstenite
/// allocates its read buffer up front and zero-fills all of it on every read attempt: its
/// 128 KiB default made each read a 128 KiB memset (three quarters of a multiplexed call's
/// instructions at one caller) and each open stream ~140 KiB of RSS. Larger messages still
/// arrive: the buffer grows.
pub const WEBSOCKET_READ_BUFFER: usize = 8 * 1024;

/// A message that does not follow the wire format.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct MalformedMessage(String);

/// The call line: the unary call body, and the first message of a streaming call:
/// `{call_id, capability_id, version, revision, deadline_ms, payload}`, where `deadline_ms`
/// is what is left of the call's deadline when the line is encoded. Encoded straight from
/// borrowed fields (no intermediate map: this runs on every remote call).
pub fn call_line(context: &CallContext, payload: &Value) -> String {
    encode_call_line(None, context, payload)
}

/// A call on a multiplexed connection (`CALLS_PATH`): the call line with `ref`, the
/// node's number for the call, unique among the connection's calls in flight.
pub fn multiplexed_call_line(reference: u64, context: &CallContext, payload: &Value) -> String {
    encode_call_line(Some(reference), context, payload)
}

fn encode_call_line(reference: Option<u64>, context: &CallContext, payload: &Value) -> String {
    #[derive(Serialize)]
    struct CallLine<'a> {
        #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
        reference: Option<u64>,
        call_id: &'a str,
        capability_id: &'a str,
        version: String,
        revision: &'a str,
        deadline_ms: u64,
        payload: &'a Value,
    }
    let remaining = context.deadline.saturating_duration_since(Instant::now());
    let line = CallLine {
        reference,
        call_id: &context.call_id,
        capability_id: context.capability.id.as_str(),
        version: context.capability.version.to_string(),
        revision: context.revision.as_str(),
        deadline_ms: u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX),
        payload,
    };
    // Strings, integers and a `Value` always encode.
    serde_json::to_string(&line).unwrap_or_default()
}

/// `{"type": "cancel", "ref": n}`: the node gave up on call `n` of a multiplexed
/// connection (its deadline passed or its caller went away); the provider drops the work
/// and answers nothing.
pub fn multiplexed_cancel(reference: u64) -> String {
    format!(r#"{{"type":"cancel","ref":{reference}}}"#)
}

/// A provider's answer on a multiplexed connection: `{"ref": n, "result": …}` or
/// `{"ref": n, "error": {"message": "…"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiplexedAnswer {
    /// The call it answers.
    pub reference: u64,
    /// The result, or the provider's message saying why there is none.
    pub outcome: Result<Value, String>,
}

impl MultiplexedAnswer {
    /// The answer as the text of one WebSocket message.
    pub fn to_text(&self) -> String {
        #[derive(Serialize)]
        struct Failure<'a> {
            message: &'a str,
        }
        #[derive(Serialize)]
        struct Answer<'a> {
            #[serde(rename = "ref")]
            reference: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<Failure<'a>>,
        }
        let answer = match &self.outcome {
            Ok(result) => Answer {
                reference: self.reference,
                result: Some(result),
                error: None,
            },
            Err(message) => Answer {
                reference: self.reference,
                result: None,
                error: Some(Failure { message }),
            },
        };
        // An integer, a `Value` and a string always encode.
        serde_json::to_string(&answer).unwrap_or_default()
    }

    /// Reads one answer. `Err(Some(n))` is an answer to call `n` that says neither a result
    /// nor an error (that call fails); `Err(None)` a message that names no call at all.
    pub fn parse(text: &str) -> Result<Self, (Option<u64>, MalformedMessage)> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(rename = "ref")]
            reference: u64,
            // Present-but-null is a result (the node then says it is not an object).
            #[serde(default, deserialize_with = "present")]
            result: Option<Value>,
            #[serde(default)]
            error: Option<Value>,
        }
        let malformed = |why: String| (None, MalformedMessage(why));
        // serde's derive would also read the struct from an array, its fields in order.
        if !text.trim_start().starts_with('{') {
            return Err(malformed("the answer is not a JSON object".into()));
        }
        let answer: Answer = serde_json::from_str(text)
            .map_err(|e| malformed(format!("the answer is not a JSON object with a `ref`: {e}")))?;
        let message = |error: Value| match error {
            Value::Object(mut fields) => match fields.remove("message") {
                Some(Value::String(message)) => Some(message),
                _ => None,
            },
            _ => None,
        };
        let outcome = match (answer.result, answer.error.map(message)) {
            (Some(result), None) => Ok(result),
            (None, Some(Some(message))) => Err(message),
            _ => {
                return Err((
                    Some(answer.reference),
                    MalformedMessage(
                        "an answer carries exactly one of `result` and `error`".into(),
                    ),
                ));
            }
        };
        Ok(Self {
            reference: answer.reference,
            outcome,
        })
    }
}

/// A field that is present, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(value).map(Some)
}

/// A node → provider message after the call line.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeMessage {
    /// `{"type": "chunk", "chunk": …}`: one caller chunk (already valid).
    Chunk(Value),
    /// `{"type": "end"}`: the caller half-closed its input; output keeps flowing.
    End,
    /// `{"type": "cancel"}`: stop the work; the node closes the socket next.
    Cancel,
}

/// A provider → node message.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderMessage {
    /// `{"type": "chunk", "chunk": …}`: one output chunk (the node validates it).
    Chunk(Value),
    /// `{"type": "completed", "result"?: …}`: the terminal of a successful stream; an absent
    /// or `null` result means none.
    Completed(Option<Value>),
    /// `{"type": "error", "message": "…"}`: the terminal of a failed stream.
    Error(String),
}

/// Parses one message into its `type` and the object holding its fields.
fn tagged(text: &str) -> Result<(String, serde_json::Map<String, Value>), MalformedMessage> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| MalformedMessage(format!("the message is not JSON: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err(MalformedMessage("the message is not a JSON object".into()));
    };
    match fields.remove("type") {
        Some(Value::String(kind)) => Ok((kind, fields)),
        _ => Err(MalformedMessage("the message has no string `type`".into())),
    }
}

fn chunk_of(mut fields: serde_json::Map<String, Value>) -> Result<Value, MalformedMessage> {
    fields
        .remove("chunk")
        .ok_or_else(|| MalformedMessage("a chunk message needs a `chunk`".into()))
}

impl NodeMessage {
    /// The message as the text of one WebSocket message.
    pub fn into_text(self) -> String {
        match self {
            NodeMessage::Chunk(chunk) => json!({"type": "chunk", "chunk": chunk}),
            NodeMessage::End => json!({"type": "end"}),
            NodeMessage::Cancel => json!({"type": "cancel"}),
        }
        .to_string()
    }

    /// Reads one message from the node.
    pub fn parse(text: &str) -> Result<Self, MalformedMessage> {
        let (kind, fields) = tagged(text)?;
        match kind.as_str() {
            "chunk" => chunk_of(fields).map(NodeMessage::Chunk),
            "end" => Ok(NodeMessage::End),
            "cancel" => Ok(NodeMessage::Cancel),
            other => Err(MalformedMessage(format!(
                "a node sends chunk, end or cancel, not {other:?}"
            ))),
        }
    }
}

impl ProviderMessage {
    /// The message as the text of one WebSocket message.
    pub fn into_text(self) -> String {
        match self {
            ProviderMessage::Chunk(chunk) => json!({"type": "chunk", "chunk": chunk}),
            ProviderMessage::Completed(Some(result)) => {
                json!({"type": "completed", "result": result})
            }
            ProviderMessage::Completed(None) => json!({"type": "completed"}),
            ProviderMessage::Error(message) => json!({"type": "error", "message": message}),
        }
        .to_string()
    }

    /// Reads one message from the provider.
    pub fn parse(text: &str) -> Result<Self, MalformedMessage> {
        let (kind, mut fields) = tagged(text)?;
        match kind.as_str() {
            "chunk" => chunk_of(fields).map(ProviderMessage::Chunk),
            "completed" => Ok(ProviderMessage::Completed(
                fields.remove("result").filter(|r| !r.is_null()),
            )),
            "error" => match fields.remove("message") {
                Some(Value::String(message)) => Ok(ProviderMessage::Error(message)),
                _ => Err(MalformedMessage(
                    "an error message needs a string `message`".into(),
                )),
            },
            other => Err(MalformedMessage(format!(
                "a provider sends chunk, completed or error, not {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn messages_round_trip() {
        for message in [
            NodeMessage::Chunk(json!({"a": 1})),
            NodeMessage::End,
            NodeMessage::Cancel,
        ] {
            assert_eq!(
                NodeMessage::parse(&message.clone().into_text()),
                Ok(message)
            );
        }
        for message in [
            ProviderMessage::Chunk(json!([1, "x"])),
            ProviderMessage::Completed(None),
            ProviderMessage::Completed(Some(json!({"n": 2}))),
            ProviderMessage::Error("boom".into()),
        ] {
            assert_eq!(
                ProviderMessage::parse(&message.clone().into_text()),
                Ok(message)
            );
        }
    }

    #[test]
    fn multiplexed_answers_round_trip() {
        for answer in [
            MultiplexedAnswer {
                reference: 7,
                outcome: Ok(json!({"text": "hi"})),
            },
            MultiplexedAnswer {
                reference: u64::MAX,
                outcome: Err("boom \"quoted\"".into()),
            },
            MultiplexedAnswer {
                reference: 0,
                outcome: Ok(Value::Null),
            },
        ] {
            assert_eq!(MultiplexedAnswer::parse(&answer.to_text()), Ok(answer));
        }
        let cancel: Value = serde_json::from_str(&multiplexed_cancel(42)).unwrap();
        assert_eq!(cancel, json!({"type": "cancel", "ref": 42}));
    }

    #[test]
    fn malformed_answers_say_which_call_they_name() {
        for (text, names) in [
            ("not json", None),
            (r#"{"result": {}}"#, None),
            (r#"{"ref": -1, "result": {}}"#, None),
            (r#"{"ref": 3}"#, Some(3)),
            (
                r#"{"ref": 3, "result": {}, "error": {"message": "x"}}"#,
                Some(3),
            ),
            (r#"{"ref": 4, "error": {"text": "x"}}"#, Some(4)),
            (r#"{"ref": 4, "error": ["x"]}"#, Some(4)),
            (r#"[4, {}]"#, None),
            (r#"  [4, {}]"#, None),
        ] {
            let parsed = MultiplexedAnswer::parse(text);
            assert_eq!(parsed.map_err(|(r, _)| r), Err(names), "{text}");
        }
    }

    #[test]
    fn malformed_messages_are_refused() {
        for text in [
            "",
            "[]",
            r#"{"chunk": 1}"#,
            r#"{"type": "chunk"}"#,
            r#"{"type": "error"}"#,
            r#"{"type": "started"}"#,
        ] {
            assert!(ProviderMessage::parse(text).is_err(), "{text}");
        }
        assert!(NodeMessage::parse(r#"{"type": "completed"}"#).is_err());
        assert_eq!(
            ProviderMessage::parse(r#"{"type": "completed", "result": null, "extra": 1}"#),
            Ok(ProviderMessage::Completed(None))
        );
    }
}
