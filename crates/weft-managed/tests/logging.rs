//! The child's stderr reaches the node's log.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn stderr_lines_are_logged_with_the_provider_id() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // The current-thread runtime runs every task on this thread.
    let _guard = tracing::subscriber::set_default(subscriber);
    let dir = tempfile::tempdir().unwrap();
    let provider = start_example(&dir.path().join("journal")).await;
    let text = || String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    let logged = eventually(Duration::from_secs(2), || {
        text().lines().any(|l| {
            l.contains("provider=py")
                && l.contains("child: echo_provider[")
                && l.contains("ready: protocol 1")
        })
    })
    .await;
    assert!(logged, "{}", text());
    provider.shutdown().await;
}
