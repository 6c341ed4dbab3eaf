//! The protocol-2 wire codec: strict decoding of `chunk` and `ack` from a child that chose
//! protocol 2, the same lines as faults from a protocol-1 child, and the node's new lines.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use serde_json::{Value, json};
use weft_managed::protocol::{
    CallLine, ChildMessage, DecodeError, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION, decode_child,
    encode_ack, encode_call, encode_chunk, encode_end, encode_hello,
};

fn v2(text: &str) -> Result<ChildMessage, DecodeError> {
    decode_child(text.as_bytes(), 2)
}

fn v1(text: &str) -> Result<ChildMessage, DecodeError> {
    decode_child(text.as_bytes(), 1)
}

fn is_field_error(outcome: &Result<ChildMessage, DecodeError>) -> bool {
    matches!(outcome, Err(DecodeError::Fields { .. }))
}

#[test]
fn the_node_offers_protocols_1_to_2() {
    assert_eq!((MIN_PROTOCOL_VERSION, PROTOCOL_VERSION), (1, 2));
    let hello: Value = serde_json::from_str(&encode_hello("p", 4096)).unwrap();
    assert_eq!(hello["protocol"], 2);
    assert_eq!(hello["min_protocol"], 1);
}

#[test]
fn chunk_decodes_with_any_json_chunk() {
    for chunk in [
        json!({"n": 1}),
        json!([1, "two"]),
        json!("text"),
        json!(null),
    ] {
        let line = json!({"type": "chunk", "call_id": "7", "chunk": chunk}).to_string();
        assert_eq!(
            v2(&line).unwrap(),
            ChildMessage::Chunk {
                call_id: "7".into(),
                chunk
            }
        );
    }
}

#[test]
fn chunk_with_unknown_missing_or_mistyped_fields_is_a_fault() {
    for bad in [
        r#"{"type":"chunk","call_id":"7","chunk":{},"seq":1}"#,
        r#"{"type":"chunk","call_id":"7"}"#,
        r#"{"type":"chunk","chunk":{}}"#,
        r#"{"type":"chunk","call_id":7,"chunk":{}}"#,
        r#"{"type":"chunk","call_id":"7","call_id":"8","chunk":{}}"#,
    ] {
        assert!(is_field_error(&v2(bad)), "{bad}: {:?}", v2(bad));
    }
}

#[test]
fn ack_decodes_a_positive_count() {
    assert_eq!(
        v2(r#"{"type":"ack","call_id":"3","chunks":2}"#).unwrap(),
        ChildMessage::Ack {
            call_id: "3".into(),
            chunks: 2
        }
    );
}

#[test]
fn ack_with_unknown_missing_or_mistyped_fields_is_a_fault() {
    for bad in [
        r#"{"type":"ack","call_id":"3","chunks":1,"extra":true}"#,
        r#"{"type":"ack","call_id":"3"}"#,
        r#"{"type":"ack","call_id":"3","chunks":0}"#,
        r#"{"type":"ack","call_id":"3","chunks":-1}"#,
        r#"{"type":"ack","call_id":"3","chunks":1.5}"#,
        r#"{"type":"ack","call_id":"3","chunks":"1"}"#,
        r#"{"type":"ack","call_id":["3"],"chunks":1}"#,
    ] {
        assert!(is_field_error(&v2(bad)), "{bad}: {:?}", v2(bad));
    }
}

#[test]
fn a_result_of_null_is_valid_and_a_missing_result_is_not() {
    assert_eq!(
        v2(r#"{"type":"result","call_id":"1","result":null}"#).unwrap(),
        ChildMessage::Result {
            call_id: "1".into(),
            result: Value::Null
        }
    );
    assert!(is_field_error(&v2(r#"{"type":"result","call_id":"1"}"#)));
}

#[test]
fn a_protocol_1_child_sending_streaming_messages_commits_a_fault() {
    for line in [
        r#"{"type":"chunk","call_id":"1","chunk":{}}"#,
        r#"{"type":"ack","call_id":"1","chunks":1}"#,
        r#"{"type":"end","call_id":"1"}"#,
    ] {
        let outcome = v1(line);
        assert!(matches!(outcome, Err(DecodeError::Reserved(_))), "{line}");
        assert!(
            outcome
                .unwrap_err()
                .to_string()
                .contains("reserved for protocol 2")
        );
    }
}

#[test]
fn end_and_node_messages_are_never_sent_by_a_child() {
    for kind in ["end", "call", "cancel", "ping", "hello"] {
        let line = json!({"type": kind, "call_id": "1"}).to_string();
        assert!(
            matches!(v2(&line), Err(DecodeError::UnknownType(k)) if k == kind),
            "{kind}"
        );
    }
}

#[test]
fn protocol_1_messages_decode_the_same_in_protocol_2() {
    for line in [
        r#"{"type":"ready","protocol":2,"descriptors":[]}"#,
        r#"{"type":"result","call_id":"1","result":{"a":1}}"#,
        r#"{"type":"error","call_id":"1","message":"no"}"#,
        r#"{"type":"pong","id":"9"}"#,
    ] {
        assert_eq!(v1(line).unwrap(), v2(line).unwrap(), "{line}");
    }
}

#[test]
fn node_lines_are_single_compact_json_lines() {
    let payload = json!({"text": "x"});
    let call = CallLine {
        call_id: "5",
        fabric_call_id: "c",
        capability_id: "pys.count",
        version: "1.0.0",
        revision: "r",
        deadline_ms: 100,
        payload: &payload,
        window: Some(16),
    };
    let lines = [
        encode_call(&call),
        encode_chunk("5", &json!({"text": "a\nb"})),
        encode_end("5"),
        encode_ack("5", 3),
    ];
    for line in &lines {
        assert!(line.ends_with('\n'));
        assert_eq!(line.matches('\n').count(), 1, "{line}");
    }
    let parsed: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(parsed[0]["window"], 16);
    assert_eq!(
        parsed[1],
        json!({"type": "chunk", "call_id": "5", "chunk": {"text": "a\nb"}})
    );
    assert_eq!(parsed[2], json!({"type": "end", "call_id": "5"}));
    assert_eq!(
        parsed[3],
        json!({"type": "ack", "call_id": "5", "chunks": 3})
    );
}
