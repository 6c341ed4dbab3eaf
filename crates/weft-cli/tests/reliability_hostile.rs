//! Hostile clients against one real node (built-ins on), while a well-behaved client checks
//! after every step that `GET /healthz` and a real call to the built-in `echo` still
//! succeed, and the node's memory stays under [`RSS_BOUND_KIB`] (its `VmRSS`, sampled every
//! 50 ms, and its peak `VmHWM` from `/proc/<pid>/status`).
//!
//! Bounds are failure guards, never timings: nothing here asserts how fast anything is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use harness::streams::{connect, envelope, send};
use harness::{Node, assert_error, poll, proc_status_kib, tempdir};
use serde_json::{Value, json};
use tungstenite::Message;

/// The node's resident memory must stay below 256 MiB throughout (an idle node with the
/// built-ins uses well under 32 MiB; the margin absorbs allocator slack and debug builds).
const RSS_BOUND_KIB: u64 = 256 * 1024;
/// `--max-body-bytes` of the hostile node.
const MAX_BODY: usize = 1024 * 1024;
/// `--max-payload-bytes` of the hostile node.
const MAX_PAYLOAD: usize = 2 * 1024 * 1024;
/// `--header-read-timeout` (seconds) of the nodes here.
const HEADER_TIMEOUT: &str = "2";

/// A node under attack, a sampler of its memory, and a well-behaved client.
struct Target {
    node: Node,
    admin: String,
    echo: String,
    peak_kib: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    sampler: Option<std::thread::JoinHandle<()>>,
}

impl Target {
    fn start(extra: &[&str]) -> (tempfile::TempDir, Target) {
        let dir = tempdir();
        let body = MAX_BODY.to_string();
        let payload = MAX_PAYLOAD.to_string();
        let mut args = vec![
            "--builtins",
            "--max-body-bytes",
            &body,
            "--max-payload-bytes",
            &payload,
            "--header-read-timeout",
            HEADER_TIMEOUT,
        ];
        args.extend_from_slice(extra);
        let node = Node::start(dir.path(), &args);
        let admin = node.admin();
        let echo = node.pin(&admin, "echo", "1.0.0");
        let (peak_kib, stop) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let pid = node.pid();
        let sampler = {
            let (peak_kib, stop) = (Arc::clone(&peak_kib), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    if let Some(rss) = proc_status_kib(pid, "VmRSS:") {
                        peak_kib.fetch_max(rss, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        let target = Target {
            node,
            admin,
            echo,
            peak_kib,
            stop,
            sampler: Some(sampler),
        };
        (dir, target)
    }

    /// The well-behaved client: health, a real echo call, memory under the bound.
    fn probe(&self, after: &str) {
        let health = self.node.call("GET", "/healthz", None, None, &[]);
        assert_eq!(health.status, 200, "after {after}: {}", health.text);
        let text = format!("still serving after {after}");
        let r = self
            .node
            .unary(&self.admin, "echo", &self.echo, json!({"text": text}), None);
        assert_eq!(r.status, 200, "after {after}: {}", r.text);
        assert_eq!(r.body["result"]["text"], text.as_str());
        self.assert_memory(after);
    }

    fn assert_memory(&self, after: &str) {
        let rss = self.node.rss_kib();
        let sampled = self.peak_kib.load(Ordering::SeqCst).max(rss);
        let hwm = proc_status_kib(self.node.pid(), "VmHWM:").unwrap_or(0);
        assert!(
            sampled < RSS_BOUND_KIB && hwm < RSS_BOUND_KIB,
            "after {after}: node RSS {rss} KiB, sampled peak {sampled} KiB, VmHWM {hwm} KiB \
             (bound {RSS_BOUND_KIB} KiB)"
        );
    }

    fn host(&self) -> String {
        self.node.url.trim_start_matches("http://").to_owned()
    }

    /// One raw HTTP/1.1 request whose body is written by another thread (so a node that
    /// answers before reading it all cannot deadlock the test); returns the response
    /// status and body, or `None` when the connection ended without a response.
    fn raw(&self, head: &str, body: Vec<u8>) -> Option<(u16, Value)> {
        let mut stream = TcpStream::connect(self.host()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.write_all(head.as_bytes()).unwrap();
        let mut writer = stream.try_clone().unwrap();
        let feeder = std::thread::spawn(move || {
            // The node may close the connection before taking everything: that is fine.
            let _ = writer.write_all(&body);
        });
        let mut response = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => response.extend_from_slice(&buf[..n]),
            }
            if complete(&response) {
                break;
            }
        }
        let _ = stream.shutdown(Shutdown::Both);
        feeder.join().unwrap();
        parse_response(&response)
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(sampler) = self.sampler.take() {
            let _ = sampler.join();
        }
    }
}

/// Whether `bytes` hold a whole response (head plus `Content-Length` bytes).
fn complete(bytes: &[u8]) -> bool {
    let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    bytes.len() >= end + 4 + length
}

fn parse_response(bytes: &[u8]) -> Option<(u16, Value)> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]);
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let body = serde_json::from_slice(&bytes[end + 4..]).unwrap_or(Value::Null);
    Some((status, body))
}

/// The error code of an error envelope.
fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

fn call_body(target: &Target, payload_json: &str) -> Vec<u8> {
    format!(
        r#"{{"capability_id":"echo","version":"1.0.0","descriptor_revision":"{}","payload":{payload_json}}}"#,
        target.echo
    )
    .into_bytes()
}

fn post(target: &Target, path: &str, body: &[u8]) -> harness::Resp {
    target
        .node
        .call("POST", path, Some(&target.admin), Some(body), &[])
}

#[test]
fn oversized_bodies_are_refused_with_413_and_the_connection_is_handled() {
    let (_dir, t) = Target::start(&[]);
    t.probe("start");
    let big = vec![b' '; MAX_BODY * 4];
    // With a Content-Length over the limit, before the body is read.
    let head = format!(
        "PUT /v1/providers/big HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        t.admin,
        big.len()
    );
    let (status, body) = t
        .raw(&head, big.clone())
        .expect("a response to the oversized PUT");
    assert_eq!((status, code(&body)), (413, "payload_too_large"), "{body}");
    t.probe("an oversized Content-Length body");
    // Chunked, so the limit is only found while reading.
    let mut chunked = Vec::new();
    for piece in big.chunks(64 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = format!(
        "POST /v1/calls HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        t.admin
    );
    let (status, body) = t
        .raw(&head, chunked)
        .expect("a response to the chunked POST");
    assert_eq!((status, code(&body)), (413, "payload_too_large"), "{body}");
    t.probe("an oversized chunked body");
    // Just over the limit through an ordinary client, repeatedly.
    for _ in 0..20 {
        let r = post(&t, "/v1/calls", &vec![b' '; MAX_BODY + 1]);
        assert_error(&r, 413, "payload_too_large");
    }
    t.probe("twenty bodies one byte over the limit");
}

#[test]
fn hostile_json_gets_typed_errors_and_never_crashes_the_node() {
    let (_dir, t) = Target::start(&[]);
    t.probe("start");
    // Nested 10,000 deep: arrays, objects, inside a call and inside a descriptor. The
    // envelope keeps the payload as raw JSON, so a deep payload is found when the payload is
    // parsed for validation: 422 `invalid_payload` (serde_json's recursion limit, 128).
    let arrays = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    for (what, nested) in [("arrays", &arrays), ("objects", &objects)] {
        let r = post(&t, "/v1/calls", &call_body(&t, nested));
        assert_error(&r, 422, "invalid_payload");
        assert!(r.text.contains("recursion limit"), "{}", r.text);
        // As the whole body: refused as the wrong shape before any depth matters.
        let r = post(&t, "/v1/calls", nested.as_bytes());
        assert!(
            r.status == 400
                && ["invalid_json", "invalid_request", "unknown_field"].contains(&code(&r.body)),
            "{}",
            r.text
        );
        let descriptor = format!(
            r#"{{"node_id":"n","descriptors":[{{"id":"deep","version":"1.0.0","title":"D","description":"D","input_schema":{nested}}}]}}"#
        );
        let r = t.node.call(
            "PUT",
            "/v1/providers/deep",
            Some(&t.admin),
            Some(descriptor.as_bytes()),
            &[],
        );
        assert_error(&r, 400, "invalid_json");
        t.probe(&format!("JSON {what} nested 10,000 deep"));
    }
    // The same over the WebSocket: a typed error message (or failed terminal), no result.
    let mut ws = connect(&t.node, &t.admin);
    ws.send(Message::Text(
        String::from_utf8(call_body(&t, &arrays)).unwrap().into(),
    ))
    .unwrap();
    let frames = harness::streams::read_all(&mut ws);
    let last = frames.last().expect("an answer to a deep envelope");
    let ws_code = last["error"]["code"].as_str().unwrap_or("");
    assert!(
        ["invalid_payload", "invalid_json", "not_found"].contains(&ws_code),
        "{frames:?}"
    );
    drop(ws);
    t.probe("a deeply nested stream envelope");

    // An object with 100,000 keys as a call payload (1.2 MB, inside both limits): the echo
    // schema allows no extra property, so it is a typed 422, with a bounded answer.
    let keys: Vec<String> = (0..100_000).map(|i| format!(r#""k{i:06}":0"#)).collect();
    let wide = format!("{{{}}}", keys.join(","));
    assert!(wide.len() < MAX_PAYLOAD);
    let r = post(
        &t,
        "/v1/calls",
        &call_body(&t, &wide).into_iter().collect::<Vec<u8>>(),
    );
    let over = r.status == 413;
    if !over {
        assert_error(&r, 422, "invalid_payload");
        assert!(
            r.text.len() < 4 * MAX_PAYLOAD,
            "a {}-byte error for a {}-byte payload",
            r.text.len(),
            wide.len()
        );
    }
    t.probe("an object with 100,000 keys");
    // The same object as a descriptor's schema: over the descriptor limits, typed.
    let schema_keys: Vec<String> = (0..100_000).map(|i| format!(r#""k{i:06}":{{}}"#)).collect();
    let descriptor = format!(
        r#"{{"node_id":"n","descriptors":[{{"id":"wide","version":"1.0.0","title":"W","description":"W","input_schema":{{"type":"object","properties":{{{}}}}}}}]}}"#,
        schema_keys.join(",")
    );
    assert!(descriptor.len() < MAX_BODY * 2);
    let r = t.node.call(
        "PUT",
        "/v1/providers/wide",
        Some(&t.admin),
        Some(descriptor.as_bytes()),
        &[],
    );
    assert!(
        [413, 422].contains(&r.status) && !code(&r.body).is_empty(),
        "{} {}",
        r.status,
        &r.text[..r.text.len().min(500)]
    );
    t.probe("a schema with 100,000 properties");

    // Invalid UTF-8 inside a JSON string, in a call and in a registration.
    let mut bad = call_body(&t, r#"{"text":"x"}"#);
    let at = bad.windows(3).position(|w| w == b"\"x\"").unwrap() + 1;
    bad[at] = 0xff;
    assert_error(&post(&t, "/v1/calls", &bad), 400, "invalid_json");
    let registration = b"{\"node_id\":\"n\xc3\x28\",\"descriptors\":[]}";
    let r = t.node.call(
        "PUT",
        "/v1/providers/utf8",
        Some(&t.admin),
        Some(registration),
        &[],
    );
    assert_error(&r, 400, "invalid_json");
    t.probe("invalid UTF-8 in JSON bodies");
    let (calls, streams) = t.node.active(&t.admin);
    assert_eq!((calls, streams), (0, 0));
}

#[test]
fn a_websocket_message_over_the_frame_limit_fails_only_that_stream() {
    let (_dir, t) = Target::start(&[]);
    t.probe("start");
    // The node's limit is max_payload_bytes + 64 KiB per message.
    let text = "a".repeat(MAX_PAYLOAD + 128 * 1024);
    for attempt in 0..3 {
        let mut ws = connect(&t.node, &t.admin);
        let env = envelope(&t.node, &t.admin, "echo", json!({"text": text}));
        // The node may close while the message is still being written.
        let sent = ws.send(Message::Text(env.to_string().into()));
        let mut outcome = Vec::new();
        if sent.is_ok() {
            loop {
                match ws.read() {
                    Ok(Message::Text(m)) => outcome.push(format!("text {m}")),
                    Ok(Message::Close(frame)) => {
                        outcome.push(format!("close {frame:?}"));
                        break;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        outcome.push(format!("error {e}"));
                        break;
                    }
                }
            }
        }
        // Never a result: the call fails (close 1009 / typed error) or the socket drops.
        assert!(
            !outcome.iter().any(|o| o.contains("\"completed\"")),
            "{outcome:?}"
        );
        println!("over-limit message {attempt}: sent {sent:?}, then {outcome:?}");
        t.probe("a WebSocket message over the frame limit");
    }
    // Chunks over the limit on an open bidirectional stream.
    let mut ws = connect(&t.node, &t.admin);
    send(&mut ws, envelope(&t.node, &t.admin, "upper", json!({})));
    let _ = ws.send(Message::Text(
        json!({"kind": "chunk", "sequence": 1, "payload": {"text": text}})
            .to_string()
            .into(),
    ));
    let mut completed = false;
    while let Ok(m) = ws.read() {
        if let Message::Text(m) = m {
            completed |= m.contains("\"completed\"");
        } else if let Message::Close(_) = m {
            break;
        }
    }
    assert!(!completed, "an oversized chunk completed the stream");
    drop(ws);
    t.node.assert_idle(&t.admin);
    t.probe("a stream chunk over the frame limit");
}

#[test]
fn callers_that_never_read_keep_the_node_memory_bounded() {
    let (_dir, t) = Target::start(&[]);
    t.probe("start");
    // 24 bidirectional `upper` streams whose callers send 8 chunks of 32 KiB each, never
    // read an answer and never half-close: the streams stay open, their output stuck.
    let chunk = "y".repeat(32 * 1024);
    let sockets: Vec<_> = (0..24)
        .map(|_| {
            let mut ws = connect(&t.node, &t.admin);
            send(&mut ws, envelope(&t.node, &t.admin, "upper", json!({})));
            // Pushed back before all 8 are taken: stop writing (guard 3 s per write).
            ws.get_ref()
                .set_write_timeout(Some(Duration::from_secs(3)))
                .unwrap();
            for sequence in 1..=8 {
                let frame =
                    json!({"kind": "chunk", "sequence": sequence, "payload": {"text": chunk}});
                if ws.send(Message::Text(frame.to_string().into())).is_err() {
                    break;
                }
            }
            ws
        })
        .collect();
    // 8 SSE streams of `count` at its maximum (1000 chunks, 5 ms apart) whose callers never
    // read the response.
    let count = t.node.pin(&t.admin, "count", "1.0.0");
    let sse: Vec<TcpStream> = (0..8)
        .map(|i| {
            let body = json!({"call_id": format!("stall-{i}"), "capability_id": "count",
                              "version": "1.0.0", "descriptor_revision": count,
                              "payload": {"to": 1000, "delay_ms": 5}})
            .to_string();
            let mut stream = TcpStream::connect(t.host()).unwrap();
            write!(
                stream,
                "POST /v1/calls HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
                 accept: text/event-stream\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\n\r\n{body}",
                t.admin,
                body.len()
            )
            .unwrap();
            stream
        })
        .collect();
    let active = poll(Duration::from_secs(30), || {
        (t.node.active(&t.admin).1 >= 24).then_some(())
    });
    assert!(active.is_some(), "streams: {:?}", t.node.active(&t.admin));
    t.probe("stalled streams");

    // A bidirectional caller that writes 64 KiB chunks as fast as it can and never reads:
    // the node must push back (TCP) rather than buffer. Stop once a write blocks for 3 s,
    // or after 512 MiB (more than the bound: the memory assertion then fails).
    let host = t.host();
    let url = format!("ws://{host}/v1/streams");
    let mut request = tungstenite::client::IntoClientRequest::into_client_request(url).unwrap();
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {}", t.admin).parse().unwrap(),
    );
    let stream = TcpStream::connect(&host).unwrap();
    let (mut flood, _) = tungstenite::client(request, stream.try_clone().unwrap()).unwrap();
    send(&mut flood, envelope(&t.node, &t.admin, "upper", json!({})));
    stream
        .set_write_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let chunk = "z".repeat(64 * 1024);
    let mut written = 0usize;
    for sequence in 1.. {
        let frame = json!({"kind": "chunk", "sequence": sequence, "payload": {"text": chunk}});
        if flood.send(Message::Text(frame.to_string().into())).is_err() {
            break;
        }
        written += chunk.len();
        if written > 512 * 1024 * 1024 {
            break;
        }
        if sequence % 64 == 0 {
            t.assert_memory("flooding a bidirectional stream");
        }
    }
    println!(
        "flood: {} MiB written before the node pushed back",
        written / (1024 * 1024)
    );
    t.probe("a caller flooding a stream it never reads");
    drop(flood);
    drop(stream); // the socket's other handle: now the connection is closed
    drop(sockets);
    drop(sse);
    t.node.assert_idle(&t.admin);
    t.probe("the stalled callers went away");
}

/// Writes `bytes` one at a time, at most one per `pause`, for as long as the node keeps the
/// connection; returns how many it took.
fn trickle(mut stream: TcpStream, pause: Duration, deadline: Instant) -> (usize, Vec<u8>) {
    stream
        .set_read_timeout(Some(Duration::from_millis(10)))
        .unwrap();
    let mut sent = 0;
    let mut answer = Vec::new();
    while Instant::now() < deadline {
        if stream.write_all(b"a").is_err() {
            break;
        }
        sent += 1;
        let mut buf = [0u8; 1024];
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
        std::thread::sleep(pause);
    }
    (sent, answer)
}

#[test]
fn slow_loris_connections_are_cut_at_the_header_read_timeout() {
    let (_dir, t) = Target::start(&[]);
    t.probe("start");
    let baseline_fds = t.node.open_fds();
    let guard = Instant::now() + Duration::from_secs(90);
    // 100 connections sending a request head one byte per second.
    let loris: Vec<_> = (0..100)
        .map(|_| {
            let mut stream = TcpStream::connect(t.host()).unwrap();
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-slow: ")
                .unwrap();
            std::thread::spawn(move || trickle(stream, Duration::from_secs(1), guard))
        })
        .collect();
    // The node keeps serving others while they hang on.
    let mut probes = 0;
    while loris.iter().any(|h| !h.is_finished()) && Instant::now() < guard {
        t.probe("slow-loris connections");
        probes += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut answers = Vec::new();
    for handle in loris {
        let (sent, answer) = handle.join().unwrap();
        answers.push((sent, String::from_utf8_lossy(&answer).into_owned()));
    }
    assert!(
        Instant::now() < guard,
        "slow-loris connections were still open after 90 s (header read timeout {HEADER_TIMEOUT} s)"
    );
    // Cut without a response, or with 408; never served.
    for (sent, answer) in &answers {
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
            "after {sent} bytes: {answer:?}"
        );
    }
    println!(
        "slow loris: 100 connections cut after {}..{} trickled bytes; {probes} probes served meanwhile",
        answers.iter().map(|a| a.0).min().unwrap(),
        answers.iter().map(|a| a.0).max().unwrap()
    );
    assert!(probes >= 1);
    // Their sockets are released.
    let released = poll(Duration::from_secs(30), || {
        (t.node.open_fds() <= baseline_fds + 4).then_some(())
    });
    assert!(
        released.is_some(),
        "{} fds open, {baseline_fds} before",
        t.node.open_fds()
    );
    t.probe("the slow-loris connections were cut");
}

/// Whether a read ended because the node closed (or reset) the connection, not because
/// the read guard ran out.
fn closed_by_node(result: &std::io::Result<usize>) -> bool {
    match result {
        Ok(_) => true,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

#[test]
fn the_header_read_timeout_boundary() {
    let (_dir, t) = Target::start(&[]);
    // A head that arrives in pieces well inside the timeout is served.
    let mut stream = TcpStream::connect(t.host()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    for piece in ["GET /heal", "thz HTTP/1.1\r\n", "host: x\r\n", "\r\n"] {
        stream.write_all(piece.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut buf = [0u8; 512];
    let n = stream.read(&mut buf).unwrap();
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The same connection, now idle: closed once the timeout passes (guard 30 s).
    let mut rest = Vec::new();
    let closed = stream.read_to_end(&mut rest);
    assert!(
        closed_by_node(&closed),
        "an idle keep-alive connection stayed open: {closed:?}"
    );
    // A connection that sends nothing at all is closed too.
    let mut silent = TcpStream::connect(t.host()).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut rest = Vec::new();
    let closed = silent.read_to_end(&mut rest);
    assert!(
        closed_by_node(&closed),
        "a silent connection stayed open: {closed:?}"
    );
    let text = String::from_utf8_lossy(&rest);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );
    t.probe("the boundary checks");
    // Out-of-range settings are refused at start.
    let dir = tempdir();
    for bad in ["0", "0.05", "3601", "NaN"] {
        let (status, stderr) =
            harness::serve_expecting_exit(dir.path(), &["--header-read-timeout", bad]);
        assert!(!status.success(), "{bad}");
        assert!(
            stderr.contains("header_read_timeout_seconds"),
            "{bad}: {stderr}"
        );
    }
}
