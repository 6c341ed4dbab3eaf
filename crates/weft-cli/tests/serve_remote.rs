//! A remote HTTP provider (served by the SDK's `weft_provider::http`) registered with a real
//! node: calls route over HTTP while the lease holds; a lapsed lease hides the descriptors,
//! marks the node stale and makes calls `unreachable`; renewing brings it back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use harness::{Node, assert_error, poll, tempdir};
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_provider::{CallContext, Provider, ProviderError};

fn descriptor_json() -> Value {
    let text = json!({"type": "object", "required": ["text"], "additionalProperties": false,
                      "properties": {"text": {"type": "string"}}});
    json!({"id": "remote.upper", "version": "1.0.0", "title": "Upper (remote)",
           "description": "Upper-case text, served by a remote process.",
           "input_schema": text, "output_schema": text})
}

struct Upper(Descriptor);

impl Provider for Upper {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.0.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async move {
            let text = payload["text"].as_str().unwrap_or("").to_uppercase();
            Ok(json!({ "text": text }))
        }
        .boxed()
    }
}

/// Serves the provider on its own runtime; dropping the runtime stops it.
fn serve_provider() -> (tokio::runtime::Runtime, String) {
    harness::serve_remote_provider(Arc::new(Upper(
        Descriptor::from_value(&descriptor_json(), &Limits::default()).unwrap(),
    )))
}

fn register(node: &Node, token: &str, url: &str, lease: u64) -> harness::Resp {
    node.send(
        "PUT",
        "/v1/providers/remote-1",
        token,
        &json!({"node_id": "edge-1", "transport": {"kind": "http", "url": url, "lease_seconds": lease},
                "descriptors": [descriptor_json()]}),
    )
}

fn call(node: &Node, token: &str) -> harness::Resp {
    let rev = Descriptor::from_value(&descriptor_json(), &Limits::default())
        .unwrap()
        .revision()
        .to_string();
    node.send(
        "POST",
        "/v1/calls",
        token,
        &json!({"capability_id": "remote.upper", "version": "1.0.0", "descriptor_revision": rev,
                "payload": {"text": "remote hop"}}),
    )
}

fn listed(node: &Node, token: &str) -> bool {
    let r = node.get("/v1/capabilities?id=remote.upper", token);
    !r.body["capabilities"].as_array().unwrap().is_empty()
}

#[test]
fn calls_follow_the_lease() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let (runtime, url) = serve_provider();

    let r = register(&node, &admin, &url, 1);
    assert_eq!(r.status, 201, "{:?}", r.body);
    let ok = call(&node, &admin);
    assert_eq!(ok.status, 200, "{:?}", ok.body);
    assert_eq!(ok.body["result"], json!({"text": "REMOTE HOP"}));
    assert_eq!(
        (ok.body["provider_id"].as_str(), ok.body["node_id"].as_str()),
        (Some("remote-1"), Some("edge-1"))
    );
    assert!(listed(&node, &admin));

    // No renewal: within a few sweeps the lease lapses.
    poll(Duration::from_secs(5), || {
        (!listed(&node, &admin)).then_some(())
    })
    .expect("the lapsed provider stays listed");
    assert_eq!(node.get("/v1/nodes/edge-1", &admin).body["status"], "stale");
    assert_error(&call(&node, &admin), 503, "unreachable");
    // History and the provider record stay.
    assert_eq!(node.get("/v1/providers/remote-1", &admin).status, 200);

    // Renewing brings it back.
    assert_eq!(register(&node, &admin, &url, 30).status, 200);
    assert!(listed(&node, &admin));
    assert_eq!(node.get("/v1/nodes/edge-1", &admin).body["status"], "ready");
    assert_eq!(call(&node, &admin).status, 200);

    // The process goes away while its lease still holds: calls are unreachable, typed.
    drop(runtime);
    assert_error(&call(&node, &admin), 503, "unreachable");
}

#[test]
fn http_transports_are_checked() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    for bad in [
        json!({"kind": "http", "url": "https://example.com"}),
        json!({"kind": "http", "url": "ftp://x"}),
        json!({"kind": "http", "url": "http://127.0.0.1:1", "lease_seconds": 0}),
        json!({"kind": "http", "url": "http://127.0.0.1:1", "lease_seconds": 301}),
        json!({"kind": "http"}),
    ] {
        let r = node.send(
            "PUT",
            "/v1/providers/remote-2",
            &admin,
            &json!({"node_id": "edge-2", "transport": bad, "descriptors": [descriptor_json()]}),
        );
        assert_error(&r, 400, "invalid_request");
    }
    // Unregistering forgets the lease: nothing is left to call.
    let (_runtime, url) = serve_provider();
    assert_eq!(register(&node, &admin, &url, 30).status, 201);
    assert_eq!(
        node.send(
            "POST",
            "/v1/providers/remote-1/unregister",
            &admin,
            &json!({})
        )
        .status,
        200
    );
    assert_error(&call(&node, &admin), 404, "not_found");
}
