//! `POST /v1/calls` over HTTP against the built-in echo: the success shape and how each
//! guard's failure reaches the caller (code, status, details). The misbehaving-provider
//! guards (provider_error, invalid_result, timeout, overload counts) are covered against
//! real in-process providers in `crates/weft-fabric/tests/guards.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::streams::sse_events;
use harness::{Node, assert_error, tempdir};
use serde_json::{Value, json};

fn pinned(node: &Node, token: &str) -> String {
    let r = node.get("/v1/capabilities/echo/versions/1.0.0", token);
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["revision"].as_str().unwrap().to_owned()
}

fn call(node: &Node, token: &str, body: &Value) -> harness::Resp {
    node.send("POST", "/v1/calls", token, body)
}

#[test]
fn echo_round_trips_with_the_documented_shape() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins", "--node-id", "lab-1"]);
    let admin = node.admin();
    let rev = pinned(&node, &admin);
    let r = call(
        &node,
        &admin,
        &json!({"call_id": "c-42", "capability_id": "echo", "version": "1.0.0",
        "descriptor_revision": rev, "payload": {"text": "hello weft"}}),
    );
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["result"], json!({"text": "hello weft"}));
    assert_eq!(r.body["call_id"], "c-42");
    assert_eq!(r.body["provider_id"], "builtin");
    assert_eq!(r.body["node_id"], "lab-1");
    assert_eq!(r.body["revision"], json!(rev));
    assert!(r.body["duration_ms"].as_f64().unwrap() >= 0.0);
    // Discovery shows the built-in on this node.
    let listed = node.get("/v1/capabilities?node_id=lab-1", &admin);
    assert_eq!(listed.body["revisions"]["echo@1.0.0"], json!(rev));
}

#[test]
fn each_guard_answers_with_its_code_and_status() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins", "--max-payload-bytes", "64"]);
    let admin = node.admin();
    let rev = pinned(&node, &admin);
    let base = json!({"capability_id": "echo", "version": "1.0.0", "descriptor_revision": rev, "payload": {"text": "x"}});
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    assert_error(
        &call(&node, &admin, &with("capability_id", json!("nope"))),
        404,
        "not_found",
    );
    let mismatch = call(&node, &admin, &with("version", json!("2.0.0")));
    assert_error(&mismatch, 404, "version_mismatch");
    assert_eq!(
        mismatch.body["error"]["details"]["available_versions"],
        json!(["1.0.0"])
    );
    let stale = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    let drift = call(&node, &admin, &with("descriptor_revision", json!(stale)));
    assert_error(&drift, 409, "revision_mismatch");
    assert_eq!(
        drift.body["error"]["details"]["current_revision"],
        json!(rev)
    );
    let invalid = call(&node, &admin, &with("payload", json!({"text": 1, "x": 2})));
    assert_error(&invalid, 422, "invalid_payload");
    assert!(
        invalid.body["error"]["details"]["errors"]
            .as_array()
            .unwrap()
            .len()
            >= 2
    );
    // The payload limit is inclusive: 64 bytes pass the size guard, 65 do not.
    let at = format!("{{\"text\":\"{}\"}}", "a".repeat(64 - 11));
    assert_eq!(at.len(), 64);
    let ok = call(
        &node,
        &admin,
        &with("payload", serde_json::from_str(&at).unwrap()),
    );
    assert_eq!(ok.status, 200, "{:?}", ok.body);
    let over = format!("{{\"text\":\"{}\"}}", "a".repeat(64 - 10));
    assert_error(
        &call(
            &node,
            &admin,
            &with("payload", serde_json::from_str(&over).unwrap()),
        ),
        413,
        "payload_too_large",
    );
    assert_error(
        &call(&node, &admin, &with("timeout_seconds", json!(0))),
        400,
        "invalid_request",
    );
    assert_error(
        &call(&node, &admin, &with("timeout_seconds", json!(301))),
        400,
        "invalid_request",
    );
    assert_error(
        &call(&node, &admin, &with("surprise", json!(1))),
        400,
        "unknown_field",
    );
    assert_error(
        &call(&node, &admin, &with("provider_id", json!("someone-else"))),
        404,
        "not_found",
    );
    // Scope: a read-only token may discover but not call.
    let reader = node.token(&admin, None, &["capabilities:read"]);
    assert_error(&call(&node, &reader, &base), 403, "forbidden");
    let caller = node.token(&admin, None, &["capabilities:call"]);
    assert_eq!(call(&node, &caller, &base).status, 200);
    // Another tenant cannot see the default tenant's built-ins.
    let operator = admin.clone();
    let other = node.tenant(&operator, "other");
    assert_error(&call(&node, &other, &base), 404, "not_found");
}

#[test]
fn builtins_can_be_disabled() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    assert_error(&node.get("/v1/capabilities/echo", &admin), 404, "not_found");
}

/// Reads a whole SSE response into (event, data) pairs.
#[test]
fn server_streaming_over_sse_delivers_ordered_frames_and_one_terminal() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins"]);
    let admin = node.admin();
    let r = node.get("/v1/capabilities/count/versions/1.0.0", &admin);
    let rev = r.body["revision"].as_str().unwrap().to_owned();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let body = json!({"call_id": "s-9", "capability_id": "count", "version": "1.0.0",
                      "descriptor_revision": rev, "payload": {"to": 4}});
    let mut response = agent
        .post(&format!("{}/v1/calls", node.url))
        .header("authorization", &format!("Bearer {admin}"))
        .header("accept", "text/event-stream")
        .send_json(&body)
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let text = response.body_mut().read_to_string().unwrap();
    let events = sse_events(&text);
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["started", "chunk", "chunk", "chunk", "chunk", "completed"],
        "{text}"
    );
    for (i, (_, frame)) in events.iter().enumerate() {
        assert_eq!(frame["sequence"], json!(i));
        assert_eq!(frame["call_id"], "s-9");
        assert_eq!(frame["direction"], "provider_to_caller");
    }
    assert_eq!(events[4].1["payload"], json!({"n": 4}));
    assert_eq!(events[5].1["payload"], json!({"count": 4}));

    // Guard failures are plain JSON errors, before any event.
    let mut bad = body.clone();
    bad["payload"] = json!({"to": 0});
    let mut response = agent
        .post(&format!("{}/v1/calls", node.url))
        .header("authorization", &format!("Bearer {admin}"))
        .header("accept", "text/event-stream")
        .send_json(&bad)
        .unwrap();
    assert_eq!(response.status().as_u16(), 422);
    let error: Value = response.body_mut().read_json().unwrap();
    assert_eq!(error["error"]["code"], "invalid_payload");
    // A streaming capability is not unary-callable, and a unary one does not stream.
    let unary = call(&node, &admin, &body);
    assert_error(&unary, 404, "not_found");
}
