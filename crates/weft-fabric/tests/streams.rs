//! Server streaming through the fabric: lifecycle order, validation of every chunk, one
//! terminal, deadline, cancellation, and flow control toward a slow reader.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use weft_contract::{Descriptor, Limits};
use weft_fabric::builtin::Count;
use weft_fabric::{CallRequest, Fabric, FabricOptions, Frame, FrameKind};
use weft_provider::{CallContext, ChunkSink, ChunkSource, Provider, ProviderError};
use weft_registry::{
    NodeId, ProviderId, ProviderRegistration, RedbStore, Registry, RegistryOptions, TenantId,
};

struct World {
    _dir: tempfile::TempDir,
    registry: Registry,
    fabric: Fabric,
}

fn world(options: impl FnOnce(&mut FabricOptions)) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = RedbStore::open(&dir.path().join("r.redb")).unwrap();
    let registry = Registry::open(Arc::new(store), RegistryOptions::default()).unwrap();
    registry.bootstrap().unwrap();
    let mut o = FabricOptions::new(NodeId::parse("n1").unwrap());
    options(&mut o);
    World {
        _dir: dir,
        registry,
        fabric: Fabric::new(o),
    }
}

impl World {
    fn serve(&self, id: &str, provider: Arc<dyn Provider>) -> String {
        let descriptors = provider.descriptors();
        let rev = descriptors[0].revision().to_string();
        let pid = ProviderId::parse(id).unwrap();
        self.registry
            .register_provider(
                &TenantId::default_tenant(),
                pid.clone(),
                ProviderRegistration {
                    node_id: NodeId::parse("n1").unwrap(),
                    transport: None,
                    descriptors,
                },
            )
            .unwrap();
        self.fabric
            .attach(TenantId::default_tenant(), pid, provider);
        rev
    }

    async fn open(
        &self,
        id: &str,
        rev: &str,
        payload: Value,
        timeout: Option<f64>,
    ) -> Result<weft_fabric::StreamCall, weft_fabric::CallError> {
        let request = CallRequest {
            call_id: Some("s-1".into()),
            capability_id: id.into(),
            version: "1.0.0".into(),
            descriptor_revision: rev.into(),
            payload: serde_json::value::RawValue::from_string(payload.to_string()).unwrap(),
            timeout_seconds: timeout,
            provider_id: None,
            node_id: None,
            verify: false,
        };
        self.fabric
            .open_stream(&self.registry, &TenantId::default_tenant(), request)
            .await
    }
}

async fn collect(mut stream: weft_fabric::StreamCall) -> Vec<Frame> {
    let mut frames = Vec::new();
    while let Some(f) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
    {
        frames.push(f);
    }
    frames
}

fn assert_lifecycle(frames: &[Frame]) {
    assert_eq!(frames[0].kind, FrameKind::Started);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f.sequence, i as u64, "contiguous sequences");
        assert_eq!(f.call_id, "s-1");
    }
    assert_eq!(
        frames.iter().filter(|f| f.is_terminal()).count(),
        1,
        "exactly one terminal"
    );
    assert!(frames.last().unwrap().is_terminal(), "the terminal is last");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_streams_every_chunk_then_completes() {
    let w = world(|_| {});
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    let frames = collect(w.open("count", &rev, json!({"to": 5}), None).await.unwrap()).await;
    assert_lifecycle(&frames);
    let ns: Vec<u64> = frames
        .iter()
        .filter(|f| f.kind == FrameKind::Chunk)
        .map(|f| f.payload.as_ref().unwrap()["n"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [1, 2, 3, 4, 5]);
    let last = frames.last().unwrap();
    assert_eq!(last.kind, FrameKind::Completed);
    assert_eq!(last.payload, Some(json!({"count": 5})));
    // The slot is released just after the terminal is sent.
    for _ in 0..100 {
        if w.fabric.active_streams() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(w.fabric.active_streams(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_run_before_any_frame() {
    let w = world(|_| {});
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    let bad = w
        .open("count", &rev, json!({"to": 0}), None)
        .await
        .err()
        .unwrap();
    assert_eq!(bad.code(), "invalid_payload");
    let stale = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
    assert_eq!(
        w.open("count", stale, json!({"to": 1}), None)
            .await
            .err()
            .unwrap()
            .code(),
        "revision_mismatch"
    );
}

/// A provider that emits whatever it is told, then ends as told.
struct Scripted {
    descriptor: Descriptor,
    chunks: Vec<Value>,
    end: Result<Option<Value>, ProviderError>,
    sent: Arc<AtomicU64>,
}

impl Scripted {
    fn new(chunks: Vec<Value>, end: Result<Option<Value>, ProviderError>) -> Self {
        let descriptor = Descriptor::from_value(
            &json!({"id": "scripted", "version": "1.0.0", "title": "s", "description": "s", "io_mode": "server_streaming",
                    "input_schema": {"type": "object"},
                    "output_chunk_schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
                    "output_schema": {"type": "object", "required": ["total"]}}),
            &Limits::default(),
        )
        .unwrap();
        Self {
            descriptor,
            chunks,
            end,
            sent: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Provider for Scripted {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.descriptor.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async { Err(ProviderError::Failed("no".into())) }.boxed()
    }
    fn stream<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
        _: Option<ChunkSource>,
        output: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        async move {
            for chunk in &self.chunks {
                if output.send(chunk.clone()).await.is_err() {
                    return Err(ProviderError::Failed("closed".into()));
                }
                self.sent.fetch_add(1, Ordering::SeqCst);
            }
            self.end.clone()
        }
        .boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_chunk_fails_the_stream_with_invalid_frame() {
    let w = world(|_| {});
    let rev = w.serve(
        "p",
        Arc::new(Scripted::new(
            vec![json!({"n": 1}), json!({"n": "two"}), json!({"n": 3})],
            Ok(None),
        )),
    );
    let frames = collect(w.open("scripted", &rev, json!({}), None).await.unwrap()).await;
    assert_lifecycle(&frames);
    let kinds: Vec<FrameKind> = frames.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [FrameKind::Started, FrameKind::Chunk, FrameKind::Failed]
    );
    assert_eq!(frames[2].error.as_ref().unwrap().code, "invalid_frame");
}

/// How a scripted provider's stream ends.
type Outcome = Result<Option<Value>, ProviderError>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminals_follow_the_provider_outcome() {
    let cases: Vec<(Outcome, FrameKind, Option<&str>)> = vec![
        (Ok(Some(json!({"total": 1}))), FrameKind::Completed, None),
        (Ok(None), FrameKind::Completed, None),
        (
            Ok(Some(json!({}))),
            FrameKind::Failed,
            Some("invalid_result"),
        ),
        (
            Err(ProviderError::Failed("boom".into())),
            FrameKind::Failed,
            Some("provider_error"),
        ),
        (
            Err(ProviderError::Unavailable("gone".into())),
            FrameKind::Failed,
            Some("unreachable"),
        ),
    ];
    for (end, kind, code) in cases {
        let w = world(|_| {});
        let rev = w.serve("p", Arc::new(Scripted::new(vec![json!({"n": 1})], end)));
        let frames = collect(w.open("scripted", &rev, json!({}), None).await.unwrap()).await;
        assert_lifecycle(&frames);
        let last = frames.last().unwrap();
        assert_eq!(last.kind, kind);
        assert_eq!(last.error.as_ref().map(|e| e.code.as_str()), code);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_ends_a_stream_with_timeout() {
    let w = world(|_| {});
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    let frames = collect(
        w.open(
            "count",
            &rev,
            json!({"to": 1000, "delay_ms": 50}),
            Some(0.3),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_lifecycle(&frames);
    let last = frames.last().unwrap();
    assert_eq!(
        (last.kind, last.error.as_ref().unwrap().code.as_str()),
        (FrameKind::Failed, "timeout")
    );
    assert!(frames.len() < 20, "stopped early: {} frames", frames.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_ends_with_one_cancelled_terminal_and_frees_the_slot() {
    let w = world(|_| {});
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    let mut stream = w
        .open("count", &rev, json!({"to": 1000, "delay_ms": 20}), None)
        .await
        .unwrap();
    assert_eq!(stream.next().await.unwrap().kind, FrameKind::Started);
    assert_eq!(stream.next().await.unwrap().kind, FrameKind::Chunk);
    stream.cancel("enough");
    let mut rest = Vec::new();
    while let Some(f) = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .unwrap()
    {
        rest.push(f);
    }
    let last = rest.last().unwrap();
    assert_eq!(last.kind, FrameKind::Cancelled);
    assert_eq!(last.error.as_ref().unwrap().message, "enough");
    assert_eq!(rest.iter().filter(|f| f.is_terminal()).count(), 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(w.fabric.active_streams(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_slows_the_provider_instead_of_buffering() {
    let w = world(|o| o.stream_queue = 4);
    let chunks: Vec<Value> = (0..1000).map(|n| json!({"n": n})).collect();
    let provider = Arc::new(Scripted::new(chunks, Ok(None)));
    let sent = provider.sent.clone();
    let rev = w.serve("p", provider);
    let mut stream = w.open("scripted", &rev, json!({}), None).await.unwrap();
    assert_eq!(stream.next().await.unwrap().kind, FrameKind::Started);
    // Read nothing for a while: the provider can only run ahead by the two bounded queues.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ahead = sent.load(Ordering::SeqCst);
    assert!(
        ahead <= 4 + 4 + 2,
        "provider ran {ahead} chunks ahead of a reader that read none"
    );
    let frames = collect(stream).await;
    assert_eq!(
        frames.iter().filter(|f| f.kind == FrameKind::Chunk).count(),
        1000
    );
    assert_eq!(frames.last().unwrap().kind, FrameKind::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_slots_are_bounded() {
    let w = world(|o| o.max_concurrent_streams = 2);
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    let a = w
        .open("count", &rev, json!({"to": 1000, "delay_ms": 100}), None)
        .await
        .unwrap();
    let b = w
        .open("count", &rev, json!({"to": 1000, "delay_ms": 100}), None)
        .await
        .unwrap();
    let third = w
        .open("count", &rev, json!({"to": 1}), None)
        .await
        .err()
        .unwrap();
    assert_eq!(third.code(), "overloaded");
    drop((a, b));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        w.fabric.active_streams(),
        0,
        "dropping a stream cancels it and frees its slot"
    );
    assert!(w.open("count", &rev, json!({"to": 1}), None).await.is_ok());
}

/// A client-streaming provider that reads every chunk and completes with nothing.
struct Silent {
    descriptor: Descriptor,
}

impl Provider for Silent {
    fn descriptors(&self) -> Vec<Descriptor> {
        vec![self.descriptor.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
    ) -> BoxFuture<'a, Result<Value, ProviderError>> {
        async { Err(ProviderError::Failed("no".into())) }.boxed()
    }
    fn stream<'a>(
        &'a self,
        _: &'a CallContext,
        _: Value,
        input: Option<ChunkSource>,
        _: ChunkSink,
    ) -> BoxFuture<'a, Result<Option<Value>, ProviderError>> {
        async move {
            let mut input = input.unwrap();
            while input.next().await.is_some() {}
            Ok(None)
        }
        .boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_streaming_without_a_required_result_is_invalid_result() {
    let w = world(|_| {});
    let descriptor = Descriptor::from_value(
        &json!({"id": "silent", "version": "1.0.0", "title": "s", "description": "s",
                "io_mode": "client_streaming", "input_schema": {"type": "object"},
                "input_chunk_schema": {"type": "object"},
                "output_schema": {"type": "object", "required": ["total"]}}),
        &Limits::default(),
    )
    .unwrap();
    let rev = w.serve("silent", Arc::new(Silent { descriptor }));
    let stream = w.open("silent", &rev, json!({}), None).await.unwrap();
    let (mut frames, input, _stopper) = stream.split();
    let mut input = input.expect("client streaming has an input side");
    input.sender().unwrap().send(json!({"x": 1})).await.unwrap();
    input.half_close();
    let mut all = Vec::new();
    while let Some(f) = tokio::time::timeout(Duration::from_secs(5), frames.next())
        .await
        .unwrap()
    {
        all.push(f);
    }
    let last = all.last().unwrap();
    assert_eq!(last.kind, FrameKind::Failed);
    assert_eq!(last.error.as_ref().unwrap().code, "invalid_result");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_the_open_still_yields_started_first() {
    let w = world(|_| {});
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    for _ in 0..20 {
        let mut stream = w
            .open("count", &rev, json!({"to": 1000, "delay_ms": 10}), None)
            .await
            .unwrap();
        // Cancel before reading anything.
        stream.cancel("changed my mind");
        let frames = collect(stream).await;
        assert_eq!(frames[0].kind, FrameKind::Started, "{frames:?}");
        assert_eq!(frames.last().unwrap().kind, FrameKind::Cancelled);
        assert_eq!(frames.iter().filter(|f| f.is_terminal()).count(), 1);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(w.fabric.active_streams(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_are_counted_in_the_diagnostics() {
    let w = world(|_| {});
    let rev = w.serve("builtin", Arc::new(Count::new().unwrap()));
    let frames = collect(w.open("count", &rev, json!({"to": 3}), None).await.unwrap()).await;
    assert_eq!(frames.last().unwrap().kind, FrameKind::Completed);
    let _ = w
        .open("count", &rev, json!({"to": 0}), None)
        .await
        .err()
        .unwrap();
    let mut stream = w
        .open("count", &rev, json!({"to": 1000, "delay_ms": 10}), None)
        .await
        .unwrap();
    stream.cancel("stop");
    let _ = collect(stream).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let snapshot = w.fabric.diagnostics().snapshot();
    let c = &snapshot.capabilities["count@1.0.0"];
    assert_eq!(c.admitted_streams, 3);
    assert_eq!(c.completed_streams, 1);
    assert_eq!(c.cancelled_streams, 1);
    assert_eq!(c.failed_streams.get("invalid_payload"), Some(&1));
    assert_eq!(c.frames_out, 3);
    assert_eq!(c.missing_terminals, 0);
    assert_eq!(c.active_streams, 0);
    assert_eq!(c.first_output.count, 1);
}
