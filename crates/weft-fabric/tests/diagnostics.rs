//! The diagnostics counters: exact unary counts per outcome through the real call path
//! (registry in a temp dir, in-process providers), overload and abandoned calls, and the
//! stream probe API the stream path reports through.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use weft_contract::QualifiedId;
use weft_fabric::diagnostics::{CapabilitySnapshot, StreamEnd, StreamProbe};

mod common;

use common::{Behaviour, world};

fn codes(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

const TEXT: &str = r#"{"text":"x"}"#;

#[tokio::test]
async fn every_unary_outcome_is_counted_exactly_where_it_belongs() {
    let w = world(8);
    let echo = w.serve_text("echo", Behaviour::Echo);
    let fails = w.serve_text("fails", Behaviour::Fail);
    let bad = w.serve_text("bad", Behaviour::Return(json!({"text": 1})));
    let slow = w.serve_text("slow", Behaviour::Sleep(Duration::from_secs(5)));
    for _ in 0..3 {
        w.call("echo", "1.0.0", &echo, TEXT, None).await.unwrap();
    }
    for payload in [r#"{"text": 5}"#, r#"{"nope": true}"#] {
        let e = w.call("echo", "1.0.0", &echo, payload, None).await;
        assert_eq!(e.unwrap_err().code(), "invalid_payload");
    }
    // Refusals before admission: attributed when they name a served id@version…
    let stale = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let e = w.call("echo", "1.0.0", stale, TEXT, None).await;
    assert_eq!(e.unwrap_err().code(), "revision_mismatch");
    let e = w.call("echo", "1.0.0", &echo, TEXT, Some(-1.0)).await;
    assert_eq!(e.unwrap_err().code(), "invalid_request");
    // …and node-wide when they do not.
    for (id, version, timeout, code) in [
        ("nope", "1.0.0", None, "not_found"),
        ("nope", "1.0.0", None, "not_found"),
        ("echo", "2.0.0", None, "version_mismatch"),
        ("nope", "1.0.0", Some(0.0), "invalid_request"),
    ] {
        let e = w.call(id, version, &echo, TEXT, timeout).await;
        assert_eq!(e.unwrap_err().code(), code);
    }
    let e = w.call("fails", "1.0.0", &fails, TEXT, None).await;
    assert_eq!(e.unwrap_err().code(), "provider_error");
    let e = w.call("bad", "1.0.0", &bad, TEXT, None).await;
    assert_eq!(e.unwrap_err().code(), "invalid_result");
    let e = w.call("slow", "1.0.0", &slow, TEXT, Some(0.05)).await;
    assert_eq!(e.unwrap_err().code(), "timeout");

    let snapshot = w.fabric.diagnostics().snapshot();
    assert_eq!(
        snapshot.capabilities.keys().collect::<Vec<_>>(),
        ["bad@1.0.0", "echo@1.0.0", "fails@1.0.0", "slow@1.0.0"]
    );
    assert_eq!(
        snapshot.unresolved_calls,
        codes(&[
            ("invalid_request", 1),
            ("not_found", 2),
            ("version_mismatch", 1)
        ])
    );
    assert!(snapshot.unresolved_streams.is_empty());
    assert_eq!((snapshot.active_calls, snapshot.active_streams), (0, 0));
    assert_eq!(snapshot.node_id, "n1");
    assert_eq!(snapshot.limits.max_concurrent_calls, 8);

    let e = w.counters("echo@1.0.0");
    let duration = e.call_duration;
    assert_eq!(duration.count, 5, "every admitted call is timed");
    assert!(duration.sum_seconds > 0.0 && duration.max_seconds <= duration.sum_seconds);
    let expected = CapabilitySnapshot {
        admitted: 5,
        completed: 3,
        failed: codes(&[("invalid_payload", 2)]),
        rejected: codes(&[("invalid_request", 1), ("revision_mismatch", 1)]),
        call_duration: duration,
        ..CapabilitySnapshot::default()
    };
    assert_eq!(e, expected);
    let failed = |name: &str| w.counters(name).failed;
    assert_eq!(failed("fails@1.0.0"), codes(&[("provider_error", 1)]));
    assert_eq!(failed("bad@1.0.0"), codes(&[("invalid_result", 1)]));
    let s = w.counters("slow@1.0.0");
    assert_eq!(s.failed, codes(&[("timeout", 1)]));
    assert_eq!((s.timeouts, s.admitted, s.active_calls), (1, 1, 0));
    assert!(s.call_duration.max_seconds >= 0.05, "{:?}", s.call_duration);
}

#[tokio::test]
async fn overload_is_counted_and_the_gauge_follows_the_slots() {
    // Ten slow calls against a bound of eight: eight admitted (and timing out), two refused.
    let w = Arc::new(world(8));
    let rev = w.serve_text("slow", Behaviour::Sleep(Duration::from_secs(5)));
    let mut calls = Vec::new();
    for _ in 0..10 {
        let (w, rev) = (w.clone(), rev.clone());
        calls.push(tokio::spawn(async move {
            w.call("slow", "1.0.0", &rev, TEXT, Some(0.5))
                .await
                .map(|_| ())
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let during = w.fabric.diagnostics().snapshot();
    assert_eq!(during.active_calls, 8);
    let c = &during.capabilities["slow@1.0.0"];
    assert_eq!(
        (c.active_calls, c.admitted, c.rejected_overloaded),
        (8, 8, 2)
    );
    assert_eq!(c.rejected, codes(&[("overloaded", 2)]));
    for call in calls {
        let _ = call.await.unwrap();
    }
    let after = w.counters("slow@1.0.0");
    assert_eq!(
        (after.active_calls, after.admitted, after.timeouts),
        (0, 8, 8)
    );
    assert_eq!(after.failed, codes(&[("timeout", 8)]));
    assert_eq!(after.call_duration.count, 8);
    assert_eq!(w.fabric.diagnostics().snapshot().active_calls, 0);
}

#[tokio::test]
async fn a_caller_that_goes_away_is_counted_as_cancelled() {
    let w = world(8);
    let rev = w.serve_text("slow", Behaviour::Sleep(Duration::from_secs(5)));
    let call = w.call("slow", "1.0.0", &rev, TEXT, None);
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    let c = w.counters("slow@1.0.0");
    assert_eq!((c.admitted, c.cancelled, c.active_calls), (1, 1, 0));
    assert!(c.failed.is_empty() && c.completed == 0);
    assert_eq!(c.call_duration.count, 0, "only finished calls are timed");
}

#[tokio::test]
async fn stream_probes_count_frames_terminals_and_missing_terminals() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<StreamProbe>();
    let w = world(8);
    let diagnostics = w.fabric.diagnostics();
    let ticker = QualifiedId::parse("ticker@1.0.0").unwrap();
    let opened = Instant::now();
    let first = Arc::new(diagnostics.stream_admitted(&ticker, opened));
    let second = diagnostics.stream_admitted(&ticker, opened);
    let third = diagnostics.stream_admitted(&ticker, opened);
    let lost = diagnostics.stream_admitted(&ticker, opened);
    let during = diagnostics.snapshot();
    assert_eq!(during.active_streams, 4);
    assert_eq!(during.capabilities["ticker@1.0.0"].active_streams, 4);
    first.frame_out(10);
    first.frame_out(20);
    first.frame_in(5);
    first.queue_depth(3);
    first.queue_depth(1);
    assert!(first.finish(StreamEnd::Completed));
    assert!(
        !first.finish(StreamEnd::Failed("late")),
        "one terminal only"
    );
    drop(first);
    assert!(second.finish(StreamEnd::Failed("timeout")));
    assert!(third.finish(StreamEnd::Cancelled));
    drop((second, third, lost));
    diagnostics.stream_rejected(Some(&ticker), "overloaded");
    diagnostics.stream_rejected(Some(&ticker), "revision_mismatch");
    diagnostics.stream_rejected(None, "not_found");

    let snapshot = diagnostics.snapshot();
    assert_eq!(snapshot.active_streams, 0);
    assert_eq!(snapshot.unresolved_streams, codes(&[("not_found", 1)]));
    assert!(snapshot.unresolved_calls.is_empty());
    let t = &snapshot.capabilities["ticker@1.0.0"];
    assert_eq!(
        (t.admitted_streams, t.completed_streams, t.cancelled_streams),
        (4, 1, 1)
    );
    assert_eq!(t.failed_streams, codes(&[("timeout", 1)]));
    assert_eq!(t.missing_terminals, 1);
    assert_eq!(
        t.rejected_streams,
        codes(&[("overloaded", 1), ("revision_mismatch", 1)])
    );
    assert_eq!(t.overloaded_streams, 1);
    assert_eq!(
        (t.frames_out, t.bytes_out, t.frames_in, t.bytes_in),
        (2, 30, 1, 5)
    );
    assert_eq!(t.max_queue_depth, 3);
    assert_eq!(t.first_output.count, 1, "only the first chunk of a stream");
    assert_eq!(
        t.stream_duration.count, 3,
        "a missing terminal is not timed"
    );
    // Unary counters are untouched by streams.
    assert_eq!((t.admitted, t.active_calls), (0, 0));
}

#[test]
fn the_snapshot_serializes_with_the_documented_keys() {
    let w = world(8);
    let id = QualifiedId::parse("echo@1.0.0").unwrap();
    w.fabric
        .diagnostics()
        .call_rejected(Some(&id), "overloaded");
    let value = serde_json::to_value(w.fabric.diagnostics().snapshot()).unwrap();
    let keys = |v: &Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(
        keys(&value),
        [
            "active_calls",
            "active_streams",
            "capabilities",
            "limits",
            "node_id",
            "unresolved_calls",
            "unresolved_streams"
        ]
    );
    let echo = &value["capabilities"]["echo@1.0.0"];
    assert_eq!(echo["rejected"], json!({"overloaded": 1}));
    assert_eq!(echo["rejected_overloaded"], 1);
    assert_eq!(
        echo["call_duration"],
        json!({"count": 0, "sum_seconds": 0.0, "max_seconds": 0.0})
    );
    assert_eq!(keys(echo).len(), 24);
    assert_eq!(value["limits"]["default_timeout_seconds"], 30.0);
}
