//! Bytes → `weft_provider::wire`: `MultiplexedAnswer::parse` (a remote provider's answer on a
//! multiplexed call connection), `NodeMessage::parse` and `ProviderMessage::parse` (the
//! messages of a streaming call's WebSocket), all three on the same text.
//!
//! The input is skipped unless it is UTF-8: these parsers read WebSocket text messages, which
//! the WebSocket layer has already checked are UTF-8 (so `from_utf8_lossy` would only test
//! text that never reaches them).
//!
//! Checks: never panics; every parse round-trips: an accepted answer re-parses from its
//! `to_text()` as the same answer, an accepted node or provider message from its
//! `into_text()` as the same message. When the text is a JSON value, an answer that names a
//! call (`Ok`, or `Err((Some(n), _))`) has that call as its `ref`, and an accepted answer's
//! result or error message is the text's own, and it was a JSON object (unknown members are
//! skipped unparsed, so an answer need not be a valid `Value` throughout). An accepted message was a JSON object whose string `type` names it; a chunk
//! is the text's `chunk`, and the node and the provider read the same chunk from the same
//! text; a completed message's result is the text's non-null `result`. Every error has a
//! message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use weft_provider::wire::{MultiplexedAnswer, NodeMessage, ProviderMessage};

fn check_answer(text: &str, parsed: Option<&Value>) {
    match MultiplexedAnswer::parse(text) {
        Ok(answer) => {
            let again = MultiplexedAnswer::parse(&answer.to_text());
            assert_eq!(again, Ok(answer.clone()), "an answer round-trips");
            // Unknown members are skipped unparsed, so an answer need not be a `Value`
            // (`{"ref": 1, "result": 2, "x": 1e999}` is one).
            assert!(text.trim_start().starts_with('{'), "an answer is an object");
            let Some(value) = parsed else {
                return;
            };
            assert!(value.is_object(), "an answer is an object");
            assert_eq!(
                value.get("ref").and_then(Value::as_u64),
                Some(answer.reference)
            );
            match &answer.outcome {
                Ok(result) => assert_eq!(value.get("result"), Some(result)),
                Err(message) => {
                    let error = value.get("error").expect("an error answer has an error");
                    assert_eq!(
                        error.get("message").and_then(Value::as_str),
                        Some(message.as_str())
                    );
                }
            }
        }
        Err((named, error)) => {
            assert!(!error.to_string().is_empty());
            if let (Some(reference), Some(value)) = (named, parsed) {
                assert_eq!(value.get("ref").and_then(Value::as_u64), Some(reference));
            }
        }
    }
}

/// The text's `type` and `chunk`, if it was a JSON object with a string `type`.
fn tag_of(parsed: Option<&Value>) -> (&str, Option<&Value>) {
    let value = parsed.expect("an accepted message is JSON");
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .expect("an accepted message is an object with a string type");
    (kind, value.get("chunk"))
}

fn check_node(text: &str, parsed: Option<&Value>) -> Option<Value> {
    match NodeMessage::parse(text) {
        Ok(message) => {
            let again = NodeMessage::parse(&message.clone().into_text());
            assert_eq!(again, Ok(message.clone()), "a node message round-trips");
            let (kind, chunk) = tag_of(parsed);
            match message {
                NodeMessage::Chunk(value) => {
                    assert_eq!(kind, "chunk");
                    assert_eq!(chunk, Some(&value));
                    return Some(value);
                }
                NodeMessage::End => assert_eq!(kind, "end"),
                NodeMessage::Cancel => assert_eq!(kind, "cancel"),
            }
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    None
}

fn check_provider(text: &str, parsed: Option<&Value>) -> Option<Value> {
    match ProviderMessage::parse(text) {
        Ok(message) => {
            let again = ProviderMessage::parse(&message.clone().into_text());
            assert_eq!(again, Ok(message.clone()), "a provider message round-trips");
            let (kind, chunk) = tag_of(parsed);
            let fields = parsed.expect("an accepted message is JSON");
            match message {
                ProviderMessage::Chunk(value) => {
                    assert_eq!(kind, "chunk");
                    assert_eq!(chunk, Some(&value));
                    return Some(value);
                }
                ProviderMessage::Completed(result) => {
                    assert_eq!(kind, "completed");
                    assert!(!result.as_ref().is_some_and(Value::is_null));
                    let said = fields.get("result").filter(|r| !r.is_null());
                    assert_eq!(said, result.as_ref());
                }
                ProviderMessage::Error(message) => {
                    assert_eq!(kind, "error");
                    assert_eq!(
                        fields.get("message").and_then(Value::as_str),
                        Some(message.as_str())
                    );
                }
            }
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    None
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    check_answer(text, parsed.as_ref());
    let node_chunk = check_node(text, parsed.as_ref());
    let provider_chunk = check_provider(text, parsed.as_ref());
    assert_eq!(node_chunk, provider_chunk, "both sides read the same chunk");
});
