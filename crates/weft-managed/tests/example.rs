//! The real Python example provider as a managed child.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::*;
use futures_util::future::join_all;
use serde_json::json;
use weft_contract::QualifiedId;
use weft_managed::{ChildFailure, ChildState};
use weft_provider::{Provider, ProviderError};

fn qid(text: &str) -> QualifiedId {
    QualifiedId::parse(text).unwrap()
}

const CAPABILITIES: [&str; 5] = [
    "py.crash@1.0.0",
    "py.echo@1.0.0",
    "py.fail@1.0.0",
    "py.sleep@1.0.0",
    "py.upper@1.0.0",
];

#[tokio::test]
async fn handshake_publishes_the_childs_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = start_example(&journal).await;
    let served: BTreeSet<String> = provider
        .descriptors()
        .iter()
        .map(|d| d.qualified_id().to_string())
        .collect();
    assert_eq!(served, CAPABILITIES.map(String::from).into_iter().collect());
    for capability in CAPABILITIES {
        assert!(provider.ready(&qid(capability)), "{capability} ready");
    }
    assert!(!provider.ready(&qid("py.missing@1.0.0")));
    assert_eq!(provider.descriptor_updates().borrow().len(), 5);
    let status = provider.status();
    assert_eq!(status.state, ChildState::Ready);
    assert_eq!(status.generation, 1);
    assert!(status.pid.is_some());
    provider.shutdown().await;
}

#[tokio::test]
async fn calls_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_example(&dir.path().join("journal")).await;
    let payload = json!({"nested": {"list": [1, 2.5, "three", null, true]}, "unicode": "héllo ✓"});
    assert_eq!(
        call(&provider, "py.echo@1.0.0", payload.clone()).await,
        Ok(payload)
    );
    assert_eq!(
        call(&provider, "py.upper@1.0.0", json!({"text": "weft"})).await,
        Ok(json!({"text": "WEFT"}))
    );
    assert_eq!(provider.in_flight(), 0);
    provider.shutdown().await;
}

#[tokio::test]
async fn concurrent_calls_are_multiplexed() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_example(&dir.path().join("journal")).await;
    let started = Instant::now();
    // Later calls sleep less, so answers come back in the reverse order of the calls.
    let calls = (0..20).map(|i| {
        let provider = &provider;
        async move {
            if i % 2 == 0 {
                let seconds = f64::from(20 - i) * 0.02;
                let got = call(provider, "py.sleep@1.0.0", json!({"seconds": seconds})).await;
                (got, json!({"slept": seconds}))
            } else {
                let payload = json!({"i": i, "text": format!("call {i}")});
                let got = call(provider, "py.echo@1.0.0", payload.clone()).await;
                (got, payload)
            }
        }
    });
    for (got, expected) in join_all(calls).await {
        assert_eq!(got, Ok(expected));
    }
    // Sequentially the sleeps alone would take 2.2 s.
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(provider.in_flight(), 0);
    provider.shutdown().await;
}

#[tokio::test]
async fn an_error_reply_is_a_failed_call() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_example(&dir.path().join("journal")).await;
    assert_eq!(
        call(&provider, "py.fail@1.0.0", json!({})).await,
        Err(ProviderError::Failed("py.fail always fails".into()))
    );
    // The child is fine afterwards.
    assert!(provider.ready(&qid("py.fail@1.0.0")));
    assert_eq!(
        call(&provider, "py.upper@1.0.0", json!({"text": "ok"})).await,
        Ok(json!({"text": "OK"}))
    );
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

#[tokio::test]
async fn an_expired_deadline_sends_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = start_example(&journal).await;
    let ctx = context(&provider, "py.sleep@1.0.0", Duration::from_millis(300));
    let started = Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(3),
        provider.call(&ctx, json!({"seconds": 5})),
    )
    .await
    .expect("the call returns at its deadline");
    let elapsed = started.elapsed();
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("deadline")),
        "{outcome:?}"
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
    assert_eq!(provider.in_flight(), 0);
    // The child saw the cancel for that call (and its late "cancelled" reply was
    // discarded, not treated as a fault).
    let call_line = journal_lines(&journal)
        .into_iter()
        .find(|l| l.ends_with(" py.sleep"))
        .unwrap();
    let call_id = call_line.split(' ').nth(1).unwrap().to_owned();
    let cancel = format!("cancel {call_id}");
    assert!(
        eventually(Duration::from_secs(2), || journal_lines(&journal)
            .contains(&cancel))
        .await,
        "{:?}",
        journal_lines(&journal)
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        call(&provider, "py.echo@1.0.0", json!({"after": "cancel"})).await,
        Ok(json!({"after": "cancel"}))
    );
    assert_eq!(provider.status().generation, 1, "no restart");
    provider.shutdown().await;
}

#[tokio::test]
async fn a_dropped_call_sends_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = start_example(&journal).await;
    let ctx = context(&provider, "py.sleep@1.0.0", Duration::from_secs(10));
    // The caller goes away (the fabric's own deadline, a closed connection…).
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        provider.call(&ctx, json!({"seconds": 5})),
    )
    .await;
    assert!(dropped.is_err());
    assert_eq!(provider.in_flight(), 0);
    assert!(
        eventually(Duration::from_secs(2), || journal_lines(&journal)
            .iter()
            .any(|l| l.starts_with("cancel ")))
        .await
    );
    assert_eq!(
        call(&provider, "py.upper@1.0.0", json!({"text": "still here"})).await,
        Ok(json!({"text": "STILL HERE"}))
    );
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_crash_fails_in_flight_calls_restarts_and_never_replays() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let mut config = example_config(&journal);
    // Long enough that "down" is observable right after the crash, short for a test.
    config.restart_backoff = vec![Duration::from_millis(300)];
    let provider = weft_managed::ManagedProvider::start(config).await.unwrap();
    let mut updates = provider.descriptor_updates();
    updates.borrow_and_update();
    let (slow, crash) = tokio::join!(
        call(&provider, "py.sleep@1.0.0", json!({"seconds": 3})),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            call(&provider, "py.crash@1.0.0", json!({})).await
        }
    );
    for outcome in [&slow, &crash] {
        assert!(
            matches!(outcome, Err(ProviderError::Failed(m)) if m.contains("provider process exited") && m.contains("exit status: 3")),
            "{outcome:?}"
        );
    }
    // Down right after the crash, ready again after the (100 ms) backoff.
    assert!(!provider.ready(&qid("py.echo@1.0.0")));
    assert!(provider.wait_ready(Duration::from_secs(5)).await);
    assert!(provider.ready(&qid("py.echo@1.0.0")));
    let status = provider.status();
    assert_eq!((status.generation, status.restarts), (2, 1));
    assert!(matches!(status.last_failure, Some(ChildFailure::Exited(_))));
    assert_eq!(
        call(&provider, "py.echo@1.0.0", json!({"after": "restart"})).await,
        Ok(json!({"after": "restart"}))
    );
    // Same descriptors after the restart: no re-registration needed.
    assert!(!updates.has_changed().unwrap());
    // Nothing was replayed into the new child.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let lines = journal_lines(&journal);
    let count = |suffix: &str| lines.iter().filter(|l| l.ends_with(suffix)).count();
    assert_eq!(lines.iter().filter(|l| l.starts_with("start ")).count(), 2);
    assert_eq!(count(" py.crash"), 1, "{lines:?}");
    assert_eq!(count(" py.sleep"), 1, "{lines:?}");
    assert_eq!(count(" py.echo"), 1, "{lines:?}");
    provider.shutdown().await;
}

#[tokio::test]
async fn calls_the_child_cannot_take_are_refused_without_harm() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = example_config(&dir.path().join("journal"));
    config.max_line_bytes = 2048;
    let provider = weft_managed::ManagedProvider::start(config).await.unwrap();
    // A pinned revision the child does not serve.
    let mut ctx = context(&provider, "py.echo@1.0.0", Duration::from_secs(5));
    ctx.revision = provider
        .descriptors()
        .into_iter()
        .find(|d| d.id().as_str() == "py.upper")
        .unwrap()
        .revision()
        .clone();
    let outcome = provider.call(&ctx, json!({})).await;
    assert!(
        matches!(outcome, Err(ProviderError::Unavailable(_))),
        "{outcome:?}"
    );
    // A call line over the line limit is never sent.
    let big = json!({"text": "x".repeat(4000)});
    let outcome = call(&provider, "py.echo@1.0.0", big).await;
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("at most 2048")),
        "{outcome:?}"
    );
    assert_eq!(
        call(&provider, "py.echo@1.0.0", json!({"small": true})).await,
        Ok(json!({"small": true}))
    );
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_stdin_and_the_child_exits() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = start_example(&journal).await;
    let started = Instant::now();
    provider.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(2));
    // The child read end of input and exited on its own (it journals "exit").
    assert!(journal_lines(&journal).contains(&"exit".to_owned()));
    assert_eq!(provider.status().state, ChildState::Stopped);
    assert!(!provider.ready(&qid("py.echo@1.0.0")));
    let ctx = context(&provider, "py.echo@1.0.0", Duration::from_secs(1));
    assert!(matches!(
        provider.call(&ctx, json!({})).await,
        Err(ProviderError::Unavailable(_))
    ));
    provider.shutdown().await; // idempotent
}
