//! Bytes → `weft_managed::protocol::decode_child` (one NDJSON line from a managed child).
//!
//! Checks: never panics; whatever decodes was a JSON object with a string `type` naming the
//! message it decoded to; a decode error has a message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use weft_managed::protocol::{ChildMessage, decode_child};

fuzz_target!(|data: &[u8]| {
    match decode_child(data) {
        Ok(message) => {
            let value: Value = serde_json::from_slice(data).expect("a decoded line is JSON");
            let kind = value["type"]
                .as_str()
                .expect("a decoded line has a string type");
            let expected = match message {
                ChildMessage::Ready { .. } => "ready",
                ChildMessage::Result { .. } => "result",
                ChildMessage::Error { .. } => "error",
                ChildMessage::Pong { .. } => "pong",
                #[allow(unreachable_patterns)]
                _ => kind,
            };
            assert_eq!(kind, expected);
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
});
