//! Protocol 2 misbehaviour by a real (Python) child: a flow-control or mode violation
//! fails only that call, while a stray chunk or a crash ends the run; a crash mid-stream
//! fails the stream once and is never replayed.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use weft_managed::{ChildFailure, ChildState, ManagedProvider};
use weft_provider::ProviderError;

const LONG: Duration = Duration::from_secs(20);

/// A protocol-2 child whose capabilities each break a rule. Journals `start <pid>`,
/// `call <id> <capability>` and `cancel <id>`.
const RUDE_CHILD: &str = r#"
import json, os, sys
JOURNAL = os.environ["JOURNAL"]
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
def journal(line):
    with open(JOURNAL, "a") as f:
        f.write(line + "\n")
journal(f"start {os.getpid()}")
OBJ = {"type": "object"}
def d(id, mode, **extra):
    base = {"id": id, "version": "1.0.0", "title": id, "description": id,
            "io_mode": mode, "input_schema": OBJ}
    base.update(extra)
    return base
D = [d("t.echo", "unary"),
     d("t.flood", "server_streaming", output_chunk_schema=OBJ),
     d("t.crash", "server_streaming", output_chunk_schema=OBJ),
     d("t.stray", "server_streaming", output_chunk_schema=OBJ),
     d("t.overack", "client_streaming", input_chunk_schema=OBJ),
     d("t.chatty", "unary")]
hello = json.loads(sys.stdin.readline())
assert hello["protocol"] >= 2, hello
send({"type": "ready", "protocol": 2, "descriptors": D})
for line in sys.stdin:
    m = json.loads(line)
    kind = m["type"]
    if kind == "ping":
        send({"type": "pong", "id": m["id"]})
    elif kind == "cancel":
        journal(f"cancel {m['call_id']}")
    elif kind == "call":
        cid, cap = m["call_id"], m["capability_id"]
        journal(f"call {cid} {cap}")
        if cap == "t.echo":
            send({"type": "result", "call_id": cid, "result": m["payload"]})
        elif cap == "t.flood":
            # Ignores the window: writes it three times over, then claims success.
            for n in range(3 * m["window"]):
                send({"type": "chunk", "call_id": cid, "chunk": {"n": n}})
            send({"type": "result", "call_id": cid, "result": {"done": True}})
        elif cap == "t.crash":
            for n in range(2):
                send({"type": "chunk", "call_id": cid, "chunk": {"n": n}})
            os._exit(3)
        elif cap == "t.stray":
            send({"type": "chunk", "call_id": "no-such-call", "chunk": {}})
        elif cap == "t.overack":
            send({"type": "ack", "call_id": cid, "chunks": 5})
        elif cap == "t.chatty":
            send({"type": "chunk", "call_id": cid, "chunk": {}})
            send({"type": "result", "call_id": cid, "result": {}})
"#;

fn rude(dir: &Path) -> weft_managed::ManagedConfig {
    let mut config = script_config(dir, "rude_child.py", RUDE_CHILD);
    config.env.push((
        "JOURNAL".into(),
        dir.join("journal").to_string_lossy().into_owned(),
    ));
    config.stream_window = 4;
    config
}

async fn start_rude(dir: &Path) -> Arc<ManagedProvider> {
    ManagedProvider::start(rude(dir)).await.unwrap()
}

fn journal(dir: &Path) -> Vec<String> {
    journal_lines(&dir.join("journal"))
}

/// The child's call id of the only call of `capability`.
fn call_id(dir: &Path, capability: &str) -> String {
    let suffix = format!(" {capability}");
    let line = journal(dir)
        .into_iter()
        .find(|l| l.starts_with("call ") && l.ends_with(&suffix))
        .unwrap_or_else(|| panic!("no call of {capability}"));
    line.split(' ').nth(1).unwrap().to_owned()
}

async fn assert_cancelled_in_child(dir: &Path, capability: &str) {
    let cancel = format!("cancel {}", call_id(dir, capability));
    assert!(
        eventually(Duration::from_secs(5), || journal(dir).contains(&cancel)).await,
        "{:?}",
        journal(dir)
    );
}

#[tokio::test]
async fn a_child_exceeding_its_window_fails_only_that_call() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_rude(dir.path()).await;
    // Nobody reads the flood's output, so the node acknowledges at most what the queue
    // (one chunk) took: the child is over its window of 4 long before its 12th chunk.
    let mut flood = start_stream(&provider, "t.flood@1.0.0", json!({}), 1, LONG);
    let outcome = tokio::time::timeout(LONG, &mut flood.done)
        .await
        .expect("the flood fails without anyone reading")
        .unwrap();
    assert!(
        matches!(&outcome, Err(ProviderError::Transport(m)) if m.contains("flow-control window of 4") && m.contains("cancelled")),
        "{outcome:?}"
    );
    // Never a truncated success: the child's own "result" was discarded.
    let mut delivered = Vec::new();
    while let Ok(Some(chunk)) =
        tokio::time::timeout(Duration::from_secs(5), flood.chunks.recv()).await
    {
        delivered.push(chunk);
    }
    assert!(delivered.len() <= 5, "{delivered:?}");
    assert_cancelled_in_child(dir.path(), "t.flood").await;
    // The same child still serves other calls: no fault, no restart.
    assert_eq!(
        call(&provider, "t.echo@1.0.0", json!({"after": "flood"})).await,
        Ok(json!({"after": "flood"}))
    );
    assert_eq!(provider.status().generation, 1);
    assert_eq!(provider.status().state, ChildState::Ready);
    assert_eq!(provider.in_flight(), 0);
    provider.shutdown().await;
}

#[tokio::test]
async fn acks_and_chunks_outside_the_calls_mode_fail_only_that_call() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_rude(dir.path()).await;
    // An ack for input chunks the node never wrote.
    let (_, outcome) = start_stream(&provider, "t.overack@1.0.0", json!({}), 1, LONG)
        .finish()
        .await;
    assert!(
        matches!(&outcome, Err(ProviderError::Transport(m)) if m.contains("acknowledged 5 input chunks, but only 0")),
        "{outcome:?}"
    );
    assert_cancelled_in_child(dir.path(), "t.overack").await;
    // A chunk on a unary call.
    let outcome = call(&provider, "t.chatty@1.0.0", json!({})).await;
    assert!(
        matches!(&outcome, Err(ProviderError::Transport(m)) if m.contains("no output chunks")),
        "{outcome:?}"
    );
    assert_cancelled_in_child(dir.path(), "t.chatty").await;
    assert_eq!(
        call(&provider, "t.echo@1.0.0", json!({"ok": 1})).await,
        Ok(json!({"ok": 1}))
    );
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_chunk_for_an_unknown_call_is_a_fault() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_rude(dir.path()).await;
    let (_, outcome) = start_stream(&provider, "t.stray@1.0.0", json!({}), 1, LONG)
        .finish()
        .await;
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("provider process exited") && m.contains("no-such-call")),
        "{outcome:?}"
    );
    assert!(provider.wait_ready(Duration::from_secs(5)).await);
    assert!(matches!(
        provider.status().last_failure,
        Some(ChildFailure::Protocol(m)) if m.contains("not in flight")
    ));
    assert_eq!(provider.status().generation, 2);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_stream_fails_it_once_and_the_child_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_rude(dir.path()).await;
    let (chunks, outcome) = start_stream(&provider, "t.crash@1.0.0", json!({}), 4, LONG)
        .finish()
        .await;
    // What the child wrote before it died is delivered; then one failure.
    assert_eq!(chunks, [json!({"n": 0}), json!({"n": 1})]);
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("provider process exited") && m.contains("exit status: 3") && m.contains("not replayed")),
        "{outcome:?}"
    );
    assert!(provider.wait_ready(Duration::from_secs(5)).await);
    let status = provider.status();
    assert_eq!((status.generation, status.restarts), (2, 1));
    assert_eq!(
        call(&provider, "t.echo@1.0.0", json!({"after": "crash"})).await,
        Ok(json!({"after": "crash"}))
    );
    // Never replayed into the new child.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let lines = journal(dir.path());
    assert_eq!(
        lines.iter().filter(|l| l.ends_with(" t.crash")).count(),
        1,
        "{lines:?}"
    );
    assert_eq!(lines.iter().filter(|l| l.starts_with("start ")).count(), 2);
    provider.shutdown().await;
}
