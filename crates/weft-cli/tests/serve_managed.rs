//! A managed child provider (the Python example) served by a real node: discovered from its
//! handshake, called over HTTP with every edge validated, failures typed. Restart and
//! protocol-fault behaviour is covered in `crates/weft-managed/tests/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::Path;
use std::time::Duration;

use harness::{Node, assert_error, poll, tempdir};
use serde_json::{Value, json};

fn config(dir: &Path) -> std::path::PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/providers/python/echo_provider.py");
    let path = dir.join("weft.toml");
    std::fs::write(
        &path,
        format!(
            "node_id = \"py-node\"\n[[managed]]\nid = \"py\"\ncommand = [\"python3\", {:?}]\n",
            script.display().to_string()
        ),
    )
    .unwrap();
    path
}

fn pin(node: &Node, token: &str, id: &str) -> String {
    let r = poll(Duration::from_secs(15), || {
        let r = node.get(&format!("/v1/capabilities/{id}/versions/1.0.0"), token);
        (r.status == 200).then_some(r)
    })
    .unwrap_or_else(|| panic!("{id} never appeared"));
    r.body["revision"].as_str().unwrap().to_owned()
}

fn call(
    node: &Node,
    token: &str,
    id: &str,
    rev: &str,
    payload: Value,
    timeout: Option<f64>,
) -> harness::Resp {
    let mut body = json!({"capability_id": id, "version": "1.0.0", "descriptor_revision": rev, "payload": payload});
    if let Some(t) = timeout {
        body["timeout_seconds"] = json!(t);
    }
    node.send("POST", "/v1/calls", token, &body)
}

#[test]
fn a_python_child_serves_calls_through_the_node() {
    let dir = tempdir();
    let config = config(dir.path());
    let node = Node::start(dir.path(), &["--config", config.to_str().unwrap()]);
    let admin = node.admin();
    let upper = pin(&node, &admin, "py.upper");
    let provider = node.get("/v1/providers/py", &admin);
    assert_eq!(provider.body["node_id"], "py-node");
    assert_eq!(provider.body["transport"]["kind"], "managed");
    // The child's descriptors are discoverable on this node.
    let listed = node.get("/v1/capabilities?provider_id=py&limit=100", &admin);
    let ids: Vec<&str> = listed.body["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"py.echo") && ids.contains(&"py.upper"),
        "{ids:?}"
    );

    let ok = call(
        &node,
        &admin,
        "py.upper",
        &upper,
        json!({"text": "hello"}),
        None,
    );
    assert_eq!(ok.status, 200, "{:?}", ok.body);
    assert_eq!(ok.body["result"], json!({"text": "HELLO"}));
    assert_eq!(ok.body["provider_id"], "py");

    let fail = pin(&node, &admin, "py.fail");
    assert_error(
        &call(&node, &admin, "py.fail", &fail, json!({}), None),
        502,
        "provider_error",
    );
    let sleep = pin(&node, &admin, "py.sleep");
    assert_error(
        &call(
            &node,
            &admin,
            "py.sleep",
            &sleep,
            json!({"seconds": 5}),
            Some(0.3),
        ),
        504,
        "timeout",
    );
    // The child is still healthy after a timeout (the call was cancelled, not the child).
    let again = call(
        &node,
        &admin,
        "py.upper",
        &upper,
        json!({"text": "x"}),
        None,
    );
    assert_eq!(again.status, 200, "{:?}", again.body);
}
