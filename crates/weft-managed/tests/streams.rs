//! Protocol 2: the Python streaming example as a managed child — every streaming mode end
//! to end, flow control holding a child back behind a slow consumer, deadlines and
//! cancellation, and protocol-1 children still served.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use weft_managed::ManagedProvider;
use weft_provider::{Provider, ProviderError};

const LONG: Duration = Duration::from_secs(20);

fn numbers(to: u64) -> Vec<Value> {
    (1..=to).map(|n| json!({"n": n})).collect()
}

/// The journal's lines for `call_id` with `event` (`sent`, `wait`), as chunk counts.
fn counts(journal: &Path, event: &str, call_id: &str) -> Vec<u64> {
    let prefix = format!("{event} {call_id} ");
    journal_lines(journal)
        .iter()
        .filter_map(|l| l.strip_prefix(&prefix)?.parse().ok())
        .collect()
}

/// The child's id for the only call of `capability` in the journal.
fn child_call_id(journal: &Path, capability: &str) -> String {
    let line = journal_lines(journal)
        .into_iter()
        .find(|l| l.starts_with("call ") && l.contains(&format!(" {capability} ")))
        .unwrap_or_else(|| panic!("no call of {capability}"));
    line.split(' ').nth(1).unwrap().to_owned()
}

#[tokio::test]
async fn server_streaming_delivers_every_chunk_in_order_then_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = ManagedProvider::start(stream_config(&journal))
        .await
        .unwrap();
    // More chunks than the window (16): credit must come back for the stream to finish.
    let run = start_stream(&provider, "pys.count@1.0.0", json!({"to": 50}), 8, LONG);
    let (chunks, outcome) = run.finish().await;
    assert_eq!(chunks, numbers(50));
    assert_eq!(outcome, Ok(Some(json!({"count": 50}))));
    // The window was sent with the call.
    let call = child_call_id(&journal, "pys.count");
    assert!(journal_lines(&journal).contains(&format!("call {call} pys.count 16")));
    assert_eq!(provider.in_flight(), 0);
    provider.shutdown().await;
}

#[tokio::test]
async fn client_streaming_sums_everything_sent_before_the_half_close() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = stream_config(&dir.path().join("journal"));
    config.stream_window = 3;
    let provider = ManagedProvider::start(config).await.unwrap();
    let run = start_stream(&provider, "pys.sum@1.0.0", json!({}), 4, LONG);
    // Forty chunks through a window of three: the node waits for the child's acks.
    for i in 1..=40 {
        run.send(json!({"value": i})).await;
    }
    let (chunks, outcome) = run.finish().await;
    assert!(chunks.is_empty());
    assert_eq!(outcome, Ok(Some(json!({"sum": 820, "count": 40}))));
    assert_eq!(provider.in_flight(), 0);
    provider.shutdown().await;
}

#[tokio::test]
async fn bidirectional_answers_each_chunk_as_it_arrives_and_completes_without_payload() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = stream_config(&dir.path().join("journal"));
    config.stream_window = 2;
    let provider = ManagedProvider::start(config).await.unwrap();
    let mut run = start_stream(&provider, "pys.upper@1.0.0", json!({}), 1, LONG);
    // Lock-step: each answer arrives before the next chunk is sent.
    for word in ["weft", "warp", "shuttle"] {
        run.send(json!({"text": word})).await;
        assert_eq!(run.next().await, Some(json!({"text": word.to_uppercase()})));
    }
    // Then a burst larger than the window both ways.
    for i in 0..20 {
        run.send(json!({"text": format!("w{i}")})).await;
        if i % 5 == 4 {
            for j in i - 4..=i {
                assert_eq!(run.next().await, Some(json!({"text": format!("W{j}")})));
            }
        }
    }
    let (rest, outcome) = run.finish().await;
    assert!(rest.is_empty(), "{rest:?}");
    // `null` on the wire: completed without a payload.
    assert_eq!(outcome, Ok(None));
    provider.shutdown().await;
}

#[tokio::test]
async fn streams_and_unary_calls_share_one_child() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = stream_config(&dir.path().join("journal"));
    config.stream_window = 4;
    let provider = ManagedProvider::start(config).await.unwrap();
    let counts: Vec<StreamRun> = (1..=4)
        .map(|i| start_stream(&provider, "pys.count@1.0.0", json!({"to": 10 * i}), 2, LONG))
        .collect();
    let sum = start_stream(&provider, "pys.sum@1.0.0", json!({}), 2, LONG);
    for v in [1.5, 2.5] {
        sum.send(json!({"value": v})).await;
    }
    assert_eq!(
        call(&provider, "pys.echo@1.0.0", json!({"during": "streams"})).await,
        Ok(json!({"during": "streams"}))
    );
    for (i, run) in (1..=4).zip(counts) {
        let (chunks, outcome) = run.finish().await;
        assert_eq!(chunks, numbers(10 * i));
        assert_eq!(outcome, Ok(Some(json!({"count": 10 * i}))));
    }
    assert_eq!(
        sum.finish().await.1,
        Ok(Some(json!({"sum": 4.0, "count": 2})))
    );
    assert_eq!(provider.in_flight(), 0);
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

/// A consumer that does not read: the child may run ahead by the window plus what the
/// output queue holds, never further; each chunk consumed lets exactly one more through.
#[tokio::test]
async fn a_slow_consumer_holds_the_child_back_by_the_window() {
    const WINDOW: u64 = 4;
    const QUEUE: u64 = 1;
    const TO: u64 = 30;
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let mut config = stream_config(&journal);
    config.stream_window = WINDOW as u32;
    let provider = ManagedProvider::start(config).await.unwrap();
    let mut run = start_stream(
        &provider,
        "pys.count@1.0.0",
        json!({"to": TO}),
        QUEUE as usize,
        LONG,
    );
    assert!(
        eventually(Duration::from_secs(10), || !journal_lines(&journal)
            .is_empty())
        .await
    );
    let id = {
        assert!(
            eventually(Duration::from_secs(10), || journal_lines(&journal)
                .iter()
                .any(|l| l.contains(" pys.count ")))
            .await
        );
        child_call_id(&journal, "pys.count")
    };
    let mut consumed = 0u64;
    while consumed + QUEUE + WINDOW < TO {
        let bound = consumed + QUEUE + WINDOW;
        // The child blocks on its window exactly at the bound…
        assert!(
            eventually(Duration::from_secs(10), || counts(&journal, "wait", &id)
                .contains(&bound))
            .await,
            "the child never waited at {bound}: {:?}",
            journal_lines(&journal)
        );
        // …and never wrote more than that.
        let written = counts(&journal, "sent", &id).into_iter().max().unwrap();
        assert_eq!(written, bound, "consumed {consumed}");
        // Consume three chunks: three more acks, three more chunks.
        for _ in 0..3 {
            assert_eq!(run.next().await, Some(json!({"n": consumed + 1})));
            consumed += 1;
        }
    }
    let (rest, outcome) = run.finish().await;
    assert_eq!(rest, numbers(TO)[consumed as usize..].to_vec());
    assert_eq!(outcome, Ok(Some(json!({"count": TO}))));
    assert!(counts(&journal, "sent", &id).into_iter().all(|n| n <= TO));
    provider.shutdown().await;
}

#[tokio::test]
async fn a_stream_past_its_deadline_is_cancelled_in_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = ManagedProvider::start(stream_config(&journal))
        .await
        .unwrap();
    let run = start_stream(
        &provider,
        "pys.count@1.0.0",
        json!({"to": 1000, "delay_ms": 50}),
        16,
        Duration::from_millis(400),
    );
    let (chunks, outcome) = run.finish().await;
    assert!(chunks.len() < 1000);
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("deadline")),
        "{outcome:?}"
    );
    let id = child_call_id(&journal, "pys.count");
    assert!(
        eventually(Duration::from_secs(5), || journal_lines(&journal)
            .contains(&format!("cancel {id}")))
        .await
    );
    assert_eq!(provider.in_flight(), 0);
    // The child's late "cancelled" error was discarded: no fault, no restart.
    let (chunks, outcome) = start_stream(&provider, "pys.count@1.0.0", json!({"to": 2}), 2, LONG)
        .finish()
        .await;
    assert_eq!(
        (chunks, outcome),
        (numbers(2), Ok(Some(json!({"count": 2}))))
    );
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

#[tokio::test]
async fn dropping_a_stream_cancels_it_in_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let provider = ManagedProvider::start(stream_config(&journal))
        .await
        .unwrap();
    let run = start_stream(&provider, "pys.sum@1.0.0", json!({}), 2, LONG);
    run.send(json!({"value": 1})).await;
    assert!(
        eventually(Duration::from_secs(10), || journal_lines(&journal)
            .iter()
            .any(|l| l.contains(" pys.sum ")))
        .await
    );
    // The fabric drops the provider's future when the caller goes away.
    run.done.abort();
    assert!(run.done.await.unwrap_err().is_cancelled());
    assert!(
        eventually(Duration::from_secs(5), || journal_lines(&journal)
            .iter()
            .any(
                |l| l == &format!("cancel {}", child_call_id(&journal, "pys.sum"))
            ))
        .await
    );
    assert_eq!(provider.in_flight(), 0);
    assert_eq!(
        call(&provider, "pys.echo@1.0.0", json!({"still": "here"})).await,
        Ok(json!({"still": "here"}))
    );
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;
}

#[tokio::test]
async fn a_protocol_1_child_is_still_served_and_never_streamed_to() {
    let dir = tempfile::tempdir().unwrap();
    let provider = start_example(&dir.path().join("journal")).await;
    assert_eq!(
        call(&provider, "py.upper@1.0.0", json!({"text": "one"})).await,
        Ok(json!({"text": "ONE"}))
    );
    // A unary capability is not a stream (and a streaming one is not unary): refused
    // by the node without writing anything.
    let (chunks, outcome) = start_stream(&provider, "py.echo@1.0.0", json!({}), 1, LONG)
        .finish()
        .await;
    assert!(chunks.is_empty());
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("unary")),
        "{outcome:?}"
    );
    assert_eq!(provider.in_flight(), 0);
    assert_eq!(provider.status().generation, 1);
    provider.shutdown().await;

    let provider = ManagedProvider::start(stream_config(&dir.path().join("j2")))
        .await
        .unwrap();
    let outcome = call(&provider, "pys.count@1.0.0", json!({"to": 1})).await;
    assert!(
        matches!(&outcome, Err(ProviderError::Failed(m)) if m.contains("server_streaming")),
        "{outcome:?}"
    );
    assert!(provider.ready(&weft_contract::QualifiedId::parse("pys.count@1.0.0").unwrap()));
    provider.shutdown().await;
}
