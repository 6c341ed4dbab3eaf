//! Call throughput of a real node against the limit of a bare axum JSON echo.
//!
//! Two servers do the same job, an `echo` whose input `{"text":"hello weft"}` comes back
//! unchanged:
//! - `limit`: a bare axum 0.8 `POST /echo` that parses the body into a `serde_json::Value`
//!   and serialises it back. It runs inside this bench process, on its own tokio runtime
//!   with 2 worker threads (the node's runtime also gets one worker per core, i.e. 2 here),
//!   with TCP_NODELAY on accepted sockets. In-process keeps the bench self-contained; the
//!   load generator's runtime is a separate pool of threads, so the two only share the
//!   2 cores, exactly as the node and the load generator do.
//! - `fabric`: the real node (`weft serve --builtins`, a child process) serving
//!   `POST /v1/calls` for the built-in `echo@1.0.0`, whose input and output are validated
//!   against their schemas, with bearer auth and `--max-concurrent-calls 1024`.
//!
//! Load generator: a closed loop of N tokio tasks on a 2-worker runtime, each with one
//! keep-alive HTTP/1.1 connection (hand-written client, TCP_NODELAY) and one request in
//! flight. After a 1 s warm-up (not recorded) it measures for `WEFT_BENCH_SECONDS`
//! (default 5); only requests that start and finish inside the window count. Every response
//! must be 200 and contain "hello weft"; any error aborts the bench.
//!
//! Run: `cargo bench -p weft-cli --bench call_throughput`. `WEFT_BENCH_LEVELS` sets the
//! concurrency levels (default "1,64"); `--json` (after `--`) or `WEFT_BENCH_JSON=1` also
//! prints one JSON object per level.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::post;
use axum::serve::ListenerExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The same allocator as the `weft` binary, so the in-process limit runs on the same stack.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WARM_UP: Duration = Duration::from_secs(1);
const PAYLOAD: &str = r#"{"text":"hello weft"}"#;

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// One server under test: where to connect and the full request bytes to send each time.
struct Target {
    addr: SocketAddr,
    request: Arc<Vec<u8>>,
}

fn request_bytes(host: SocketAddr, path: &str, auth: Option<&str>, body: &str) -> Vec<u8> {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    if let Some(token) = auth {
        head.push_str(&format!("authorization: Bearer {token}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    head.into_bytes()
}

/// A minimal HTTP/1.1 keep-alive client: one request in flight, Content-Length bodies only.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            buf: Vec::with_capacity(4096),
        })
    }

    /// Sends `request` and reads the whole response; returns (status, body).
    async fn round_trip(&mut self, request: &[u8]) -> Result<(u16, Vec<u8>), String> {
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
        let body = self.buf[head_end..head_end + length].to_vec();
        self.buf.drain(..head_end + length);
        Ok((status, body))
    }

    async fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 4096];
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

/// What one measurement produced.
struct Measured {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[index.min(sorted.len() - 1)])
}

/// One connection's closed loop; returns the latencies (µs) of requests inside the window.
async fn client(
    target: SocketAddr,
    request: Arc<Vec<u8>>,
    window_start: Instant,
    window_end: Instant,
) -> Result<Vec<u32>, String> {
    let mut conn = Conn::connect(target)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut samples = Vec::with_capacity(16 * 1024);
    loop {
        let started = Instant::now();
        if started >= window_end {
            return Ok(samples);
        }
        let (status, body) = conn.round_trip(&request).await?;
        let finished = Instant::now();
        if status != 200 || !body.windows(10).any(|w| w == b"hello weft") {
            return Err(format!(
                "status {status}: {}",
                String::from_utf8_lossy(&body)
            ));
        }
        if started >= window_start && finished <= window_end {
            samples.push(u32::try_from((finished - started).as_micros()).unwrap_or(u32::MAX));
        }
    }
}

fn measure(
    runtime: &tokio::runtime::Runtime,
    name: &str,
    target: &Target,
    concurrency: usize,
    seconds: u64,
) -> Measured {
    let window = Duration::from_secs(seconds);
    let (samples, errors) = runtime.block_on(async {
        let begin = Instant::now();
        let window_start = begin + WARM_UP;
        let window_end = window_start + window;
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| {
                tokio::spawn(client(
                    target.addr,
                    Arc::clone(&target.request),
                    window_start,
                    window_end,
                ))
            })
            .collect();
        let mut samples = Vec::new();
        let mut errors = Vec::new();
        for task in tasks {
            match task.await.unwrap() {
                Ok(s) => samples.extend(s),
                Err(e) => errors.push(e),
            }
        }
        (samples, errors)
    });
    assert!(
        errors.is_empty(),
        "{name} at c={concurrency}: {} connection(s) failed; first: {}",
        errors.len(),
        errors[0]
    );
    let mut samples = samples;
    assert!(!samples.is_empty(), "{name} at c={concurrency}: no samples");
    samples.sort_unstable();
    Measured {
        rps: samples.len() as f64 / window.as_secs_f64(),
        p50_us: percentile(&samples, 0.50),
        p99_us: percentile(&samples, 0.99),
    }
}

/// Starts the bare axum echo on its own 2-worker runtime; returns the runtime and address.
fn start_limit() -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("limit-server")
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route(
        "/echo",
        post(|axum::Json(v): axum::Json<Value>| async move { axum::Json(v) }),
    );
    runtime.spawn(async move {
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app).await.unwrap();
    });
    (runtime, addr)
}

/// An echo served by the SDK's HTTP server, as a remote provider process would.
struct RemoteEcho(weft_contract::Descriptor);

impl weft_provider::Provider for RemoteEcho {
    fn descriptors(&self) -> Vec<weft_contract::Descriptor> {
        vec![self.0.clone()]
    }
    fn call<'a>(
        &'a self,
        _: &'a weft_provider::CallContext,
        payload: Value,
    ) -> futures_util::future::BoxFuture<'a, Result<Value, weft_provider::ProviderError>> {
        Box::pin(async move { Ok(payload) })
    }
}

fn remote_descriptor() -> Value {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                      "required": ["text"], "additionalProperties": false});
    json!({"id": "remote.echo", "version": "1.0.0", "title": "Echo (remote)",
           "description": "Echo served by a remote provider.", "input_schema": text, "output_schema": text})
}

/// Starts the SDK-served echo on its own 1-worker runtime.
fn start_remote() -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("remote-provider")
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let descriptor = weft_contract::Descriptor::from_value(
        &remote_descriptor(),
        &weft_contract::Limits::default(),
    )
    .unwrap();
    let provider = Arc::new(RemoteEcho(descriptor));
    runtime.spawn(async move {
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, weft_provider::http::router(provider))
            .await
            .unwrap();
    });
    (runtime, addr)
}

fn main() {
    let levels: Vec<usize> = std::env::var("WEFT_BENCH_LEVELS")
        .unwrap_or_else(|_| "1,64".to_owned())
        .split(',')
        .map(|s| {
            s.trim()
                .parse()
                .expect("WEFT_BENCH_LEVELS: comma-separated numbers")
        })
        .collect();
    let seconds: u64 = std::env::var("WEFT_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let as_json = std::env::args().any(|a| a == "--json")
        || std::env::var("WEFT_BENCH_JSON").is_ok_and(|v| v == "1");
    let max_level = levels.iter().copied().max().unwrap_or(1);

    // The node under test.
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["serve", "--builtins", "--listen", "127.0.0.1:0"])
        .arg("--max-concurrent-calls")
        .arg(max_level.max(1024).to_string())
        .arg("--data-dir")
        .arg(dir.path())
        .env("WEFT_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let pid = child.id();
    let node = Node(child);
    let mut lines = BufReader::new(stdout).lines();
    let url = lines
        .next()
        .unwrap()
        .unwrap()
        .trim_start_matches("weft: listening on ")
        .to_owned();
    let token_line = lines.next().unwrap().unwrap();
    let token = token_line.rsplit(' ').next().unwrap().to_owned();
    let node_addr: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    let rss_idle = rss_kib(pid);

    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .get(&format!("{url}/v1/capabilities/echo/versions/1.0.0"))
        .header("authorization", &format!("Bearer {token}"))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "echo@1.0.0 not served");
    let descriptor: Value = response.body_mut().read_json().unwrap();
    let revision = descriptor["revision"].clone();
    assert!(!revision.is_null(), "no revision in {descriptor}");
    let call_body = json!({
        "capability_id": "echo",
        "version": "1.0.0",
        "descriptor_revision": revision,
        "payload": {"text": "hello weft"},
    })
    .to_string();
    let fabric = Target {
        addr: node_addr,
        request: Arc::new(request_bytes(
            node_addr,
            "/v1/calls",
            Some(&token),
            &call_body,
        )),
    };

    let (limit_runtime, limit_addr) = start_limit();
    let limit = Target {
        addr: limit_addr,
        request: Arc::new(request_bytes(limit_addr, "/echo", None, PAYLOAD)),
    };

    // A remote provider: called directly, and through the node (one more hop).
    let (remote_runtime, remote_addr) = start_remote();
    let remote_revision = weft_contract::Descriptor::from_value(
        &remote_descriptor(),
        &weft_contract::Limits::default(),
    )
    .unwrap()
    .revision()
    .to_string();
    let registered = agent
        .put(&format!("{url}/v1/providers/remote-echo"))
        .header("authorization", &format!("Bearer {token}"))
        .send_json(json!({"node_id": "remote-host", "descriptors": [remote_descriptor()],
                          "transport": {"kind": "http", "url": format!("http://{remote_addr}"), "lease_seconds": 300}}))
        .unwrap();
    assert_eq!(
        registered.status().as_u16(),
        201,
        "remote provider not registered"
    );
    let direct_body =
        json!({"call_id": "bench", "capability_id": "remote.echo", "version": "1.0.0",
        "revision": remote_revision, "deadline_ms": 30000, "payload": {"text": "hello weft"}})
        .to_string();
    let direct = Target {
        addr: remote_addr,
        request: Arc::new(request_bytes(
            remote_addr,
            "/weft/v1/call",
            None,
            &direct_body,
        )),
    };
    let remote_call = json!({"capability_id": "remote.echo", "version": "1.0.0",
        "descriptor_revision": remote_revision, "payload": {"text": "hello weft"}})
    .to_string();
    let fabric_remote = Target {
        addr: node_addr,
        request: Arc::new(request_bytes(
            node_addr,
            "/v1/calls",
            Some(&token),
            &remote_call,
        )),
    };

    let load = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("load-generator")
        .enable_all()
        .build()
        .unwrap();

    let mut rows = Vec::new();
    let mut remote_rows = Vec::new();
    for &c in &levels {
        let l = measure(&load, "limit", &limit, c, seconds);
        let f = measure(&load, "fabric", &fabric, c, seconds);
        rows.push((c, l, f));
        let d = measure(&load, "direct-remote", &direct, c, seconds);
        let r = measure(&load, "fabric-remote", &fabric_remote, c, seconds);
        remote_rows.push((c, d, r));
    }
    let rss_after = rss_kib(pid);

    println!(
        "weft call throughput: echo@1.0.0 via POST /v1/calls vs a bare axum JSON echo; \
         closed loop, one keep-alive connection per client, 1 s warm-up + {seconds} s measured per cell"
    );
    println!(
        "| concurrency | limit rps | fabric rps | ratio | limit p50 µs | fabric p50 µs | fabric p99 µs | added p50 µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (c, l, f) in &rows {
        println!(
            "| {c} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.0} | {:.0} |",
            l.rps,
            f.rps,
            f.rps / l.rps,
            l.p50_us,
            f.p50_us,
            f.p99_us,
            f.p50_us - l.p50_us
        );
    }
    println!();
    println!("remote provider (SDK HTTP server, 1 worker): called directly vs through the node");
    println!(
        "| concurrency | direct rps | fabric-remote rps | remote_ratio | direct p50 µs | fabric-remote p50 µs | fabric-remote p99 µs | added p50 µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (c, d, r) in &remote_rows {
        println!(
            "| {c} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.0} | {:.0} |",
            d.rps,
            r.rps,
            r.rps / d.rps,
            d.p50_us,
            r.p50_us,
            r.p99_us,
            r.p50_us - d.p50_us
        );
    }
    if as_json {
        for (c, d, r) in &remote_rows {
            println!(
                "{}",
                json!({"concurrency": c, "direct_remote_rps": d.rps.round(), "fabric_remote_rps": r.rps.round(),
                       "remote_ratio": (r.rps / d.rps * 1000.0).round() / 1000.0,
                       "remote_added_p50_us": r.p50_us - d.p50_us})
            );
        }
        for (c, l, f) in &rows {
            println!(
                "{}",
                json!({
                    "concurrency": c,
                    "limit_rps": l.rps.round(),
                    "fabric_rps": f.rps.round(),
                    "ratio": (f.rps / l.rps * 1000.0).round() / 1000.0,
                    "fabric_p50_us": f.p50_us,
                    "fabric_p99_us": f.p99_us,
                    "added_p50_us": f.p50_us - l.p50_us,
                })
            );
        }
    }
    println!(
        "node RSS: {:.1} MiB idle, {:.1} MiB after the run",
        rss_idle as f64 / 1024.0,
        rss_after as f64 / 1024.0
    );
    load.shutdown_timeout(Duration::from_secs(1));
    limit_runtime.shutdown_timeout(Duration::from_secs(1));
    remote_runtime.shutdown_timeout(Duration::from_secs(1));
    drop(node);
}
