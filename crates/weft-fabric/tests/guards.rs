//! Every guard of the unary call path, against a real registry (redb in a temp dir) and
//! in-process providers that behave and misbehave on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_fabric::builtin::Echo;
use weft_fabric::{CallError, CallRequest};
use weft_provider::Provider;
use weft_registry::{NodeId, ProviderId, ProviderRegistration};

/// What the test provider does with a call.
mod common;

use common::{Behaviour, text_descriptor, world};

fn code<T: std::fmt::Debug>(r: Result<T, CallError>) -> &'static str {
    r.expect_err("call should fail").code()
}

#[tokio::test]
async fn a_valid_call_round_trips_through_the_provider() {
    let w = world(8);
    let d = text_descriptor("echo", "1.0.0", "unary");
    let rev = d.revision().to_string();
    w.serve("p", Behaviour::Echo, vec![d]);
    let ok = w
        .call("echo", "1.0.0", &rev, r#"{"text":"hi"}"#, None)
        .await
        .unwrap();
    assert_eq!(ok.result, json!({"text": "hi"}));
    assert_eq!(
        (
            ok.provider_id.as_str(),
            ok.node_id.as_str(),
            ok.revision.as_str()
        ),
        ("p", "n1", rev.as_str())
    );
    assert!(ok.call_id.starts_with("call-"));
}

#[tokio::test]
async fn lookup_guards_distinguish_unknown_ids_versions_and_modes() {
    let w = world(8);
    let d = text_descriptor("echo", "1.0.0", "unary");
    let rev = d.revision().to_string();
    w.serve(
        "p",
        Behaviour::Echo,
        vec![d, text_descriptor("ticker", "1.0.0", "server_streaming")],
    );
    assert_eq!(
        code(w.call("nope", "1.0.0", &rev, "{}", None).await),
        "not_found"
    );
    let mismatch = w.call("echo", "2.0.0", &rev, "{}", None).await.unwrap_err();
    assert_eq!(mismatch.code(), "version_mismatch");
    assert_eq!(
        mismatch.details().unwrap()["available_versions"],
        json!(["1.0.0"])
    );
    // A streaming descriptor is not unary-callable.
    let ticker = w
        .registry
        .capability_version(&w.tenant, "ticker", "1.0.0")
        .unwrap()
        .descriptor
        .revision()
        .to_string();
    assert_eq!(
        code(
            w.call("ticker", "1.0.0", &ticker, r#"{"text":"x"}"#, None)
                .await
        ),
        "not_found"
    );
}

#[tokio::test]
async fn a_drifted_revision_is_revision_mismatch_with_the_current_one() {
    let w = world(8);
    let d = text_descriptor("echo", "1.0.0", "unary");
    let rev = d.revision().to_string();
    w.serve("p", Behaviour::Echo, vec![d]);
    let stale = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let e = w
        .call("echo", "1.0.0", stale, r#"{"text":"x"}"#, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "revision_mismatch");
    assert_eq!(e.details().unwrap()["current_revision"], json!(rev));
    assert!(e.to_string().contains("rediscover"));
}

#[tokio::test]
async fn payloads_are_validated_and_bounded() {
    let w = world(8);
    let d = text_descriptor("echo", "1.0.0", "unary");
    let rev = d.revision().to_string();
    w.serve("p", Behaviour::Echo, vec![d]);
    let e = w
        .call("echo", "1.0.0", &rev, r#"{"text": 5, "extra": true}"#, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_payload");
    let errors = e.details().unwrap()["errors"].as_array().unwrap().clone();
    let pointers: Vec<&str> = errors
        .iter()
        .map(|x| x["instance_pointer"].as_str().unwrap())
        .collect();
    assert!(
        pointers.contains(&"/text") && pointers.contains(&""),
        "{errors:?}"
    );
    // Exactly at the limit passes the size guard; one byte over fails it.
    let limit = w.fabric.options().max_payload_bytes;
    let at = format!(r#"{{"text":"{}"}}"#, "a".repeat(limit - 11));
    assert_eq!(at.len(), limit);
    assert!(w.call("echo", "1.0.0", &rev, &at, None).await.is_ok());
    let over = format!(r#"{{"text":"{}"}}"#, "a".repeat(limit - 10));
    let e = w
        .call("echo", "1.0.0", &rev, &over, None)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "payload_too_large");
}

#[tokio::test]
async fn provider_failures_are_typed() {
    let w = world(8);
    let cases = [
        ("fails", Behaviour::Fail, "provider_error"),
        ("gone", Behaviour::Unavailable, "unreachable"),
        ("broken", Behaviour::BrokenHop, "transport_error"),
        ("array", Behaviour::Return(json!([1])), "invalid_result"),
        (
            "bad",
            Behaviour::Return(json!({"text": 1})),
            "invalid_result",
        ),
        ("null", Behaviour::Return(Value::Null), "invalid_result"),
    ];
    for (name, behaviour, expected) in cases {
        let d = text_descriptor(name, "1.0.0", "unary");
        let rev = d.revision().to_string();
        w.serve(name, behaviour, vec![d]);
        let e = w
            .call(name, "1.0.0", &rev, r#"{"text":"x"}"#, None)
            .await
            .unwrap_err();
        assert_eq!(e.code(), expected, "{name}: {e}");
    }
    let d = text_descriptor("huge", "1.0.0", "unary");
    let rev = d.revision().to_string();
    let big = "b".repeat(w.fabric.options().max_payload_bytes);
    w.serve("huge", Behaviour::Return(json!({"text": big})), vec![d]);
    assert_eq!(
        code(w.call("huge", "1.0.0", &rev, r#"{"text":"x"}"#, None).await),
        "invalid_result"
    );
}

#[tokio::test]
async fn the_deadline_covers_the_provider_and_timeouts_are_checked() {
    let w = world(8);
    let d = text_descriptor("slow", "1.0.0", "unary");
    let rev = d.revision().to_string();
    w.serve("slow", Behaviour::Sleep(Duration::from_secs(5)), vec![d]);
    let e = w
        .call("slow", "1.0.0", &rev, r#"{"text":"x"}"#, Some(0.05))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "timeout");
    for bad in [0.0, -5.0, 301.0, f64::NAN] {
        assert_eq!(
            code(w.call("slow", "1.0.0", &rev, "{}", Some(bad)).await),
            "invalid_request",
            "{bad}"
        );
    }
    assert_eq!(
        w.fabric.active_calls(),
        0,
        "the slot is released after a timeout"
    );
}

#[tokio::test]
async fn overload_rejects_exactly_the_excess_and_never_queues() {
    // Ten slow calls against a bound of eight: eight time out, two are overloaded.
    let w = Arc::new(world(8));
    let d = text_descriptor("slow", "1.0.0", "unary");
    let rev = d.revision().to_string();
    w.serve("slow", Behaviour::Sleep(Duration::from_secs(5)), vec![d]);
    let mut calls = Vec::new();
    for _ in 0..10 {
        let w = w.clone();
        let rev = rev.clone();
        calls.push(tokio::spawn(async move {
            w.call("slow", "1.0.0", &rev, r#"{"text":"x"}"#, Some(0.5))
                .await
                .map(|_| ())
        }));
    }
    let mut codes = Vec::new();
    for c in calls {
        codes.push(c.await.unwrap().unwrap_err().code());
    }
    codes.sort_unstable();
    assert_eq!(
        codes.iter().filter(|c| **c == "overloaded").count(),
        2,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == "timeout").count(),
        8,
        "{codes:?}"
    );
    assert_eq!(w.fabric.active_calls(), 0);
}

#[tokio::test]
async fn routing_prefers_providers_of_the_current_revision_and_honours_filters() {
    let w = world(8);
    let v1 = text_descriptor("echo", "1.0.0", "unary");
    w.serve("old", Behaviour::Return(json!({"text": "old"})), vec![v1]);
    // A second provider republishes echo@1.0.0 with new content: the current revision.
    let mut value = v1_value();
    value["description"] = json!("a new description");
    let v2 = Descriptor::from_value(&value, &Limits::default()).unwrap();
    let rev2 = v2.revision().to_string();
    w.serve("new", Behaviour::Return(json!({"text": "new"})), vec![v2]);
    let ok = w
        .call("echo", "1.0.0", &rev2, r#"{"text":"x"}"#, None)
        .await
        .unwrap();
    assert_eq!(
        (ok.provider_id.as_str(), ok.result["text"].as_str()),
        ("new", Some("new"))
    );
    let request_for_old = |provider: &str| CallRequest {
        call_id: Some("c-1".into()),
        capability_id: "echo".into(),
        version: "1.0.0".into(),
        descriptor_revision: rev2.clone(),
        payload: serde_json::value::RawValue::from_string(r#"{"text":"x"}"#.into()).unwrap(),
        timeout_seconds: None,
        provider_id: Some(provider.into()),
        node_id: None,
        verify: false,
    };
    let e = w
        .fabric
        .call(&w.registry, &w.tenant, request_for_old("old"))
        .await
        .unwrap_err();
    assert_eq!(
        e.code(),
        "unreachable",
        "the old provider serves a stale revision: {e}"
    );
    let e = w
        .fabric
        .call(&w.registry, &w.tenant, request_for_old("nobody"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "not_found");
}

fn v1_value() -> Value {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                      "required": ["text"], "additionalProperties": false});
    json!({"id": "echo", "version": "1.0.0", "title": "echo", "description": "test",
           "io_mode": "unary", "input_schema": text, "output_schema": text})
}

#[tokio::test]
async fn the_builtin_echo_validates_both_ways() {
    let w = world(8);
    let echo = Echo::new().unwrap();
    let descriptors = echo.descriptors();
    let rev = descriptors[0].revision().to_string();
    let id = ProviderId::parse("builtin").unwrap();
    w.registry
        .register_provider(
            &w.tenant,
            id.clone(),
            ProviderRegistration {
                node_id: NodeId::parse("n1").unwrap(),
                transport: None,
                descriptors,
            },
        )
        .unwrap();
    w.fabric.attach(w.tenant.clone(), id, Arc::new(echo));
    let ok = w
        .call("echo", "1.0.0", &rev, r#"{"text":"hello weft"}"#, None)
        .await
        .unwrap();
    assert_eq!(ok.result["text"], "hello weft");
    assert_eq!(
        code(
            w.call("echo", "1.0.0", &rev, r#"{"text":"x","more":1}"#, None)
                .await
        ),
        "invalid_payload"
    );
}
