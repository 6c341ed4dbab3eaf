//! `CallerFrame::parse`: the shape and sequence rules of the frames a stream's caller sends.

use serde_json::json;
use weft_fabric::CallerFrame;

#[test]
fn a_chunk_with_the_expected_sequence_carries_its_payload() {
    let frame = CallerFrame::parse(r#"{"kind":"chunk","sequence":1,"payload":{"n":1}}"#, 1);
    assert_eq!(frame, Ok(CallerFrame::Chunk(json!({"n": 1}))));
}

#[test]
fn a_chunk_payload_may_be_any_json_value_even_null() {
    for payload in ["null", "3", "\"x\"", "[1,2]"] {
        let text = format!(r#"{{"kind":"chunk","sequence":7,"payload":{payload}}}"#);
        let expected: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
        assert_eq!(
            CallerFrame::parse(&text, 7),
            Ok(CallerFrame::Chunk(expected)),
            "{text}"
        );
    }
}

#[test]
fn a_chunk_without_a_payload_is_refused() {
    let error = CallerFrame::parse(r#"{"kind":"chunk","sequence":1}"#, 1);
    assert_eq!(error, Err("a chunk needs a payload".to_owned()));
}

#[test]
fn completed_half_closes_without_a_payload_or_with_null() {
    for text in [
        r#"{"kind":"completed","sequence":3}"#,
        r#"{"kind":"completed","sequence":3,"payload":null}"#,
        r#"{"kind":"completed","sequence":3,"direction":"caller_to_provider"}"#,
    ] {
        assert_eq!(
            CallerFrame::parse(text, 3),
            Ok(CallerFrame::HalfClose),
            "{text}"
        );
    }
}

#[test]
fn completed_with_a_payload_is_refused() {
    let error = CallerFrame::parse(r#"{"kind":"completed","sequence":2,"payload":{}}"#, 2);
    assert_eq!(
        error,
        Err("the caller's completed half-closes input and carries no payload".to_owned())
    );
}

#[test]
fn cancelled_needs_no_sequence_and_ignores_a_wrong_one_or_direction() {
    for text in [
        r#"{"kind":"cancelled"}"#,
        r#"{"kind":"cancelled","sequence":99}"#,
        r#"{"kind":"cancelled","direction":"provider_to_caller"}"#,
    ] {
        assert_eq!(
            CallerFrame::parse(text, 1),
            Ok(CallerFrame::Cancel),
            "{text}"
        );
    }
}

#[test]
fn a_wrong_sequence_names_both_numbers() {
    let error = CallerFrame::parse(r#"{"kind":"chunk","sequence":2,"payload":1}"#, 1);
    assert_eq!(error, Err("caller frame sequence 2, expected 1".to_owned()));
}

#[test]
fn a_missing_or_non_integer_sequence_is_refused() {
    for text in [
        r#"{"kind":"chunk","payload":1}"#,
        r#"{"kind":"chunk","sequence":-1,"payload":1}"#,
        r#"{"kind":"chunk","sequence":1.5,"payload":1}"#,
        r#"{"kind":"chunk","sequence":"1","payload":1}"#,
    ] {
        assert_eq!(
            CallerFrame::parse(text, 1),
            Err("caller frame has no sequence".to_owned()),
            "{text}"
        );
    }
}

#[test]
fn the_direction_when_present_must_be_caller_to_provider() {
    let ok = CallerFrame::parse(
        r#"{"kind":"chunk","sequence":1,"direction":"caller_to_provider","payload":0}"#,
        1,
    );
    assert_eq!(ok, Ok(CallerFrame::Chunk(json!(0))));
    for direction in ["\"provider_to_caller\"", "null", "1"] {
        let text =
            format!(r#"{{"kind":"chunk","sequence":1,"direction":{direction},"payload":0}}"#);
        assert_eq!(
            CallerFrame::parse(&text, 1),
            Err("caller frames travel caller_to_provider".to_owned()),
            "{text}"
        );
    }
}

#[test]
fn a_kind_the_caller_may_not_send_is_named() {
    let error = CallerFrame::parse(r#"{"kind":"started","sequence":1}"#, 1);
    assert_eq!(
        error,
        Err("a caller may send chunk, completed or cancelled, not started".to_owned())
    );
}

#[test]
fn text_that_is_not_a_json_object_with_a_string_kind_is_refused() {
    for text in [
        "[]",
        "1",
        "null",
        r#"{"kind":1}"#,
        r#"{"sequence":1}"#,
        "[\"kind\"]",
    ] {
        assert_eq!(
            CallerFrame::parse(text, 1),
            Err("caller frame has no kind".to_owned()),
            "{text}"
        );
    }
    for text in ["", "{", "{\"kind\":\"chunk\"} x", "\u{0}"] {
        let error = CallerFrame::parse(text, 1).err().unwrap_or_default();
        assert!(
            error.starts_with("caller frame is not JSON: "),
            "{text:?}: {error}"
        );
    }
}

#[test]
fn sequences_up_to_u64_max_compare_exactly() {
    let text = format!(r#"{{"kind":"completed","sequence":{}}}"#, u64::MAX);
    assert_eq!(
        CallerFrame::parse(&text, u64::MAX),
        Ok(CallerFrame::HalfClose)
    );
    assert!(CallerFrame::parse(&text, u64::MAX - 1).is_err());
}
