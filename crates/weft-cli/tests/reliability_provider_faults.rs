//! Provider faults through a real node: a `[[managed]]` Python child (standard library only,
//! written here) that crashes mid-stream, hangs, freezes, writes garbage, writes a huge or
//! endless line, or floods chunks past its window. Each time the caller gets a typed
//! failure (`provider_error`, `timeout`, `transport_error`) within a guard timeout, the
//! admission slot is released (`GET /v1/diagnostics/node` shows no active call or stream;
//! the node runs with `--max-concurrent-calls 1`, so a leaked slot would also turn the next
//! call into `overloaded`), the node's memory stays bounded, and a later call succeeds.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::Path;
use std::time::{Duration, Instant};

use harness::streams::{connect, envelope, kinds, read_all, send};
use harness::{Node, assert_error, poll, tempdir};
use serde_json::{Value, json};

/// The node's resident memory must stay below this (as in `reliability_hostile`).
const RSS_BOUND_KIB: u64 = 256 * 1024;

/// A protocol-2 child serving `f.ok` (unary echo) and `f.bad` / `f.stream` (misbehaving as
/// `MODE` says). Pings are answered from the reader loop unless the mode freezes it.
const CHILD: &str = r#"
import json, os, sys, threading, time
MODE = os.environ["MODE"]
lock = threading.Lock()
cancelled = set()
def send(obj):
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def raw(text):
    with lock:
        sys.stdout.write(text); sys.stdout.flush()
OBJ = {"type": "object"}
D = [
    {"id": "f.ok", "version": "1.0.0", "title": "ok", "description": "ok", "input_schema": OBJ},
    {"id": "f.bad", "version": "1.0.0", "title": "bad", "description": "bad", "input_schema": OBJ},
    {"id": "f.stream", "version": "1.0.0", "title": "s", "description": "s", "input_schema": OBJ,
     "io_mode": "server_streaming", "output_chunk_schema": OBJ},
]
sys.stdin.readline()
send({"type": "ready", "protocol": 2, "descriptors": D})
def flood(cid):
    n = 0
    while cid not in cancelled:
        send({"type": "chunk", "call_id": cid, "chunk": {"n": n}}); n += 1
    print(f"flood stopped after {n} chunks", file=sys.stderr, flush=True)
for line in sys.stdin:
    m = json.loads(line)
    t, cid = m["type"], m.get("call_id")
    if t == "ping":
        send({"type": "pong", "id": m["id"]})
    elif t == "cancel":
        cancelled.add(cid)
    elif t != "call":
        pass
    elif m["capability_id"] == "f.ok":
        send({"type": "result", "call_id": cid, "result": m["payload"]})
    elif MODE == "crash":
        send({"type": "chunk", "call_id": cid, "chunk": {"n": 1}})
        send({"type": "chunk", "call_id": cid, "chunk": {"n": 2}})
        os._exit(3)
    elif MODE == "hang":
        pass  # never answers this call, keeps serving everything else
    elif MODE == "freeze":
        time.sleep(3600)  # stops reading: no answers, no pongs
    elif MODE == "garbage":
        raw("this is not json\n")
    elif MODE == "huge_line":
        raw('{"type":"result","call_id":"%s","result":{"x":"%s"}}\n' % (cid, "a" * (6 << 20)))
    elif MODE == "endless_line":
        chunk = "a" * 65536
        while True:
            raw(chunk)
    elif MODE == "flood":
        threading.Thread(target=flood, args=(cid,), daemon=True).start()
"#;

/// A node with one managed child in `mode`, once `f.ok` is listed.
fn start(dir: &Path, mode: &str) -> (Node, String) {
    let script = dir.join("child.py");
    std::fs::write(&script, CHILD).unwrap();
    let config = dir.join("weft.toml");
    std::fs::write(
        &config,
        format!(
            "[[managed]]\nid = \"faulty\"\ncommand = [\"python3\", {:?}]\nenv = {{ MODE = {mode:?} }}\nstream_window = 4\n",
            script.display().to_string()
        ),
    )
    .unwrap();
    let node = Node::start(
        dir,
        &[
            "--config",
            config.to_str().unwrap(),
            "--max-concurrent-calls",
            "1",
        ],
    );
    let admin = node.admin();
    node.pin(&admin, "f.ok", "1.0.0");
    (node, admin)
}

/// Everything that must hold after a fault: no slot held, memory bounded, and (once the
/// child is back, if it was restarted) a successful call. While the child is down, calls
/// are refused as `unreachable`, never `overloaded`; a frozen child (`frozen`) times calls
/// out until its unanswered pings get it replaced (which fails the call then in flight with
/// `provider_error`).
fn recovered(node: &Node, admin: &str, fault: &str, frozen: bool) {
    node.assert_idle(admin);
    let rss = node.rss_kib();
    assert!(rss < RSS_BOUND_KIB, "after {fault}: node RSS {rss} KiB");
    let started = Instant::now();
    let ok = poll(Duration::from_secs(60), || {
        let rev = node.get("/v1/capabilities/f.ok/versions/1.0.0", admin).body["revision"]
            .as_str()?
            .to_owned();
        let r = node.unary(admin, "f.ok", &rev, json!({"after": fault}), Some(2.0));
        match r.status {
            200 => Some(r),
            503 | 409 => None, // the child is restarting (409: re-registered)
            // Frozen: probes time out, and the one in flight when the child is killed fails.
            504 | 502 if frozen => None,
            _ => panic!("after {fault}: {} {}", r.status, r.text),
        }
    });
    let ok = ok.unwrap_or_else(|| panic!("after {fault}: no successful call within 60 s"));
    assert_eq!(ok.body["result"], json!({"after": fault}));
    println!(
        "{fault}: recovered, next call served after {:.1} s",
        started.elapsed().as_secs_f64()
    );
    node.assert_idle(admin);
}

fn bad(node: &Node, admin: &str, timeout: f64) -> harness::Resp {
    let rev = node.pin(admin, "f.bad", "1.0.0");
    node.unary(admin, "f.bad", &rev, json!({}), Some(timeout))
}

/// A server stream of `f.stream` over the WebSocket, read to its terminal.
fn stream(node: &Node, admin: &str, timeout: Option<f64>) -> Vec<Value> {
    let mut ws = connect(node, admin);
    let mut env = envelope(node, admin, "f.stream", json!({}));
    if let Some(t) = timeout {
        env["timeout_seconds"] = json!(t);
    }
    send(&mut ws, env);
    read_all(&mut ws)
}

fn assert_failed(frames: &[Value], code: &str) {
    let last = frames.last().expect("a terminal");
    assert_eq!(last["kind"], "failed", "{frames:?}");
    assert_eq!(last["error"]["code"], code, "{frames:?}");
}

#[test]
fn a_child_crashing_mid_stream_fails_the_stream_and_comes_back() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "crash");
    let frames = stream(&node, &admin, None);
    let kinds = kinds(&frames);
    assert_eq!(kinds.first(), Some(&"started"), "{frames:?}");
    assert!(
        !kinds.contains(&"completed"),
        "a crash never completes: {frames:?}"
    );
    assert_failed(&frames, "provider_error");
    recovered(&node, &admin, "a crash mid-stream", false);
}

#[test]
fn a_call_the_child_never_answers_times_out() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "hang");
    assert_error(&bad(&node, &admin, 1.0), 504, "timeout");
    node.assert_idle(&admin);
    let frames = stream(&node, &admin, Some(1.0));
    assert_failed(&frames, "timeout");
    recovered(&node, &admin, "a call never answered", false);
}

#[test]
fn a_frozen_child_times_out_and_is_replaced() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "freeze");
    assert_error(&bad(&node, &admin, 1.0), 504, "timeout");
    // Unanswered pings get it killed and restarted (ping timeout, then backoff).
    recovered(&node, &admin, "a frozen child", true);
}

#[test]
fn garbage_on_stdout_fails_the_call() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "garbage");
    assert_error(&bad(&node, &admin, 30.0), 502, "provider_error");
    recovered(&node, &admin, "garbage output", false);
}

#[test]
fn a_line_over_the_limit_fails_the_call() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "huge_line");
    assert_error(&bad(&node, &admin, 30.0), 502, "provider_error");
    recovered(&node, &admin, "a 6 MiB line", false);
}

#[test]
fn an_endless_line_fails_the_call_without_buffering_it() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "endless_line");
    assert_error(&bad(&node, &admin, 30.0), 502, "provider_error");
    recovered(&node, &admin, "an endless line", false);
}

#[test]
fn chunks_past_the_window_fail_only_that_stream() {
    let dir = tempdir();
    let (node, admin) = start(dir.path(), "flood");
    let frames = stream(&node, &admin, None);
    assert_failed(&frames, "transport_error");
    let message = frames.last().unwrap()["error"]["message"].as_str().unwrap();
    assert!(message.contains("window"), "{message}");
    recovered(&node, &admin, "a chunk flood", false);
}
