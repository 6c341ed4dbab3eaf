//! No remote fetch: a canary HTTP server (a std `TcpListener` here, answering every request
//! with a permissive schema) counts connections while descriptors whose schemas point at it
//! in every shape are published to a real node, served by a managed child and called, and
//! checked with `weft check`. The canary must see no connection; then it is connected to
//! once, to show that it does count (so this test can fail).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness::{Node, poll, tempdir};
use serde_json::{Value, json};

/// Counts connections and answers each with `200 {}` (a schema that would load fine).
fn canary() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/schema+json\r\n\
                  content-length: 2\r\nconnection: close\r\n\r\n{}",
            );
        }
    });
    (url, count)
}

/// Schemas that point at the canary, by shape.
fn remote_schemas(url: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "absolute $ref",
            json!({"$ref": format!("{url}/absolute.json")}),
        ),
        (
            "$id-relative $ref",
            json!({"$id": format!("{url}/root.json"), "type": "object",
                   "properties": {"a": {"$ref": "relative.json"}}}),
        ),
        (
            "$schema",
            json!({"$schema": format!("{url}/meta.json"), "type": "object"}),
        ),
        (
            "$dynamicRef",
            json!({"type": "object", "properties": {"a": {"$dynamicRef": format!("{url}/dyn.json#meta")}}}),
        ),
        (
            "nested $ref with a pointer",
            json!({"type": "object", "$defs": {"x": {"items": {"$ref": format!("{url}/deep.json#/$defs/x")}}},
                   "properties": {"x": {"$ref": "#/$defs/x"}}}),
        ),
    ]
}

/// A schema whose `$id` is on the canary but whose references are all inside the document:
/// valid, and usable without any fetch.
fn local_schema(url: &str) -> Value {
    json!({"$id": format!("{url}/local.json"), "type": "object",
           "properties": {"a": {"$ref": "#/$defs/a"}, "b": {"$ref": format!("{url}/local.json#/$defs/a")}},
           "$defs": {"a": {"type": "string"}}})
}

fn descriptor(id: &str, schema: &Value) -> Value {
    json!({"id": id, "version": "1.0.0", "title": "T", "description": "T",
           "input_schema": schema, "output_schema": schema})
}

/// A protocol-1 echo child serving the descriptors in `DESCRIPTORS`.
const CHILD: &str = r#"
import json, os, sys
sys.stdin.readline()
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
send({"type": "ready", "protocol": 1, "descriptors": json.loads(os.environ["DESCRIPTORS"])})
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "ping":
        send({"type": "pong", "id": m["id"]})
    elif m["type"] == "call":
        send({"type": "result", "call_id": m["call_id"], "result": m["payload"]})
"#;

fn start(dir: &Path, url: &str) -> Node {
    let script = dir.join("child.py");
    std::fs::write(&script, CHILD).unwrap();
    let served = json!([descriptor("nf.local", &local_schema(url))]).to_string();
    let config = dir.join("weft.toml");
    std::fs::write(
        &config,
        format!(
            "[[managed]]\nid = \"nf\"\ncommand = [\"python3\", {:?}]\nenv = {{ DESCRIPTORS = {served:?} }}\n",
            script.display().to_string()
        ),
    )
    .unwrap();
    Node::start(dir, &["--config", config.to_str().unwrap(), "--builtins"])
}

#[test]
fn no_schema_reference_is_ever_fetched() {
    let (url, count) = canary();
    let dir = tempdir();
    let node = start(dir.path(), &url);
    let admin = node.admin();

    // Publishing: every remote shape is refused without a fetch, as input or output schema.
    for (shape, schema) in remote_schemas(&url) {
        let r = node.register(
            &admin,
            "remote-refs",
            "n1",
            &[descriptor("nf.remote", &schema)],
        );
        println!(
            "publish with {shape}: {} {}",
            r.status, r.body["error"]["code"]
        );
        assert!(r.status < 500, "{shape}: {}", r.text);
        assert_ne!(r.status / 100, 2, "{shape} was accepted: {}", r.text);
    }
    // A local-only schema with a canary `$id` is accepted and served.
    let local = node.register(
        &admin,
        "local-refs",
        "n1",
        &[descriptor("nf.pub", &local_schema(&url))],
    );
    assert!([200, 201].contains(&local.status), "{}", local.text);

    // Calling: the child serves the same schema; payloads valid and invalid, and payloads
    // that merely contain reference-looking strings.
    let rev = node.pin(&admin, "nf.local", "1.0.0");
    for payload in [
        json!({"a": "x", "b": "y"}),
        json!({"a": "x", "$ref": format!("{url}/payload.json")}),
        json!({"$schema": format!("{url}/meta.json"), "$id": format!("{url}/p.json")}),
    ] {
        let r = node.unary(&admin, "nf.local", &rev, payload.clone(), None);
        assert_eq!(r.status, 200, "{payload}: {}", r.text);
        assert_eq!(r.body["result"], payload);
    }
    let r = node.unary(&admin, "nf.local", &rev, json!({"a": 1}), None);
    harness::assert_error(&r, 422, "invalid_payload");
    let echo = node.pin(&admin, "echo", "1.0.0");
    let r = node.unary(
        &admin,
        "echo",
        &echo,
        json!({"text": format!("{url}/x.json")}),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text);

    // `weft check` on files with every shape (JSON and TOML).
    let files = tempdir();
    for (i, (_, schema)) in remote_schemas(&url).into_iter().enumerate() {
        let path = files.path().join(format!("remote-{i}.json"));
        std::fs::write(
            &path,
            descriptor(&format!("nf.file{i}"), &schema).to_string(),
        )
        .unwrap();
    }
    std::fs::write(
        files.path().join("local.json"),
        descriptor("nf.file-local", &local_schema(&url)).to_string(),
    )
    .unwrap();
    std::fs::write(
        files.path().join("remote.toml"),
        format!(
            "id = \"nf.toml\"\nversion = \"1.0.0\"\ntitle = \"T\"\ndescription = \"T\"\n\
             [input_schema]\n\"$ref\" = \"{url}/toml.json\"\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["check", "--json"])
        .arg(files.path())
        .output()
        .unwrap();
    assert!(!out.status.success(), "remote references pass weft check");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("remote_reference"), "{report}");

    // Nothing above reached the canary.
    assert_eq!(
        count.load(Ordering::SeqCst),
        0,
        "the node or weft check fetched a schema"
    );

    // Self-test: one connection is counted, so the zero above means something.
    let mut probe = TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    probe
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let counted = poll(Duration::from_secs(10), || {
        (count.load(Ordering::SeqCst) == 1).then_some(())
    });
    assert!(counted.is_some(), "the canary did not count a connection");
    println!("canary: 0 connections from the node and weft check; self-test counted 1");
}
