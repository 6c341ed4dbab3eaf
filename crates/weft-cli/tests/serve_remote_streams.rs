//! Streaming calls through a real node to a remote HTTP provider served by the SDK
//! (`weft_provider::http::serve`, WebSocket `GET /weft/v1/stream`): every streaming mode over
//! the caller WebSocket and SSE, invalid chunks, provider errors, a provider that dies
//! mid-stream, cancellation reaching the provider, backpressure across both hops, and the
//! lease.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use harness::streams::{
    after_terminal, assert_sequenced, connect, envelope, kinds, next, read_all, send,
};
use harness::{Node, poll, tempdir};
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_provider::{CallContext, ChunkSink, ChunkSource, Provider, ProviderError};

/// What the provider observed, for the test to read.
#[derive(Default)]
struct Stats {
    /// Chunks `rs.count` handed to its sink (counted once `send` returned).
    produced: AtomicUsize,
    /// Streams whose future was dropped before it finished (cancellation).
    cancelled: AtomicUsize,
}

/// Counts a stream as cancelled unless it ran to its end.
struct Watch<'a>(&'a Stats, bool);

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn descriptors() -> Vec<Value> {
    let object = json!({"type": "object"});
    let n = json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
    let value = json!({"type": "object", "required": ["value"], "additionalProperties": false,
                       "properties": {"value": {"type": "number"}}});
    let text = json!({"type": "object", "required": ["text"], "additionalProperties": false,
                      "properties": {"text": {"type": "string"}}});
    let make = |id: &str, mode: &str, input_chunk: Option<&Value>, output_chunk: Option<&Value>| {
        let mut d = json!({"id": id, "version": "1.0.0", "title": id,
            "description": format!("Remote streaming test capability {id}."),
            "io_mode": mode, "input_schema": object});
        if let Some(schema) = input_chunk {
            d["input_chunk_schema"] = schema.clone();
        }
        if let Some(schema) = output_chunk {
            d["output_chunk_schema"] = schema.clone();
        }
        d
    };
    vec![
        // {to, pad?, delay_ms?} → chunks {n, pad}; completed {count}.
        make("rs.count", "server_streaming", None, Some(&n)),
        // Chunks {value}; completed {sum, count} after half-close.
        make("rs.sum", "client_streaming", Some(&value), None),
        // Each {text} answered upper-cased; completed {chunks}.
        make("rs.upper", "bidirectional", Some(&text), Some(&text)),
        // One good chunk, then one that breaks output_chunk_schema, then more.
        make("rs.bad", "server_streaming", None, Some(&n)),
        // Two chunks, then a provider error.
        make("rs.fail", "server_streaming", None, Some(&n)),
        // Two chunks, then the provider's session task dies (its socket drops).
        make("rs.die", "server_streaming", None, Some(&n)),
    ]
}

struct Streams {
    descriptors: Vec<Descriptor>,
    stats: Arc<Stats>,
}

fn closed(_: weft_provider::StreamClosed) -> ProviderError {
    ProviderError::Failed("the stream closed".into())
}

impl Streams {
    async fn count(
        &self,
        payload: Value,
        output: ChunkSink,
    ) -> Result<Option<Value>, ProviderError> {
        let mut watch = Watch(&self.stats, false);
        let to = payload["to"].as_u64().unwrap_or(0);
        let pad = "x".repeat(usize::try_from(payload["pad"].as_u64().unwrap_or(0)).unwrap());
        let delay = Duration::from_millis(payload["delay_ms"].as_u64().unwrap_or(0));
        for n in 1..=to {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            output
                .send(json!({"n": n, "pad": pad}))
                .await
                .map_err(closed)?;
            self.stats.produced.fetch_add(1, Ordering::SeqCst);
        }
        watch.1 = true;
        Ok(Some(json!({"count": to})))
    }

    async fn two_then(&self, output: &ChunkSink, bad: bool) -> Result<(), ProviderError> {
        for n in 1..=2 {
            let chunk = if bad && n == 2 {
                json!({"n": "two"})
            } else {
                json!({"n": n})
            };
            output.send(chunk).await.map_err(closed)?;
        }
        Ok(())
    }
}

impl Provider for Streams {
    fn descriptors(&self) -> Vec<Descriptor> {
        self.descriptors.clone()
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async { Err(ProviderError::Failed("streaming only".into())) }.boxed()
    }
    fn stream<'a>(
        &'a self,
        context: &'a CallContext,
        payload: Value,
        input: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        async move {
            match (context.capability.id.as_str(), input) {
                ("rs.count", _) => self.count(payload, output).await,
                ("rs.sum", Some(mut input)) => {
                    let (mut sum, mut count) = (0.0, 0);
                    while let Some(chunk) = input.next().await {
                        sum += chunk["value"].as_f64().unwrap_or(0.0);
                        count += 1;
                    }
                    Ok(Some(json!({"sum": sum, "count": count})))
                }
                ("rs.upper", Some(mut input)) => {
                    let mut chunks = 0;
                    while let Some(chunk) = input.next().await {
                        let text = chunk["text"].as_str().unwrap_or("").to_uppercase();
                        output.send(json!({"text": text})).await.map_err(closed)?;
                        chunks += 1;
                    }
                    Ok(Some(json!({"chunks": chunks})))
                }
                ("rs.bad", _) => {
                    self.two_then(&output, true).await?;
                    self.count(json!({"to": 5}), output).await
                }
                ("rs.fail", _) => {
                    self.two_then(&output, false).await?;
                    Err(ProviderError::Failed("the remote provider gave up".into()))
                }
                ("rs.die", _) => {
                    self.two_then(&output, false).await?;
                    panic!("the provider dies mid-stream (expected by the test)");
                }
                (other, _) => Err(ProviderError::Failed(format!("unexpected {other}"))),
            }
        }
        .boxed()
    }
}

/// Serves the provider on its own runtime; dropping the runtime kills it.
fn serve_provider() -> (tokio::runtime::Runtime, String, Arc<Stats>) {
    let stats = Arc::new(Stats::default());
    let (runtime, url) = harness::serve_remote_provider(Arc::new(Streams {
        descriptors: descriptors()
            .iter()
            .map(|d| Descriptor::from_value(d, &Limits::default()).unwrap())
            .collect(),
        stats: stats.clone(),
    }));
    (runtime, url, stats)
}

/// A node with the provider registered (lease `lease` seconds).
fn setup(
    lease: u64,
) -> (
    tempfile::TempDir,
    Node,
    String,
    tokio::runtime::Runtime,
    String,
    Arc<Stats>,
) {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let (runtime, url, stats) = serve_provider();
    let r = register(&node, &admin, &url, lease);
    assert_eq!(r.status, 201, "{:?}", r.body);
    (dir, node, admin, runtime, url, stats)
}

fn register(node: &Node, token: &str, url: &str, lease: u64) -> harness::Resp {
    node.send(
        "PUT",
        "/v1/providers/remote-streams",
        token,
        &json!({"node_id": "edge-s", "descriptors": descriptors(),
                "transport": {"kind": "http", "url": url, "lease_seconds": lease}}),
    )
}

/// Runs one call over the caller WebSocket: the envelope, `chunks`, a half-close when
/// `chunks` is `Some`; returns every frame up to the terminal, checking nothing follows it.
fn run(node: &Node, token: &str, id: &str, payload: Value, chunks: Option<&[Value]>) -> Vec<Value> {
    let mut ws = connect(node, token);
    send(&mut ws, envelope(node, token, id, payload));
    if let Some(chunks) = chunks {
        for (i, chunk) in chunks.iter().enumerate() {
            send(
                &mut ws,
                json!({"kind": "chunk", "sequence": i + 1, "payload": chunk}),
            );
        }
        send(
            &mut ws,
            json!({"kind": "completed", "sequence": chunks.len() + 1}),
        );
    }
    let frames = read_all(&mut ws);
    assert_eq!(after_terminal(&mut ws), Vec::<Value>::new(), "{frames:?}");
    frames
}

fn terminals(frames: &[Value]) -> usize {
    kinds(frames)
        .iter()
        .filter(|k| ["completed", "failed", "cancelled"].contains(k))
        .count()
}

#[test]
fn every_streaming_mode_reaches_the_remote_provider() {
    let (_dir, node, admin, _runtime, _url, _stats) = setup(30);

    let frames = run(&node, &admin, "rs.count", json!({"to": 3}), None);
    assert_eq!(
        kinds(&frames),
        ["started", "chunk", "chunk", "chunk", "completed"]
    );
    assert_sequenced(&frames);
    assert_eq!(frames[3]["payload"], json!({"n": 3, "pad": ""}));
    assert_eq!(frames[4]["payload"], json!({"count": 3}));
    assert_eq!(frames[0]["call_id"], "ws-rs.count");

    let values = [
        json!({"value": 1.5}),
        json!({"value": 2.5}),
        json!({"value": 6}),
    ];
    let frames = run(&node, &admin, "rs.sum", json!({}), Some(&values));
    assert_eq!(kinds(&frames), ["started", "completed"]);
    assert_eq!(frames[1]["payload"], json!({"sum": 10.0, "count": 3}));

    let texts = [json!({"text": "ab"}), json!({"text": "cd"})];
    let frames = run(&node, &admin, "rs.upper", json!({}), Some(&texts));
    assert_eq!(kinds(&frames), ["started", "chunk", "chunk", "completed"]);
    assert_sequenced(&frames);
    assert_eq!(frames[1]["payload"], json!({"text": "AB"}));
    assert_eq!(frames[2]["payload"], json!({"text": "CD"}));
    assert_eq!(frames[3]["payload"], json!({"chunks": 2}));

    // Server streaming over SSE takes the same hop.
    let body = serde_json::to_vec(&envelope(&node, &admin, "rs.count", json!({"to": 2}))).unwrap();
    let r = node.call(
        "POST",
        "/v1/calls",
        Some(&admin),
        Some(&body),
        &[("accept", "text/event-stream")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let events: Vec<Value> = r
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    assert_eq!(
        kinds(&events),
        ["started", "chunk", "chunk", "completed"],
        "{}",
        r.text
    );
    assert_eq!(events[3]["payload"], json!({"count": 2}));
}

#[test]
fn invalid_chunks_errors_and_deaths_end_with_one_failed_terminal() {
    let (_dir, node, admin, _runtime, _url, _stats) = setup(30);

    // A chunk that breaks output_chunk_schema fails the call with the fabric's code; the
    // provider's later chunks never reach the caller.
    let frames = run(&node, &admin, "rs.bad", json!({}), None);
    assert_eq!(kinds(&frames), ["started", "chunk", "failed"], "{frames:?}");
    assert_eq!(frames[2]["error"]["code"], "invalid_frame");

    // The provider's error message becomes provider_error.
    let frames = run(&node, &admin, "rs.fail", json!({}), None);
    assert_eq!(
        kinds(&frames),
        ["started", "chunk", "chunk", "failed"],
        "{frames:?}"
    );
    assert_eq!(frames[3]["error"]["code"], "provider_error");
    assert_eq!(frames[3]["error"]["message"], "the remote provider gave up");

    // The provider's side of the socket dies (chunks it queued may die with it): one failed
    // terminal, never a completed.
    let frames = run(&node, &admin, "rs.die", json!({}), None);
    let kinds_seen = kinds(&frames);
    assert_eq!(kinds_seen.first(), Some(&"started"), "{frames:?}");
    assert_eq!(kinds_seen.last(), Some(&"failed"), "{frames:?}");
    assert_eq!(terminals(&frames), 1, "{frames:?}");
    assert!(kinds_seen.len() <= 4, "{frames:?}");
    let failed = frames.last().unwrap();
    assert_eq!(failed["error"]["code"], "provider_error");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without a terminal"),
        "{frames:?}"
    );

    // The node still serves the provider afterwards.
    let frames = run(&node, &admin, "rs.count", json!({"to": 1}), None);
    assert_eq!(kinds(&frames).last(), Some(&"completed"));
}

#[test]
fn a_provider_process_that_dies_mid_stream_fails_the_call() {
    let (_dir, node, admin, runtime, _url, stats) = setup(30);
    let mut ws = connect(&node, &admin);
    send(
        &mut ws,
        envelope(
            &node,
            &admin,
            "rs.count",
            json!({"to": 100000, "delay_ms": 5}),
        ),
    );
    assert_eq!(next(&mut ws).unwrap()["kind"], "started");
    assert_eq!(next(&mut ws).unwrap()["kind"], "chunk");
    drop(runtime);
    let mut frames = read_all(&mut ws);
    frames.extend(after_terminal(&mut ws));
    assert_eq!(kinds(&frames).last(), Some(&"failed"), "{frames:?}");
    assert_eq!(terminals(&frames), 1, "{frames:?}");
    assert!(stats.produced.load(Ordering::SeqCst) < 100000);

    // With the process gone while its lease holds, a new stream fails `unreachable`.
    let frames = run(&node, &admin, "rs.count", json!({"to": 1}), None);
    assert_eq!(kinds(&frames), ["started", "failed"], "{frames:?}");
    assert_eq!(frames[1]["error"]["code"], "unreachable");
}

#[test]
fn caller_cancel_reaches_the_remote_provider() {
    let (_dir, node, admin, _runtime, _url, stats) = setup(30);
    let mut ws = connect(&node, &admin);
    send(
        &mut ws,
        envelope(
            &node,
            &admin,
            "rs.count",
            json!({"to": 100000, "delay_ms": 10}),
        ),
    );
    assert_eq!(next(&mut ws).unwrap()["kind"], "started");
    assert_eq!(next(&mut ws).unwrap()["kind"], "chunk");
    send(&mut ws, json!({"kind": "cancelled"}));
    let frames = read_all(&mut ws);
    assert_eq!(kinds(&frames).last(), Some(&"cancelled"), "{frames:?}");
    assert_eq!(terminals(&frames), 1);
    poll(Duration::from_secs(10), || {
        (stats.cancelled.load(Ordering::SeqCst) == 1).then_some(())
    })
    .expect("the remote provider's stream was never cancelled");
}

#[test]
fn a_caller_that_does_not_read_holds_the_remote_provider_back() {
    const TOTAL: usize = 100_000;
    // Every buffer between the provider and the paused caller, generously: the SDK's output
    // queue (16) and the node's queues (64 + 64) in chunks, plus the socket buffers of both
    // hops (kernel send and receive buffers, WebSocket read buffers) — tens of MiB at most
    // on loopback — in 4 KiB chunks.
    const BOUND: usize = 16 + 64 + 64 + (64 << 20) / 4096;
    let (_dir, node, admin, _runtime, _url, stats) = setup(30);
    let mut ws = connect(&node, &admin);
    send(
        &mut ws,
        envelope(&node, &admin, "rs.count", json!({"to": TOTAL, "pad": 4096})),
    );
    for _ in 0..11 {
        assert!(next(&mut ws).is_some());
    }
    // Stop reading; wait until the provider stops producing (it is parked in `send`).
    let mut last = usize::MAX;
    let produced = poll(Duration::from_secs(60), || {
        std::thread::sleep(Duration::from_millis(300));
        let now = stats.produced.load(Ordering::SeqCst);
        let settled = (now == last).then_some(now);
        last = now;
        settled
    })
    .expect("the provider never stopped producing");
    eprintln!("produced {produced} of {TOTAL} chunks while the caller paused (bound {BOUND})");
    assert!(
        produced < BOUND,
        "produced {produced} chunks for a caller that read 10"
    );
    assert!(produced < TOTAL);
    // Reading again lets it go on.
    for _ in 0..(produced + 10) {
        assert_eq!(next(&mut ws).unwrap()["kind"], "chunk");
    }
    assert!(stats.produced.load(Ordering::SeqCst) > produced);
    send(&mut ws, json!({"kind": "cancelled"}));
}

#[test]
fn a_lapsed_lease_refuses_streams_like_calls() {
    let (_dir, node, admin, _runtime, url, _stats) = setup(1);
    // The envelope is taken while the provider is listed.
    let call = envelope(&node, &admin, "rs.count", json!({"to": 1}));
    let listed = || {
        let r = node.get("/v1/capabilities?id=rs.count", &admin);
        !r.body["capabilities"].as_array().unwrap().is_empty()
    };
    poll(Duration::from_secs(5), || (!listed()).then_some(()))
        .expect("the lapsed provider stays listed");
    let mut ws = connect(&node, &admin);
    send(&mut ws, call);
    let frames = read_all(&mut ws);
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["error"]["code"], "unreachable", "{frames:?}");
    // Renewing brings streaming back.
    assert_eq!(register(&node, &admin, &url, 30).status, 200);
    let frames = run(&node, &admin, "rs.count", json!({"to": 1}), None);
    assert_eq!(kinds(&frames).last(), Some(&"completed"));
}
