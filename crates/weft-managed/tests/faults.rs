//! Misbehaving children: protocol faults, refused handshakes, hangs.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use weft_contract::QualifiedId;
use weft_managed::{ChildFailure, ChildState, ManagedConfig, ManagedError, ManagedProvider};
use weft_provider::{Provider, ProviderError};

/// One script, many misbehaviours, chosen by `MODE`. Journals `start <pid>` per run.
const BAD_CHILD: &str = r#"
import json, os, sys, time
MODE = os.environ["MODE"]
JOURNAL = os.environ["JOURNAL"]
def send(obj, **extra):
    obj.update(extra)
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
RUN = open(JOURNAL).read().count("start ") if os.path.exists(JOURNAL) else 0
with open(JOURNAL, "a") as f:
    f.write(f"start {os.getpid()}\n")
D = {"id": "t.echo", "version": "1.0.0", "title": "T", "description": "T",
     "input_schema": {"type": "object"}}
if MODE == "evolving":
    D["version"] = f"1.0.{RUN}"
hello = json.loads(sys.stdin.readline())
print(f"bad child in mode {MODE}, hello {hello}", file=sys.stderr, flush=True)
if MODE == "exit_early":
    sys.exit(1)
if MODE == "silent":
    time.sleep(60)
if MODE == "garbage_handshake":
    sys.stdout.write("hello there\n"); sys.stdout.flush(); time.sleep(60)
if MODE == "bad_descriptor":
    D["version"] = "1.0"
if MODE == "streaming":
    D["io_mode"] = "server_streaming"
    D["output_chunk_schema"] = {"type": "object"}
if MODE == "duplicate_descriptor":
    send({"type": "ready", "protocol": 1, "descriptors": [D, D]}); time.sleep(60)
send({"type": "ready", "protocol": 3 if MODE == "wrong_protocol" else 1, "descriptors": [D]})
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "ping":
        if MODE != "no_pong":
            send({"type": "pong", "id": m["id"]})
        continue
    if m["type"] != "call":
        continue
    ok = {"type": "result", "call_id": m["call_id"], "result": m["payload"]}
    if MODE == "evolving":
        os._exit(3)
    elif MODE == "garbage":
        sys.stdout.write("this is not json\n"); sys.stdout.flush()
    elif MODE == "long_line":
        send(ok, result={"x": "a" * 5000})
    elif MODE == "unknown_id":
        send(ok, call_id="no-such-call")
    elif MODE == "duplicate":
        send(dict(ok)); send(ok)
    elif MODE == "unknown_field":
        send(ok, extra=1)
    elif MODE == "reserved":
        send({"type": "chunk", "call_id": m["call_id"], "chunk": {}})
    elif MODE == "second_ready":
        send({"type": "ready", "protocol": 1, "descriptors": [D]})
    else:
        send(ok)
if MODE == "ignore_eof":
    time.sleep(60)
"#;

fn bad_config(dir: &Path, mode: &str) -> ManagedConfig {
    let mut config = script_config(dir, "bad_child.py", BAD_CHILD);
    config.env.push(("MODE".into(), mode.into()));
    config.env.push((
        "JOURNAL".into(),
        dir.join("journal").to_string_lossy().into_owned(),
    ));
    config.max_line_bytes = 2048;
    config
}

fn starts(dir: &Path) -> Vec<u32> {
    journal_lines(&dir.join("journal"))
        .iter()
        .filter_map(|l| l.strip_prefix("start ")?.parse().ok())
        .collect()
}

fn alive(pid: u32) -> bool {
    // A reaped process has no /proc entry; a zombie still would (but we always reap).
    Path::new(&format!("/proc/{pid}")).exists()
}

fn t_echo() -> QualifiedId {
    QualifiedId::parse("t.echo@1.0.0").unwrap()
}

/// Starts `mode`, makes one call, and expects the child to be killed for a protocol
/// fault mentioning `expected` and then restarted. Returns the call's outcome.
async fn fault_then_restart(
    mode: &str,
    expected: &str,
) -> (
    Result<serde_json::Value, ProviderError>,
    Arc<ManagedProvider>,
) {
    let dir = tempfile::tempdir().unwrap();
    let provider = ManagedProvider::start(bad_config(dir.path(), mode))
        .await
        .unwrap();
    let outcome = call(&provider, "t.echo@1.0.0", json!({"n": 1})).await;
    let restarted = eventually(Duration::from_secs(3), || {
        let s = provider.status();
        s.generation >= 2 && s.state == ChildState::Ready
    })
    .await;
    let status = provider.status();
    assert!(restarted, "{mode}: not restarted: {status:?}");
    match &status.last_failure {
        Some(ChildFailure::Protocol(m)) if m.contains(expected) => {}
        other => panic!("{mode}: expected a protocol fault with {expected:?}, got {other:?}"),
    }
    let pids = starts(dir.path());
    assert_eq!(pids.len(), 2, "{mode}: {pids:?}");
    assert!(
        eventually(Duration::from_secs(2), || !alive(pids[0])).await,
        "{mode}: the faulty child was not killed"
    );
    (outcome, provider)
}

fn assert_failed_by_exit(mode: &str, outcome: &Result<serde_json::Value, ProviderError>) {
    assert!(
        matches!(outcome, Err(ProviderError::Failed(m)) if m.contains("provider process exited") && m.contains("protocol fault")),
        "{mode}: {outcome:?}"
    );
}

#[tokio::test]
async fn garbage_on_stdout_is_a_fault() {
    let (outcome, provider) = fault_then_restart("garbage", "this is not json").await;
    assert_failed_by_exit("garbage", &outcome);
    provider.shutdown().await;
}

#[tokio::test]
async fn an_over_long_line_is_a_fault() {
    let (outcome, provider) = fault_then_restart("long_line", "max_line_bytes (2048").await;
    assert_failed_by_exit("long_line", &outcome);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_reply_for_an_unknown_call_is_a_fault() {
    let (outcome, provider) = fault_then_restart("unknown_id", "no-such-call").await;
    assert_failed_by_exit("unknown_id", &outcome);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_duplicate_reply_is_a_fault() {
    // The first reply answers the call; the second kills the child.
    let (outcome, provider) = fault_then_restart("duplicate", "not in flight").await;
    assert_eq!(outcome, Ok(json!({"n": 1})));
    provider.shutdown().await;
}

#[tokio::test]
async fn unknown_fields_are_a_fault() {
    let (outcome, provider) = fault_then_restart("unknown_field", "unknown field `extra`").await;
    assert_failed_by_exit("unknown_field", &outcome);
    provider.shutdown().await;
}

#[tokio::test]
async fn streaming_messages_are_reserved() {
    let (outcome, provider) = fault_then_restart("reserved", "reserved for protocol 2").await;
    assert_failed_by_exit("reserved", &outcome);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_second_ready_is_a_fault() {
    let (outcome, provider) = fault_then_restart("second_ready", "after the handshake").await;
    assert_failed_by_exit("second_ready", &outcome);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_silent_child_fails_start_within_the_handshake_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = bad_config(dir.path(), "silent");
    config.handshake_timeout = Duration::from_millis(500);
    let started = Instant::now();
    let outcome = ManagedProvider::start(config).await;
    let elapsed = started.elapsed();
    assert!(
        matches!(
            &outcome,
            Err(ManagedError::StartFailed { failure: ChildFailure::HandshakeTimeout(t), .. })
                if *t == Duration::from_millis(500)
        ),
        "{:?}",
        outcome.err()
    );
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    let pids = starts(dir.path());
    assert_eq!(pids.len(), 1, "no retry under start(): {pids:?}");
    assert!(eventually(Duration::from_secs(2), || !alive(pids[0])).await);
}

#[tokio::test]
async fn a_silent_child_under_spawn_is_retried_and_never_ready() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = bad_config(dir.path(), "silent");
    config.handshake_timeout = Duration::from_millis(300);
    let provider = ManagedProvider::spawn(config).unwrap();
    assert!(!provider.wait_ready(Duration::from_millis(1200)).await);
    assert!(!provider.ready(&t_echo()));
    assert!(provider.descriptors().is_empty());
    let status = provider.status();
    assert!(status.restarts >= 1, "{status:?}");
    assert!(matches!(
        status.last_failure,
        Some(ChildFailure::HandshakeTimeout(_))
    ));
    provider.shutdown().await;
    assert_eq!(provider.status().state, ChildState::Stopped);
    for pid in starts(dir.path()) {
        assert!(eventually(Duration::from_secs(2), || !alive(pid)).await);
    }
}

async fn refused(mode: &str) -> ChildFailure {
    let dir = tempfile::tempdir().unwrap();
    match ManagedProvider::start(bad_config(dir.path(), mode)).await {
        Err(ManagedError::StartFailed { failure, .. }) => failure,
        Err(other) => panic!("{mode}: {other}"),
        Ok(_) => panic!("{mode}: started"),
    }
}

#[tokio::test]
async fn bad_handshakes_are_refused_with_a_clear_error() {
    let cases = [
        ("bad_descriptor", "descriptor #0 t.echo@1.0 is invalid"),
        ("streaming", "unary capabilities only"),
        ("duplicate_descriptor", "listed twice"),
        ("wrong_protocol", "chose protocol 3"),
    ];
    for (mode, expected) in cases {
        match refused(mode).await {
            ChildFailure::Refused(m) if m.contains(expected) => {}
            other => panic!("{mode}: expected a refusal with {expected:?}, got {other:?}"),
        }
    }
    match refused("garbage_handshake").await {
        ChildFailure::Protocol(m) if m.contains("hello there") => {}
        other => panic!("garbage_handshake: {other:?}"),
    }
    match refused("exit_early").await {
        ChildFailure::Exited(m) if m.contains("exit status: 1") => {}
        other => panic!("exit_early: {other:?}"),
    }
}

#[tokio::test]
async fn a_child_that_stops_answering_pings_turns_unready_then_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = bad_config(dir.path(), "no_pong");
    config.ping_interval = Duration::from_millis(100);
    config.ping_timeout = Duration::from_millis(800);
    let provider = ManagedProvider::start(config).await.unwrap();
    assert!(provider.ready(&t_echo()));
    // Three ping intervals without a pong: not ready, although the run goes on.
    assert!(eventually(Duration::from_millis(600), || !provider.ready(&t_echo())).await);
    assert_eq!(provider.status().generation, 1);
    assert!(
        eventually(Duration::from_secs(3), || provider.status().generation >= 2).await,
        "{:?}",
        provider.status()
    );
    assert!(matches!(
        provider.status().last_failure,
        Some(ChildFailure::PingTimeout(_))
    ));
    provider.shutdown().await;
}

#[tokio::test]
async fn shutdown_kills_a_child_that_ignores_end_of_input() {
    let dir = tempfile::tempdir().unwrap();
    let provider = ManagedProvider::start(bad_config(dir.path(), "ignore_eof"))
        .await
        .unwrap();
    let pid = provider.status().pid.unwrap();
    assert!(alive(pid));
    let started = Instant::now();
    provider.shutdown().await;
    let elapsed = started.elapsed();
    // Grace is 500 ms, then a kill.
    assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    assert!(eventually(Duration::from_secs(2), || !alive(pid)).await);
    assert_eq!(provider.status().last_failure, Some(ChildFailure::Shutdown));
}

#[tokio::test]
async fn a_missing_program_fails_start() {
    let mut config = ManagedConfig::new("nope", vec!["/nonexistent/weft-provider".into()]);
    fast(&mut config);
    match ManagedProvider::start(config).await {
        Err(ManagedError::StartFailed {
            failure: ChildFailure::Spawn(m),
            ..
        }) => assert!(m.contains("/nonexistent/weft-provider"), "{m}"),
        other => panic!("{:?}", other.err()),
    }
}

#[tokio::test]
async fn a_restarted_child_may_publish_new_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let provider = ManagedProvider::start(bad_config(dir.path(), "evolving"))
        .await
        .unwrap();
    let mut updates = provider.descriptor_updates();
    let first: Vec<String> = updates
        .borrow_and_update()
        .iter()
        .map(|d| d.qualified_id().to_string())
        .collect();
    assert_eq!(first, ["t.echo@1.0.0"]);
    let old = context(&provider, "t.echo@1.0.0", Duration::from_secs(5));
    // The call makes the child exit; the next run serves t.echo@1.0.1.
    let outcome = provider.call(&old, json!({})).await;
    assert!(
        matches!(outcome, Err(ProviderError::Failed(_))),
        "{outcome:?}"
    );
    tokio::time::timeout(Duration::from_secs(3), updates.changed())
        .await
        .expect("the new set is published")
        .unwrap();
    let second: Vec<String> = updates
        .borrow_and_update()
        .iter()
        .map(|d| d.qualified_id().to_string())
        .collect();
    assert_eq!(second, ["t.echo@1.0.1"]);
    assert!(provider.wait_ready(Duration::from_secs(3)).await);
    assert!(!provider.ready(&t_echo()));
    assert!(provider.ready(&QualifiedId::parse("t.echo@1.0.1").unwrap()));
    // A call for what the child no longer serves is refused, not sent.
    let outcome = provider.call(&old, json!({})).await;
    assert!(
        matches!(&outcome, Err(ProviderError::Unavailable(m)) if m.contains("no longer serves")),
        "{outcome:?}"
    );
    assert_eq!(provider.status().generation, 2);
    provider.shutdown().await;
}
