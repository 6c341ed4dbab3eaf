//! Helpers shared by the integration tests.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use weft_contract::QualifiedId;
use weft_managed::{ManagedConfig, ManagedProvider};
use weft_provider::{CallContext, Provider, ProviderError};

/// The Python example provider.
pub fn example_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/providers/python/echo_provider.py")
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
