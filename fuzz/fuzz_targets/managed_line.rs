//! Bytes → `weft_managed::protocol::decode_child` (one NDJSON line from a managed child),
//! under protocol 1 and protocol 2.
//!
//! Checks: never panics; whatever decodes was a JSON object with a string `type` naming the
//! message it decoded to; a decode error has a message; every line protocol 1 accepts,
//! protocol 2 accepts as the same message (protocol 2 only adds `chunk` and `ack`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use weft_managed::protocol::{ChildMessage, decode_child};

fn kind_of(message: &ChildMessage) -> &'static str {
    match message {
        ChildMessage::Ready { .. } => "ready",
        ChildMessage::Result { .. } => "result",
        ChildMessage::Error { .. } => "error",
        ChildMessage::Pong { .. } => "pong",
        ChildMessage::Chunk { .. } => "chunk",
        ChildMessage::Ack { .. } => "ack",
    }
}

fuzz_target!(|data: &[u8]| {
    let v1 = decode_child(data, 1);
    let v2 = decode_child(data, 2);
    for outcome in [&v1, &v2] {
        match outcome {
            Ok(message) => {
                let value: Value = serde_json::from_slice(data).expect("a decoded line is JSON");
                let kind = value["type"]
                    .as_str()
                    .expect("a decoded line has a string type");
                assert_eq!(kind, kind_of(message));
            }
            Err(error) => assert!(!error.to_string().is_empty()),
        }
    }
    if let Ok(message) = &v1 {
        let again = v2.as_ref().expect("protocol 2 accepts what protocol 1 accepts");
        assert_eq!(kind_of(message), kind_of(again));
        assert!(!matches!(message, ChildMessage::Chunk { .. } | ChildMessage::Ack { .. }));
    }
});
