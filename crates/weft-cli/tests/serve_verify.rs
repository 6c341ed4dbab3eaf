//! Verification at the node: `POST /v1/verify`, and `"verify": true` on a call to a real
//! remote provider serving a standard capability, under the default (report) and strict
//! verification modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use harness::{Node, assert_error, serve_remote_provider, tempdir};
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_provider::{CallContext, Provider, ProviderError};

const MEAN: &str = "compute.statistics.mean";

/// `compute.statistics.mean`, with a bug: for exactly three numbers it answers their sum.
struct SloppyMean(Descriptor);

impl Provider for SloppyMean {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.0.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        payload: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async move {
            let data: Vec<f64> = payload["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let sum: f64 = data.iter().sum();
            let result = if data.len() == 3 {
                sum
            } else {
                sum / data.len() as f64
            };
            Ok(json!({ "result": result }))
        }
        .boxed()
    }
}

/// A node (extra flags), the standard mean descriptor it serves for `compute.statistics.mean`,
/// the provider serving it, and a token that may call.
fn setup(extra: &[&str]) -> (tempfile::TempDir, Node, tokio::runtime::Runtime, String) {
    let dir = tempdir();
    let node = Node::start(dir.path(), extra);
    let admin = node.admin();
    // The standard descriptor, as the node's own taxonomy route hands it out.
    let entry = node.get(&format!("/v1/taxonomy/{MEAN}"), &admin);
    assert_eq!(entry.status, 200, "{}", entry.text);
    let descriptor = entry.body["descriptor"].clone();
    let (runtime, url) = serve_remote_provider(Arc::new(SloppyMean(
        Descriptor::from_value(&descriptor, &Limits::default()).unwrap(),
    )));
    let r = node.send(
        "PUT",
        "/v1/providers/stats",
        &admin,
        &json!({"node_id": "stats-host", "descriptors": [descriptor],
                "transport": {"kind": "http", "url": url, "lease_seconds": 300}}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    (dir, node, runtime, admin)
}

fn call_mean(node: &Node, token: &str, data: &[f64], verify: Option<bool>) -> harness::Resp {
    let revision = node.pin(token, MEAN, "0.1.0");
    let mut body = json!({"capability_id": MEAN, "version": "0.1.0",
                          "descriptor_revision": revision, "payload": {"data": data}});
    if let Some(verify) = verify {
        body["verify"] = json!(verify);
    }
    node.send("POST", "/v1/calls", token, &body)
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {report}"))
}

#[test]
fn verify_reports_every_check_of_the_row() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let read = node.token(&node.admin(), None, &["capabilities:read"]);
    let ask = |id: &str, input: Value, output: Value| {
        node.send(
            "POST",
            "/v1/verify",
            &read,
            &json!({"capability_id": id, "input": input, "output": output}),
        )
    };
    let good = ask(MEAN, json!({"data": [1, 2, 3, 4]}), json!({"result": 2.5}));
    assert_eq!(good.status, 200, "{}", good.text);
    assert_eq!(good.body["passed"], true, "{}", good.text);
    assert_eq!(good.body["verifier"], "builtin");
    assert_eq!(good.body["row"], "compute.statistics.{op}");
    assert_eq!(good.body["bindings"], json!({"op": "mean"}));

    let bad = ask(MEAN, json!({"data": [1, 2, 3, 4]}), json!({"result": 10}));
    assert_eq!(bad.status, 200, "{}", bad.text);
    assert_eq!(bad.body["passed"], false);
    // Every check is reported, the failing recomputation among passing ones.
    let checks = bad.body["checks"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["passed"] == true), "{}", bad.text);
    assert!(checks.iter().any(|c| c["passed"] == false), "{}", bad.text);
    assert_eq!(
        checks.len(),
        good.body["checks"].as_array().unwrap().len(),
        "the same checks either way"
    );

    // No built-in verifier: said so, never a pass.
    let custom = ask(
        "custom.acme.mean",
        json!({"data": [1]}),
        json!({"result": 1}),
    );
    assert_eq!(custom.status, 200, "{}", custom.text);
    assert_eq!(
        (&custom.body["verifier"], &custom.body["passed"]),
        (&json!("none"), &json!(false))
    );
    assert_eq!(check(&custom.body, "builtin_verifier")["passed"], false);
    let outside = ask("echo", json!({"text": "a"}), json!({"text": "a"}));
    assert_eq!(outside.body["verifier"], "none", "{}", outside.text);

    // An input the verifier cannot read: 422 with a pointer into the request.
    let r = ask(MEAN, json!({"values": [1, 2]}), json!({"result": 1.5}));
    assert_error(&r, 422, "invalid_payload");
    assert_eq!(
        r.body["error"]["details"]["pointer"], "/input/data",
        "{}",
        r.text
    );

    let r = node.send(
        "POST",
        "/v1/verify",
        &read,
        &json!({"capability_id": MEAN, "input": {}, "output": {}, "extra": 1}),
    );
    assert_error(&r, 400, "unknown_field");
    let body =
        serde_json::to_vec(&json!({"capability_id": MEAN, "input": {}, "output": {}})).unwrap();
    let r = node.call("POST", "/v1/verify", None, Some(&body), &[]);
    assert_error(&r, 401, "unauthorized");
}

#[test]
fn a_call_that_asks_gets_the_report_attached_and_the_result_either_way() {
    let (_dir, node, _provider, admin) = setup(&[]);
    let plain = call_mean(&node, &admin, &[1.0, 2.0, 3.0, 4.0], None);
    assert_eq!(plain.status, 200, "{}", plain.text);
    assert!(plain.body.get("verification").is_none(), "{}", plain.text);

    let good = call_mean(&node, &admin, &[1.0, 2.0, 3.0, 4.0], Some(true));
    assert_eq!(good.status, 200, "{}", good.text);
    assert_eq!(good.body["result"], json!({"result": 2.5}));
    assert_eq!(good.body["verification"]["passed"], true, "{}", good.text);

    // The provider's bug: the sum of three numbers instead of their mean.
    let bad = call_mean(&node, &admin, &[1.0, 2.0, 3.0], Some(true));
    assert_eq!(bad.status, 200, "{}", bad.text);
    assert_eq!(bad.body["result"], json!({"result": 6.0}));
    assert_eq!(bad.body["verification"]["passed"], false, "{}", bad.text);
}

#[test]
fn a_strict_node_withholds_a_result_that_failed_verification() {
    let (_dir, node, _provider, admin) = setup(&["--verification", "strict"]);
    let bad = call_mean(&node, &admin, &[1.0, 2.0, 3.0], Some(true));
    assert_error(&bad, 502, "invalid_result");
    let report = &bad.body["error"]["details"]["verification"];
    assert_eq!(report["passed"], false, "{}", bad.text);
    assert_eq!(report["capability_id"], MEAN);

    let good = call_mean(&node, &admin, &[1.0, 2.0, 3.0, 4.0], Some(true));
    assert_eq!(good.status, 200, "{}", good.text);
    // Without `verify` nothing is checked, strict or not.
    let unchecked = call_mean(&node, &admin, &[1.0, 2.0, 3.0], None);
    assert_eq!(unchecked.status, 200, "{}", unchecked.text);
}

#[test]
fn streams_cannot_ask_for_verification() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins"]);
    let admin = node.admin();
    let revision = node.pin(&admin, "count", "1.0.0");
    let body = serde_json::to_vec(&json!({"capability_id": "count", "version": "1.0.0",
        "descriptor_revision": revision, "payload": {"to": 3}, "verify": true}))
    .unwrap();
    let r = node.call(
        "POST",
        "/v1/calls",
        Some(&admin),
        Some(&body),
        &[("accept", "text/event-stream")],
    );
    assert_error(&r, 400, "invalid_request");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unary"),
        "{}",
        r.text
    );
}

#[test]
fn the_verification_mode_is_checked_at_start() {
    let dir = tempdir();
    let (status, stderr) = harness::serve_expecting_exit(dir.path(), &["--verification", "loud"]);
    assert!(!status.success());
    assert!(stderr.contains("invalid verification mode"), "{stderr}");
}
