//! Helpers shared by the integration tests.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use weft_contract::QualifiedId;
use weft_managed::{ManagedConfig, ManagedProvider};
use weft_provider::{CallContext, ChunkSink, ChunkSource, Provider, ProviderError};

/// The Python example provider (protocol 1, unary).
pub fn example_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/providers/python/echo_provider.py")
}

/// The Python streaming example provider (protocol 2).
pub fn stream_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/providers/python/stream_provider.py")
}

/// A config running the streaming example with its journal at `journal`.
pub fn stream_config(journal: &Path) -> ManagedConfig {
    let mut config = ManagedConfig::new(
        "pys",
        vec![
            "python3".into(),
            stream_script().to_string_lossy().into_owned(),
        ],
    );
    config.env.push((
        "STREAM_PROVIDER_JOURNAL".into(),
        journal.to_string_lossy().into_owned(),
    ));
    fast(&mut config);
    config
}

/// A streaming call running on its own task, as the fabric would drive it.
pub struct StreamRun {
    /// The provider's output chunks (a bounded queue of the chosen capacity).
    pub chunks: mpsc::Receiver<Value>,
    /// The caller's input (client streaming, bidirectional); drop it to half-close.
    pub input: Option<mpsc::Sender<Value>>,
    /// The provider's future.
    pub done: JoinHandle<Result<Option<Value>, ProviderError>>,
}

impl StreamRun {
    /// Sends one input chunk (bounded, so a test never hangs).
    pub async fn send(&self, chunk: Value) {
        let input = self.input.as_ref().expect("this stream takes input");
        tokio::time::timeout(Duration::from_secs(10), input.send(chunk))
            .await
            .expect("input accepted in time")
            .expect("the stream is still open");
    }

    /// The next output chunk (bounded).
    pub async fn next(&mut self) -> Option<Value> {
        tokio::time::timeout(Duration::from_secs(10), self.chunks.recv())
            .await
            .expect("a chunk or the end in time")
    }

    /// Half-closes input, reads every remaining chunk and the outcome (bounded).
    pub async fn finish(mut self) -> (Vec<Value>, Result<Option<Value>, ProviderError>) {
        self.input = None;
        let mut chunks = Vec::new();
        while let Some(chunk) = self.next().await {
            chunks.push(chunk);
        }
        let outcome = tokio::time::timeout(Duration::from_secs(10), self.done)
            .await
            .expect("the stream ended in time")
            .expect("the stream task did not panic");
        (chunks, outcome)
    }
}

/// Starts a streaming call of `qualified` with an output queue of `capacity` chunks and a
/// deadline `timeout` away.
pub fn start_stream(
    provider: &Arc<ManagedProvider>,
    qualified: &str,
    payload: Value,
    capacity: usize,
    timeout: Duration,
) -> StreamRun {
    let ctx = context(provider, qualified, timeout);
    let takes_input = provider
        .descriptors()
        .iter()
        .find(|d| d.qualified_id() == ctx.capability)
        .is_some_and(|d| d.io_mode().has_input_chunks());
    let (out_tx, out_rx) = mpsc::channel(capacity);
    let (input, source) = if takes_input {
        let (tx, rx) = mpsc::channel(capacity);
        (Some(tx), Some(ChunkSource::new(rx)))
    } else {
        (None, None)
    };
    let provider = Arc::clone(provider);
    let done = tokio::spawn(async move {
        provider
            .stream(&ctx, payload, source, ChunkSink::new(out_tx))
            .await
    });
    StreamRun {
        chunks: out_rx,
        input,
        done,
    }
}

/// Short timings so that every test finishes in a few seconds.
pub fn fast(config: &mut ManagedConfig) {
    config.handshake_timeout = Duration::from_secs(5);
    config.ping_interval = Duration::from_millis(200);
    config.ping_timeout = Duration::from_secs(2);
    config.restart_backoff = vec![Duration::from_millis(100)];
    config.shutdown_grace = Duration::from_millis(500);
}

/// A config running the example with its journal at `journal`.
pub fn example_config(journal: &Path) -> ManagedConfig {
    let mut config = ManagedConfig::new(
        "py",
        vec![
            "python3".into(),
            example_script().to_string_lossy().into_owned(),
        ],
    );
    config.env.push((
        "ECHO_PROVIDER_JOURNAL".into(),
        journal.to_string_lossy().into_owned(),
    ));
    fast(&mut config);
    config
}

/// A config running an inline Python script.
pub fn script_config(dir: &Path, name: &str, source: &str) -> ManagedConfig {
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    let mut config = ManagedConfig::new(
        "bad",
        vec!["python3".into(), path.to_string_lossy().into_owned()],
    );
    fast(&mut config);
    config
}

/// A call context for `qualified` (its revision taken from the provider), expiring
/// after `timeout`.
pub fn context(provider: &ManagedProvider, qualified: &str, timeout: Duration) -> CallContext {
    let capability = QualifiedId::parse(qualified).unwrap();
    let descriptor = provider
        .descriptors()
        .into_iter()
        .find(|d| d.qualified_id() == capability)
        .unwrap_or_else(|| panic!("{qualified} is not served"));
    CallContext {
        call_id: format!("test-{qualified}"),
        capability,
        revision: descriptor.revision().clone(),
        deadline: Instant::now() + timeout,
    }
}

/// One call with a 5 s deadline, itself bounded so a test never hangs.
pub async fn call(
    provider: &ManagedProvider,
    qualified: &str,
    payload: Value,
) -> Result<Value, ProviderError> {
    let ctx = context(provider, qualified, Duration::from_secs(5));
    tokio::time::timeout(Duration::from_secs(10), provider.call(&ctx, payload))
        .await
        .expect("the call hung")
}

/// Starts the example provider (fails the test if it does not start).
pub async fn start_example(journal: &Path) -> Arc<ManagedProvider> {
    ManagedProvider::start(example_config(journal))
        .await
        .expect("the example provider starts")
}

/// The journal's lines.
pub fn journal_lines(journal: &Path) -> Vec<String> {
    std::fs::read_to_string(journal)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Polls `check` every 20 ms until it holds or `timeout` passes.
pub async fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + timeout;
    while Instant::now() < until {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}
