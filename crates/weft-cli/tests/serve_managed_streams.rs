//! Managed-provider protocol 2 through a real node: `weft serve` runs the Python streaming
//! example as a `[[managed]]` child (with a small `stream_window`, so every stream needs
//! the child's and the node's acks), and each streaming mode is driven over the WebSocket
//! at `GET /v1/streams`, server streaming also over SSE. Flow-control faults and crashes
//! are covered in `crates/weft-managed/tests/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::streams::{assert_sequenced, connect, envelope, kinds, read_all, send, sse_events};
use harness::{Node, poll, tempdir};
use serde_json::{Value, json};

fn config(dir: &Path) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/providers/python/stream_provider.py");
    let path = dir.join("weft.toml");
    std::fs::write(
        &path,
        format!(
            "node_id = \"pys-node\"\n[[managed]]\nid = \"pys\"\ncommand = [\"python3\", {:?}]\nstream_window = 3\n",
            script.display().to_string()
        ),
    )
    .unwrap();
    path
}

/// A node serving the child, once the child's capabilities are registered.
fn start(dir: &Path) -> (Node, String) {
    let config = config(dir);
    let node = Node::start(dir, &["--config", config.to_str().unwrap()]);
    let admin = node.admin();
    for id in ["pys.count", "pys.sum", "pys.upper"] {
        poll(Duration::from_secs(15), || {
            let r = node.get(&format!("/v1/capabilities/{id}/versions/1.0.0"), &admin);
            (r.status == 200).then_some(())
        })
        .unwrap_or_else(|| panic!("{id} never appeared"));
    }
    (node, admin)
}

fn chunk_frame(sequence: usize, payload: Value) -> Value {
    json!({"kind": "chunk", "sequence": sequence, "payload": payload})
}

#[test]
fn server_streaming_from_a_managed_child_over_websocket() {
    let dir = tempdir();
    let (node, admin) = start(dir.path());
    let descriptor = node.get("/v1/capabilities/pys.count/versions/1.0.0", &admin);
    assert_eq!(descriptor.body["descriptor"]["io_mode"], "server_streaming");
    let mut ws = connect(&node, &admin);
    send(
        &mut ws,
        envelope(&node, &admin, "pys.count", json!({"to": 25})),
    );
    let frames = read_all(&mut ws);
    let mut expected = vec!["started"];
    expected.extend(["chunk"; 25]);
    expected.push("completed");
    assert_eq!(kinds(&frames), expected, "{frames:?}");
    assert_sequenced(&frames);
    for (n, frame) in (1..=25).zip(&frames[1..26]) {
        assert_eq!(frame["payload"], json!({"n": n}));
    }
    assert_eq!(frames[26]["payload"], json!({"count": 25}));
}

#[test]
fn client_streaming_to_a_managed_child_over_websocket() {
    let dir = tempdir();
    let (node, admin) = start(dir.path());
    let mut ws = connect(&node, &admin);
    send(&mut ws, envelope(&node, &admin, "pys.sum", json!({})));
    // Ten chunks through a window of three.
    for i in 1..=10 {
        send(&mut ws, chunk_frame(i, json!({"value": i})));
    }
    send(&mut ws, json!({"kind": "completed", "sequence": 11}));
    let frames = read_all(&mut ws);
    assert_eq!(kinds(&frames), ["started", "completed"], "{frames:?}");
    assert_sequenced(&frames);
    assert_eq!(frames[1]["payload"], json!({"sum": 55, "count": 10}));
}

#[test]
fn bidirectional_with_a_managed_child_over_websocket() {
    let dir = tempdir();
    let (node, admin) = start(dir.path());
    let mut ws = connect(&node, &admin);
    send(&mut ws, envelope(&node, &admin, "pys.upper", json!({})));
    let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
    for (i, word) in words.iter().enumerate() {
        send(&mut ws, chunk_frame(i + 1, json!({"text": word})));
    }
    send(
        &mut ws,
        json!({"kind": "completed", "sequence": words.len() + 1}),
    );
    let frames = read_all(&mut ws);
    let mut expected = vec!["started"];
    expected.extend(vec!["chunk"; words.len()]);
    expected.push("completed");
    assert_eq!(kinds(&frames), expected, "{frames:?}");
    assert_sequenced(&frames);
    for (word, frame) in words.iter().zip(&frames[1..]) {
        assert_eq!(frame["payload"], json!({"text": word.to_uppercase()}));
    }
    // The child answered `"result": null`: completed without a payload.
    assert!(frames.last().unwrap()["payload"].is_null(), "{frames:?}");
}

#[test]
fn server_streaming_from_a_managed_child_over_sse() {
    let dir = tempdir();
    let (node, admin) = start(dir.path());
    let r = node.get("/v1/capabilities/pys.count/versions/1.0.0", &admin);
    let body = json!({"call_id": "sse-1", "capability_id": "pys.count", "version": "1.0.0",
                      "descriptor_revision": r.body["revision"], "payload": {"to": 8}});
    let agent = harness::agent(harness::CALL_TIMEOUT);
    let mut response = agent
        .post(&format!("{}/v1/calls", node.url))
        .header("authorization", &format!("Bearer {admin}"))
        .header("accept", "text/event-stream")
        .send_json(&body)
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let text = response.body_mut().read_to_string().unwrap();
    let events = sse_events(&text);
    let names: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    let mut expected = vec!["started"];
    expected.extend(["chunk"; 8]);
    expected.push("completed");
    assert_eq!(names, expected, "{text}");
    for (i, (_, frame)) in events.iter().enumerate() {
        assert_eq!(frame["sequence"], json!(i));
        assert_eq!(frame["call_id"], "sse-1");
    }
    assert_eq!(events[8].1["payload"], json!({"n": 8}));
    assert_eq!(events[9].1["payload"], json!({"count": 8}));
    // A streaming capability of the child is not unary-callable.
    let unary = node.send("POST", "/v1/calls", &admin, &body);
    harness::assert_error(&unary, 404, "not_found");
}
