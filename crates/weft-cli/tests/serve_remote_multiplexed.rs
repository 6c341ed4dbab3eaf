//! Unary calls to remote providers over multiplexed WebSockets (`/weft/v1/calls`,
//! docs/remote-providers.md §3), against a real node and a provider written by hand from
//! the protocol page (as one in another language would be): answers are matched by `ref`
//! whatever their order, a few connections carry every call, a call past its deadline is
//! cancelled on the provider, a broken answer fails only its call, a broken connection fails
//! only its calls and the next call dials again, and a provider without the route gets one
//! `POST` per call (its body bounded as the messages are).
// tungstenite's handshake callback returns its error response by value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::result_large_err)]

mod harness;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use harness::{Node, Resp, assert_error, poll, tempdir};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use weft_contract::{Descriptor, Limits};
use weft_provider::wire::{CALL_PATH, CALLS_PATH};

/// `{"text", "delay_ms"?}` in, `{"text"}` out.
fn descriptor_json() -> Value {
    json!({"id": "remote.script", "version": "1.0.0", "title": "Scripted (remote)",
           "description": "Answers as its payload's text says, after delay_ms.",
           "input_schema": {"type": "object", "required": ["text"], "additionalProperties": false,
                            "properties": {"text": {"type": "string"}, "delay_ms": {"type": "integer"}}},
           "output_schema": {"type": "object", "required": ["text"], "additionalProperties": false,
                             "properties": {"text": {"type": "string"}}}})
}

fn revision() -> String {
    Descriptor::from_value(&descriptor_json(), &Limits::default())
        .unwrap()
        .revision()
        .to_string()
}

/// What the hand-written provider saw.
#[derive(Default)]
struct Seen {
    connections: AtomicUsize,
    closed: AtomicUsize,
    calls: AtomicUsize,
    cancels: Mutex<Vec<u64>>,
    posts: AtomicUsize,
    refused_upgrades: AtomicUsize,
}

/// The answer the script gives to call `reference` with `text`; `None` closes the socket.
fn scripted(reference: u64, text: &str) -> Option<String> {
    Some(match text {
        "malformed" => json!({"ref": reference}).to_string(),
        "fail" => json!({"ref": reference, "error": {"message": "nope"}}).to_string(),
        "invalid" => json!({"ref": reference, "result": {"text": 5}}).to_string(),
        "big" => json!({"ref": reference, "result": {"text": "b".repeat(2_000)}}).to_string(),
        "huge" => json!({"ref": reference, "result": {"text": "h".repeat(100_000)}}).to_string(),
        "garbage" => "this is not JSON".to_owned(),
        "close" => return None,
        other => json!({"ref": reference, "result": {"text": other}}).to_string(),
    })
}

/// One multiplexed connection: every call runs on a task of its own (sleeping its
/// `delay_ms`), answers leave through one writer; cancels are recorded, not obeyed, so a
/// cancelled call still answers late.
async fn connection(
    socket: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    seen: Arc<Seen>,
) {
    let (mut write, mut read) = socket.split();
    let (answers, mut outgoing) = mpsc::unbounded_channel::<Option<String>>();
    tokio::spawn(async move {
        while let Some(answer) = outgoing.recv().await {
            match answer {
                Some(text) => {
                    if write.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                None => {
                    let _ = write.close().await;
                    return;
                }
            }
        }
    });
    while let Some(Ok(message)) = read.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let line: Value = serde_json::from_str(text.as_str()).unwrap();
        let reference = line["ref"].as_u64().unwrap();
        if line["type"] == "cancel" {
            seen.cancels.lock().unwrap().push(reference);
            continue;
        }
        seen.calls.fetch_add(1, Ordering::SeqCst);
        let text = line["payload"]["text"].as_str().unwrap().to_owned();
        let delay = line["payload"]["delay_ms"].as_u64().unwrap_or(0);
        let answers = answers.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            let _ = answers.send(scripted(reference, &text));
        });
    }
}

/// A one-worker runtime for a provider, its loopback listener and that listener's URL.
fn provider_listener() -> (tokio::runtime::Runtime, tokio::net::TcpListener, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    (runtime, listener, url)
}

/// Serves the script on `/weft/v1/calls` only (anything else is refused with 404); a `POST`
/// would fail the call, so a test that passes used the multiplexed route.
fn serve_script() -> (tokio::runtime::Runtime, String, Arc<Seen>) {
    let (runtime, listener, url) = provider_listener();
    let seen = Arc::new(Seen::default());
    let shared = Arc::clone(&seen);
    runtime.spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let seen = Arc::clone(&shared);
            tokio::spawn(async move {
                let only_calls = |request: &Request, response: Response| {
                    if request.uri().path() == CALLS_PATH {
                        Ok(response)
                    } else {
                        let mut refused = ErrorResponse::new(None);
                        *refused.status_mut() = 404.try_into().unwrap();
                        Err(refused)
                    }
                };
                if let Ok(socket) = tokio_tungstenite::accept_hdr_async(tcp, only_calls).await {
                    seen.connections.fetch_add(1, Ordering::SeqCst);
                    connection(socket, Arc::clone(&seen)).await;
                    seen.closed.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    (runtime, url, seen)
}

fn register(node: &Node, token: &str, url: &str) {
    let r = node.send(
        "PUT",
        "/v1/providers/scripted",
        token,
        &json!({"node_id": "edge-1", "transport": {"kind": "http", "url": url, "lease_seconds": 300},
                "descriptors": [descriptor_json()]}),
    );
    assert_eq!(r.status, 201, "{:?}", r.body);
}

/// A node started with `args`, and the script serving and registered with it. Keep the
/// whole value alive: the provider's runtime and the data directory go with it.
struct Scripted {
    node: Node,
    admin: String,
    seen: Arc<Seen>,
    _provider: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
}

fn scripted_node(args: &[&str]) -> Scripted {
    let dir = tempdir();
    let node = Node::start(dir.path(), args);
    let admin = node.admin();
    let (provider, url, seen) = serve_script();
    register(&node, &admin, &url);
    Scripted {
        node,
        admin,
        seen,
        _provider: provider,
        _dir: dir,
    }
}

fn call(node: &Node, token: &str, payload: Value, timeout: Option<f64>) -> Resp {
    node.unary(token, "remote.script", &revision(), payload, timeout)
}

/// Runs the calls at once, one thread each, and returns their responses in order.
fn concurrently(node: &Node, token: &str, payloads: Vec<Value>) -> Vec<Resp> {
    std::thread::scope(|scope| {
        let calls: Vec<_> = payloads
            .into_iter()
            .map(|payload| scope.spawn(move || call(node, token, payload, None)))
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    })
}

#[test]
fn answers_find_their_calls_over_a_few_connections() {
    let scripted = scripted_node(&[]);
    let (node, admin, seen) = (&scripted.node, scripted.admin.as_str(), &scripted.seen);

    // The first call waits longest, so answers come back in the reverse order.
    let payloads = (0..16)
        .map(|i| json!({"text": format!("call {i}"), "delay_ms": 400 - i * 25}))
        .collect();
    for (i, r) in concurrently(node, admin, payloads).iter().enumerate() {
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(r.body["result"], json!({"text": format!("call {i}")}));
    }
    for i in 0..20 {
        let r = call(node, admin, json!({"text": format!("again {i}")}), None);
        assert_eq!(r.body["result"]["text"], format!("again {i}"));
    }
    assert_eq!(seen.calls.load(Ordering::SeqCst), 36);
    // The default is two connections per provider address, opened as calls need them.
    let connections = seen.connections.load(Ordering::SeqCst);
    assert!((1..=2).contains(&connections), "{connections} connections");
    assert_eq!(seen.closed.load(Ordering::SeqCst), 0);

    // Unregistering closes them.
    let r = node.send(
        "POST",
        "/v1/providers/scripted/unregister",
        admin,
        &json!({}),
    );
    assert_eq!(r.status, 200, "{:?}", r.body);
    poll(Duration::from_secs(5), || {
        (seen.closed.load(Ordering::SeqCst) == connections).then_some(())
    })
    .expect("the node kept its connections to an unregistered provider");
}

#[test]
fn remote_connections_bounds_the_connections_and_is_checked() {
    let scripted = scripted_node(&["--remote-connections", "1"]);
    let (node, admin, seen) = (&scripted.node, scripted.admin.as_str(), &scripted.seen);
    let payloads = (0..8)
        .map(|i| json!({"text": format!("c{i}"), "delay_ms": 100}))
        .collect();
    assert!(
        concurrently(node, admin, payloads)
            .iter()
            .all(|r| r.status == 200)
    );
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1);

    for bad in ["0", "65"] {
        let dir = tempdir();
        let (status, stderr) =
            harness::serve_expecting_exit(dir.path(), &["--remote-connections", bad]);
        assert!(!status.success(), "{bad}");
        assert!(stderr.contains("remote_connections"), "{bad}: {stderr}");
    }
    let dir = tempdir();
    let most = Node::start(dir.path(), &["--remote-connections", "64"]);
    assert_eq!(most.call("GET", "/healthz", None, None, &[]).status, 200);
}

#[test]
fn a_call_past_its_deadline_is_cancelled_and_its_late_answer_ignored() {
    let scripted = scripted_node(&["--remote-connections", "1"]);
    let (node, admin, seen) = (&scripted.node, scripted.admin.as_str(), &scripted.seen);

    let late = call(
        node,
        admin,
        json!({"text": "slow", "delay_ms": 800}),
        Some(0.2),
    );
    assert_error(&late, 504, "timeout");
    let cancels = poll(Duration::from_secs(5), || {
        let cancels = seen.cancels.lock().unwrap().clone();
        (!cancels.is_empty()).then_some(cancels)
    })
    .expect("the provider got no cancel");
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    // The script answers the cancelled call anyway; the connection carries on.
    std::thread::sleep(Duration::from_millis(900));
    let r = call(node, admin, json!({"text": "after"}), None);
    assert_eq!(r.body["result"], json!({"text": "after"}), "{:?}", r.body);
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn a_broken_answer_fails_only_its_own_call() {
    let scripted = scripted_node(&["--remote-connections", "1", "--max-payload-bytes", "1024"]);
    let (node, admin, seen) = (&scripted.node, scripted.admin.as_str(), &scripted.seen);
    let texts = ["malformed", "fail", "invalid", "big"];
    let mut payloads: Vec<Value> = texts.iter().map(|t| json!({"text": t})).collect();
    payloads.push(json!({"text": "fine", "delay_ms": 200}));
    let answers = concurrently(node, admin, payloads);
    assert_error(&answers[0], 502, "provider_error");
    assert_error(&answers[1], 502, "provider_error");
    assert!(
        answers[1].body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope")
    );
    assert_error(&answers[2], 502, "invalid_result");
    // Within the framing room but over max_payload_bytes: that call's result is refused.
    assert_error(&answers[3], 502, "invalid_result");
    assert_eq!(
        answers[4].body["result"],
        json!({"text": "fine"}),
        "{:?}",
        answers[4].body
    );
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1);
}

#[test]
fn a_broken_connection_fails_its_calls_and_the_next_call_dials_again() {
    let scripted = scripted_node(&["--remote-connections", "1", "--max-payload-bytes", "1024"]);
    let (node, admin, seen) = (&scripted.node, scripted.admin.as_str(), &scripted.seen);
    // (what breaks the connection, what the calls on it get, connections opened so far)
    for (i, (breaker, status, code)) in [
        ("garbage", 502, "transport_error"),
        ("close", 503, "unreachable"),
        ("huge", 502, "transport_error"),
    ]
    .into_iter()
    .enumerate()
    {
        let answers = concurrently(
            node,
            admin,
            vec![
                json!({"text": "in flight", "delay_ms": 500}),
                json!({"text": breaker, "delay_ms": 100}),
            ],
        );
        assert_error(&answers[0], status, code);
        assert_error(&answers[1], status, code);
        let r = call(node, admin, json!({"text": "next"}), None);
        assert_eq!(
            r.body["result"],
            json!({"text": "next"}),
            "{breaker}: {:?}",
            r.body
        );
        assert_eq!(seen.connections.load(Ordering::SeqCst), i + 2, "{breaker}");
        // The broken connection is closed, not left open beside the new one.
        poll(Duration::from_secs(5), || {
            (seen.closed.load(Ordering::SeqCst) == i + 1).then_some(())
        })
        .unwrap_or_else(|| panic!("{breaker}: the broken connection stayed open"));
    }
}

#[test]
fn a_provider_without_the_route_gets_one_post_per_call() {
    use axum::routing::post;
    let (runtime, listener, url) = provider_listener();
    let seen = Arc::new(Seen::default());
    let (posts, refused) = (Arc::clone(&seen), Arc::clone(&seen));
    let app = axum::Router::new()
        .route(
            CALL_PATH,
            post(move |axum::Json(line): axum::Json<Value>| async move {
                posts.posts.fetch_add(1, Ordering::SeqCst);
                let text = match line["payload"]["text"].as_str() {
                    Some("huge") => "h".repeat(100_000),
                    other => other.unwrap_or_default().to_owned(),
                };
                axum::Json(json!({"result": {"text": text}}))
            }),
        )
        .fallback(move || async move {
            refused.refused_upgrades.fetch_add(1, Ordering::SeqCst);
            axum::http::StatusCode::NOT_FOUND
        });
    runtime.spawn(async move { axum::serve(listener, app).await });

    let dir = tempdir();
    let node = Node::start(dir.path(), &["--max-payload-bytes", "1024"]);
    let admin = node.admin();
    register(&node, &admin, &url);
    for i in 0..5 {
        let r = call(&node, &admin, json!({"text": format!("post {i}")}), None);
        assert_eq!(
            r.body["result"],
            json!({"text": format!("post {i}")}),
            "{:?}",
            r.body
        );
    }
    // A body past max_payload_bytes and the framing room is not read to its end.
    assert_error(
        &call(&node, &admin, json!({"text": "huge"}), None),
        502,
        "transport_error",
    );
    assert_eq!(seen.posts.load(Ordering::SeqCst), 6);
    // Asked once per registration, not once per call.
    assert_eq!(seen.refused_upgrades.load(Ordering::SeqCst), 1);
}
