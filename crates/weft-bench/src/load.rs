//! The load generator: closed-loop clients, each with one keep-alive HTTP/1.1 connection
//! and one request in flight.
//!
//! Lean on purpose — it shares the cores with the servers under test, so every cycle it
//! spends is taken from them: requests are pre-encoded bytes written whole, responses are
//! parsed only as far as the status line and `Content-Length`, latencies go into a
//! per-connection HDR histogram (no per-sample allocation, no sort), sockets have
//! TCP_NODELAY.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::BenchError;

/// One thing to load: where to connect, the full request to send each time, and a byte
/// string every successful response body must contain.
#[derive(Debug, Clone)]
pub struct Target {
    /// Name in tables and errors.
    pub name: String,
    /// Server address.
    pub addr: SocketAddr,
    /// The encoded request (head and body).
    pub request: Arc<Vec<u8>>,
    /// Bytes a correct response body contains.
    pub expect: Arc<Vec<u8>>,
}

impl Target {
    /// A POST of `body` (JSON) to `path`, optionally with a bearer token.
    pub fn post(
        name: &str,
        addr: SocketAddr,
        path: &str,
        token: Option<&str>,
        body: &str,
        expect: &str,
    ) -> Self {
        let auth = token.map(|token| format!("Bearer {token}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|value| ("authorization", value))
            .into_iter()
            .collect();
        Self::post_with_headers(name, addr, path, &headers, body, expect)
    }

    /// A POST of `body` (JSON) to `path` with extra `headers` (name, value).
    pub fn post_with_headers(
        name: &str,
        addr: SocketAddr,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
        expect: &str,
    ) -> Self {
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(body);
        Self {
            name: name.to_owned(),
            addr,
            request: Arc::new(head.into_bytes()),
            expect: Arc::new(expect.as_bytes().to_vec()),
        }
    }
}

/// What one cell (target × concurrency) measured.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// Completed requests per second inside the window.
    pub rps: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
}

/// A minimal HTTP/1.1 keep-alive connection: Content-Length bodies only.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn connect(addr: SocketAddr) -> Result<Self, String> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("nodelay: {e}"))?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(4096),
        })
    }

    /// Sends `request`; returns the status and whether the body contains `expect`.
    async fn round_trip(&mut self, request: &[u8], expect: &[u8]) -> Result<u16, String> {
        self.stream
            .write_all(request)
            .await
            .map_err(|e| format!("write: {e}"))?;
        let head_end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            self.fill().await?;
        };
        let head = std::str::from_utf8(&self.buf[..head_end]).map_err(|e| e.to_string())?;
        let mut lines = head.split("\r\n");
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line in {head:?}"))?;
        let length: usize = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse().ok())
            .ok_or_else(|| format!("no content-length in {head:?}"))?;
        while self.buf.len() < head_end + length {
            self.fill().await?;
        }
        let body = &self.buf[head_end..head_end + length];
        let ok = status == 200 && body.windows(expect.len()).any(|w| w == expect);
        let outcome = if ok {
            Ok(status)
        } else {
            Err(format!(
                "status {status}: {}",
                String::from_utf8_lossy(body)
            ))
        };
        self.buf.drain(..head_end + length);
        outcome
    }

    async fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 8192];
        let n = self
            .stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("connection closed by the server".to_owned());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

/// 1 µs to 60 s at 3 significant digits.
#[allow(clippy::expect_used)] // Constant, valid bounds: this cannot fail.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

/// One connection's closed loop; records requests that start and finish inside the window.
async fn client(
    target: Target,
    window_start: Instant,
    window_end: Instant,
) -> Result<Histogram<u64>, String> {
    let mut conn = Conn::connect(target.addr).await?;
    let mut latencies = histogram();
    loop {
        let started = Instant::now();
        if started >= window_end {
            return Ok(latencies);
        }
        conn.round_trip(&target.request, &target.expect).await?;
        let finished = Instant::now();
        if started >= window_start && finished <= window_end {
            let micros = u64::try_from((finished - started).as_micros()).unwrap_or(u64::MAX);
            latencies.saturating_record(micros.max(1));
        }
    }
}

/// Loads `target` with `concurrency` closed-loop clients on `runtime`: `warm_up`
/// unrecorded, then `window` measured. Any failed request voids the cell.
pub fn measure(
    runtime: &tokio::runtime::Runtime,
    target: &Target,
    concurrency: usize,
    warm_up: Duration,
    window: Duration,
) -> Result<Measured, BenchError> {
    let (merged, errors) = runtime.block_on(async {
        let window_start = Instant::now() + warm_up;
        let window_end = window_start + window;
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| tokio::spawn(client(target.clone(), window_start, window_end)))
            .collect();
        let mut merged = histogram();
        let mut errors = Vec::new();
        for task in tasks {
            match task.await {
                Ok(Ok(h)) => {
                    // Same bounds on both sides: adding cannot fail.
                    let _ = merged.add(&h);
                }
                Ok(Err(e)) => errors.push(e),
                Err(e) => errors.push(format!("client task: {e}")),
            }
        }
        (merged, errors)
    });
    if let Some(first) = errors.first() {
        return Err(BenchError::Load {
            target: target.name.clone(),
            concurrency,
            failed: errors.len(),
            first: first.clone(),
        });
    }
    if merged.is_empty() {
        return Err(BenchError::Load {
            target: target.name.clone(),
            concurrency,
            failed: 0,
            first: "no request completed inside the window".into(),
        });
    }
    Ok(Measured {
        rps: merged.len() as f64 / window.as_secs_f64(),
        p50_us: merged.value_at_quantile(0.50) as f64,
        p99_us: merged.value_at_quantile(0.99) as f64,
    })
}

/// A runtime of `workers` threads named `name` (the load generator, an in-process server).
pub fn runtime(name: &str, workers: usize) -> Result<tokio::runtime::Runtime, BenchError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(BenchError::io("starting a runtime"))
}
