//! Bytes → `CallerFrame::parse` (the frames a stream's caller sends over WebSocket).
//!
//! The first byte is the expected sequence (0 to 255), the rest the frame's text. Checks:
//! never panics; an accepted chunk or half-close carries the expected sequence; a chunk's
//! payload is the text's `payload` member; a cancel always says `cancelled`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use weft_fabric::CallerFrame;

fuzz_target!(|data: &[u8]| {
    let (head, rest) = data.split_at(data.len().min(1));
    let expected = u64::from(head.first().copied().unwrap_or(1));
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let outcome = CallerFrame::parse(text, expected);
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    match outcome {
        Ok(frame) => {
            let value = parsed.expect("an accepted frame is JSON");
            let kind = value["kind"]
                .as_str()
                .expect("an accepted frame has a kind");
            match frame {
                CallerFrame::Cancel => assert_eq!(kind, "cancelled"),
                CallerFrame::Chunk(payload) => {
                    assert_eq!(kind, "chunk");
                    assert_eq!(value["sequence"].as_u64(), Some(expected));
                    assert_eq!(value.get("payload"), Some(&payload));
                }
                CallerFrame::HalfClose => {
                    assert_eq!(kind, "completed");
                    assert_eq!(value["sequence"].as_u64(), Some(expected));
                    assert!(value.get("payload").is_none_or(Value::is_null));
                }
            }
        }
        Err(message) => {
            assert!(!message.is_empty());
            if parsed.is_none() {
                assert!(message.starts_with("caller frame is not JSON"));
            }
            // The same frame with the sequence it carries is judged on its shape alone.
            if let Some(sequence) = parsed.as_ref().and_then(|v| v["sequence"].as_u64()) {
                let _ = CallerFrame::parse(text, sequence);
            }
        }
    }
});
