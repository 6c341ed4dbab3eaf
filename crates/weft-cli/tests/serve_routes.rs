//! `weft serve`: every route's success shape, the body limit and `Idempotency-Key`, over
//! real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeSet;

use harness::{Node, Resp, assert_error, descriptor, tempdir};
use serde_json::{Value, json};

fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set(names: &[&'static str]) -> BTreeSet<&'static str> {
    names.iter().copied().collect()
}

#[test]
fn health_and_readiness_need_no_token() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let r = node.call("GET", "/healthz", None, None, &[]);
    assert_eq!((r.status, r.body.clone()), (200, json!({"status": "ok"})));
    let r = node.call("GET", "/readyz", None, None, &[]);
    assert_eq!(
        (r.status, r.body.clone()),
        (200, json!({"status": "ready"}))
    );
}

#[test]
fn every_route_answers_with_its_documented_shape() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let echo = descriptor("echo", "1.0.0", "Echo");

    let r = node.register(&admin, "p1", "n1", std::slice::from_ref(&echo));
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(keys(&r.body), set(&["provider", "descriptors", "changed"]));
    assert_eq!(r.body["changed"], true);
    let provider = &r.body["provider"];
    assert_eq!(
        keys(provider),
        set(&[
            "provider_id",
            "node_id",
            "descriptors",
            "registered_at",
            "updated_at"
        ])
    );
    let revision = r.body["descriptors"][0]["revision"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        revision.starts_with("sha256:") && revision.len() == 71,
        "{revision}"
    );
    assert_eq!(
        r.body["descriptors"],
        json!([{"id": "echo", "version": "1.0.0", "revision": revision, "status": "new"}])
    );
    assert_eq!(
        provider["descriptors"],
        json!([{"id": "echo", "version": "1.0.0", "revision": revision}])
    );
    let again = node.register(&admin, "p1", "n1", &[echo]);
    assert_eq!(again.status, 200);
    assert_eq!(again.body["changed"], false);
    assert_eq!(again.body["descriptors"][0]["status"], "unchanged");
    assert_eq!(again.body["provider"], r.body["provider"]);

    let got = node.get("/v1/providers/p1", &admin);
    assert_eq!((got.status, &got.body), (200, provider));

    let list = node.get("/v1/capabilities", &admin);
    assert_eq!(list.status, 200);
    assert_eq!(
        keys(&list.body),
        set(&["capabilities", "revisions", "nextCursor", "hasMore"])
    );
    assert_eq!(list.body["capabilities"][0]["id"], "echo");
    assert_eq!(list.body["capabilities"][0]["io_mode"], "unary");
    assert_eq!(list.body["revisions"], json!({"echo@1.0.0": revision}));
    assert_eq!(
        (&list.body["nextCursor"], &list.body["hasMore"]),
        (&Value::Null, &json!(false))
    );

    let cap = node.get("/v1/capabilities/echo", &admin);
    let refs = json!([{"provider_id": "p1", "node_id": "n1", "revision": revision}]);
    assert_eq!(
        cap.body,
        json!({"id": "echo", "versions": [{"version": "1.0.0", "revision": revision,
               "io_mode": "unary", "title": "Echo", "providers": refs}]})
    );
    let version = node.get("/v1/capabilities/echo/versions/1.0.0", &admin);
    assert_eq!(
        keys(&version.body),
        set(&["descriptor", "revision", "history", "providers"])
    );
    assert_eq!(version.body["descriptor"], list.body["capabilities"][0]);
    assert_eq!(version.body["revision"], revision.as_str());
    assert_eq!(version.body["history"][0]["revision"], revision.as_str());
    assert_eq!(version.body["providers"], refs);

    let nodes = node.get("/v1/nodes", &admin);
    assert_eq!(keys(&nodes.body), set(&["nodes", "nextCursor", "hasMore"]));
    let n1 = &nodes.body["nodes"][0];
    assert_eq!(
        keys(n1),
        set(&["node_id", "tags", "providers", "status", "last_seen"])
    );
    assert_eq!(
        (&n1["node_id"], &n1["tags"], &n1["providers"], &n1["status"]),
        (
            &json!("n1"),
            &json!(["echo"]),
            &json!(["p1"]),
            &json!("ready")
        )
    );
    assert_eq!(n1["last_seen"], provider["updated_at"]);
    assert_eq!(&node.get("/v1/nodes/n1", &admin).body, n1);

    let agents = node.get("/v1/agents", &admin);
    assert_eq!(
        agents.body,
        json!({"agents": [], "nextCursor": null, "hasMore": false})
    );

    let tenant = node.send(
        "POST",
        "/v1/tenants",
        &admin,
        &json!({"id": "acme", "name": "Acme"}),
    );
    assert_eq!(tenant.status, 201);
    assert_eq!(keys(&tenant.body), set(&["id", "name", "createdAt"]));
    assert_eq!(
        (&tenant.body["id"], &tenant.body["name"]),
        (&json!("acme"), &json!("Acme"))
    );
    let plain = node.send("POST", "/v1/tenants", &admin, &json!({"id": "beta"}));
    assert_eq!(plain.body["name"], "beta");
    let tenants = node.get("/v1/tenants", &admin);
    let ids: Vec<&Value> = tenants.body["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert_eq!(ids, [&json!("acme"), &json!("beta"), &json!("default")]);
    assert_eq!(tenants.body["hasMore"], false);

    let token = node.send(
        "POST",
        "/v1/tokens",
        &admin,
        &json!({"name": "acme-ci", "scopes": ["capabilities:publish", "capabilities:read"], "tenant": "acme"}),
    );
    assert_eq!(token.status, 201);
    assert_eq!(
        keys(&token.body),
        set(&["token", "id", "tenant", "name", "scopes", "createdAt"])
    );
    assert_eq!(token.body["tenant"], "acme");
    let tokens = node.get("/v1/tokens?tenant=acme", &admin);
    assert_eq!(
        keys(&tokens.body),
        set(&["tokens", "nextCursor", "hasMore"])
    );
    assert_eq!(tokens.body["tokens"][0]["id"], token.body["id"]);
    let revoke = format!("/v1/tokens/{}/revoke", token.body["id"].as_str().unwrap());
    let revoked = node.call("POST", &revoke, Some(&admin), None, &[]);
    assert_eq!(revoked.status, 200);
    assert_eq!(
        keys(&revoked.body),
        set(&["id", "tenant", "name", "scopes", "createdAt", "revokedAt"])
    );

    let gone = node.call(
        "POST",
        "/v1/providers/p1/unregister",
        Some(&admin),
        None,
        &[],
    );
    assert_eq!(
        (gone.status, gone.body),
        (200, json!({"provider_id": "p1", "unregistered": true}))
    );
}

#[test]
fn a_body_of_exactly_the_limit_is_accepted_and_one_byte_more_is_413() {
    const LIMIT: usize = 2048;
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--max-body-bytes", &LIMIT.to_string()]);
    let admin = node.admin();
    let body_of = |len: usize, provider: &str| {
        let shell = json!({"node_id": "n1", "descriptors": [descriptor(provider, "1.0.0", "T")], "transport": ""});
        let pad = len - serde_json::to_vec(&shell).unwrap().len();
        let mut shell = shell;
        shell["transport"] = json!("x".repeat(pad));
        let bytes = serde_json::to_vec(&shell).unwrap();
        assert_eq!(bytes.len(), len);
        bytes
    };
    let at = node.call(
        "PUT",
        "/v1/providers/at",
        Some(&admin),
        Some(&body_of(LIMIT, "at")),
        &[],
    );
    assert_eq!(at.status, 201, "{}", at.text);
    let over = node.call(
        "PUT",
        "/v1/providers/over",
        Some(&admin),
        Some(&body_of(LIMIT + 1, "over")),
        &[],
    );
    assert_error(&over, 413, "payload_too_large");
    let key = [("idempotency-key", "big")];
    let keyed = node.call(
        "PUT",
        "/v1/providers/over",
        Some(&admin),
        Some(&body_of(LIMIT + 1, "over")),
        &key,
    );
    assert_error(&keyed, 413, "payload_too_large");
    let keyed_at = node.call(
        "PUT",
        "/v1/providers/at2",
        Some(&admin),
        Some(&body_of(LIMIT, "at2")),
        &key,
    );
    assert_eq!(keyed_at.status, 201, "{}", keyed_at.text);
    let token = format!(r#"{{"name":"{}","scopes":["admin"]}}"#, "n".repeat(LIMIT));
    let r = node.call(
        "POST",
        "/v1/tokens",
        Some(&admin),
        Some(token.as_bytes()),
        &[],
    );
    assert_error(&r, 413, "payload_too_large");
    assert_error(&node.get("/v1/providers/over", &admin), 404, "not_found");
    assert_eq!(node.get("/v1/providers/at", &admin).status, 200);
}

#[test]
fn idempotency_keys_replay_the_first_answer_and_refuse_a_different_body() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let acme = node.tenant(&admin, "acme");
    let body = serde_json::to_vec(
        &json!({"node_id": "n1", "descriptors": [descriptor("echo", "1.0.0", "Echo")]}),
    )
    .unwrap();
    let key = [("idempotency-key", "publish-1")];
    let first = node.call("PUT", "/v1/providers/p1", Some(&admin), Some(&body), &key);
    assert_eq!(first.status, 201);
    assert!(first.header("x-idempotent-replay").is_none());
    let replay = node.call("PUT", "/v1/providers/p1", Some(&admin), Some(&body), &key);
    assert_eq!(
        replay.status, 201,
        "the stored status is replayed, not a fresh 200"
    );
    assert_eq!(replay.header("x-idempotent-replay"), Some("true"));
    assert_eq!(replay.header("content-type"), Some("application/json"));
    assert_eq!(replay.text, first.text);
    assert_ne!(replay.header("x-request-id"), first.header("x-request-id"));
    // Without the key the same body is a fresh, unchanged registration.
    let fresh = node.call("PUT", "/v1/providers/p1", Some(&admin), Some(&body), &[]);
    assert_eq!((fresh.status, &fresh.body["changed"]), (200, &json!(false)));

    let mut changed = body.clone();
    changed.pop();
    changed.extend_from_slice(br#","transport":{"kind":"tcp"}}"#);
    let reused = node.call(
        "PUT",
        "/v1/providers/p1",
        Some(&admin),
        Some(&changed),
        &key,
    );
    assert_error(&reused, 409, "idempotency_key_reused");
    assert!(
        node.get("/v1/providers/p1", &admin)
            .body
            .get("transport")
            .is_none()
    );
    // The key is per route and per tenant.
    let other_route = node.call("PUT", "/v1/providers/p2", Some(&admin), Some(&body), &key);
    assert_eq!(other_route.status, 201);
    assert!(other_route.header("x-idempotent-replay").is_none());
    let other_tenant = node.call("PUT", "/v1/providers/p1", Some(&acme), Some(&body), &key);
    assert_eq!(other_tenant.status, 201);
    assert!(other_tenant.header("x-idempotent-replay").is_none());

    // A failed attempt is not stored: the same key works once the body is fixed.
    let retry = [("idempotency-key", "retry-me")];
    let bad = br#"{"node_id":"n1","descriptors":[{"id":"x"}]}"#;
    let failed = node.call("PUT", "/v1/providers/p3", Some(&admin), Some(bad), &retry);
    assert_error(&failed, 422, "invalid_descriptor");
    let fixed = node.call("PUT", "/v1/providers/p3", Some(&admin), Some(&body), &retry);
    assert_eq!(fixed.status, 201, "{}", fixed.text);
    // GET ignores the header.
    let get = node.call("GET", "/v1/providers/p3", Some(&admin), None, &retry);
    assert_eq!(get.status, 200);
    assert!(get.header("x-idempotent-replay").is_none());
}

#[test]
fn racing_requests_on_one_idempotency_key_get_409_in_flight() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    // A heavy body keeps the first request inside the handler while the others arrive.
    let schema = json!({"type": "object", "properties": (0..20)
        .map(|j| (format!("p{j}"), json!({"type": "string", "pattern": "^a+$"})))
        .collect::<serde_json::Map<String, Value>>()});
    let descriptors: Vec<Value> = (0..300)
        .map(|i| {
            let mut d = descriptor(&format!("heavy-{i}"), "1.0.0", "Heavy");
            d["input_schema"] = schema.clone();
            d
        })
        .collect();
    let body = serde_json::to_vec(&json!({"node_id": "n1", "descriptors": descriptors})).unwrap();
    let mut in_flight = 0;
    for attempt in 0..5 {
        let path = format!("/v1/providers/race-{attempt}");
        let barrier = std::sync::Barrier::new(6);
        let answers: Vec<Resp> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        node.call(
                            "PUT",
                            &path,
                            Some(&admin),
                            Some(&body),
                            &[("idempotency-key", "race")],
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let originals = answers
            .iter()
            .filter(|r| r.status == 201 && r.header("x-idempotent-replay").is_none())
            .count();
        assert_eq!(originals, 1, "exactly one request runs the handler");
        for r in &answers {
            if r.status == 409 {
                assert_error(r, 409, "idempotency_key_in_flight");
                assert_eq!(r.header("retry-after"), Some("1"));
                in_flight += 1;
            } else {
                assert_eq!(r.status, 201, "{}", r.text);
            }
        }
        let later = node.call(
            "PUT",
            &path,
            Some(&admin),
            Some(&body),
            &[("idempotency-key", "race")],
        );
        assert_eq!(
            (later.status, later.header("x-idempotent-replay")),
            (201, Some("true"))
        );
        if in_flight > 0 {
            break;
        }
    }
    assert!(in_flight > 0, "no request ever saw the key in flight");
}

/// Sends `head` (and, after a pause, `rest`) on one connection, then `GET /healthz` on the
/// same connection; returns every status line read back.
fn status_lines_on_one_connection(node: &Node, head: &str, rest: &str) -> Vec<String> {
    use std::io::{Read, Write};
    let addr = node.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let _ = stream.write_all(rest.as_bytes());
    std::thread::sleep(std::time::Duration::from_millis(50));
    let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: weft\r\n\r\n");
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&raw).matches("HTTP/1.1 ").count() >= 2 {
            break;
        }
    }
    // Bodies have no trailing newline: find each status line wherever it starts.
    let text = String::from_utf8_lossy(&raw);
    text.match_indices("HTTP/1.1 ")
        .map(|(at, _)| text[at..].split("\r\n").next().unwrap().to_owned())
        .collect()
}

#[test]
fn body_less_posts_keep_the_connection_usable() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    for path in [
        "/v1/providers/p1/unregister",
        "/v1/tokens/tok_0123456789abcdef/revoke",
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: weft\r\nAuthorization: Bearer {admin}\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
        let lines = status_lines_on_one_connection(&node, &head, "0\r\n\r\n");
        assert_eq!(lines.len(), 2, "{path}: {lines:?}");
        assert_eq!(lines[1], "HTTP/1.1 200 OK", "{path}: {lines:?}");
    }
}

#[test]
fn a_route_that_reads_its_body_keeps_the_connection_usable() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let head = format!(
        "PUT /v1/providers/p1 HTTP/1.1\r\nHost: weft\r\nAuthorization: Bearer {admin}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let body = r#"{"node_id":"n1","descriptors":[]}"#;
    let rest = format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
    let lines = status_lines_on_one_connection(&node, &head, &rest);
    assert_eq!(lines, ["HTTP/1.1 201 Created", "HTTP/1.1 200 OK"]);
}

#[test]
fn undecodable_path_parameters_are_invalid_request_in_the_envelope() {
    // `%FF` is well-formed percent-encoding of a byte that is not UTF-8: found by
    // schemathesis, axum's own rejection was a plain-text 400 outside the error envelope.
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let body = br#"{"node_id": "n1", "descriptors": []}"#;
    for (method, path, body) in [
        ("GET", "/v1/nodes/%FF", None),
        ("GET", "/v1/providers/%FF", None),
        ("PUT", "/v1/providers/%FF", Some(&body[..])),
        ("POST", "/v1/providers/%FF/unregister", None),
        ("GET", "/v1/capabilities/%FF", None),
        ("GET", "/v1/capabilities/echo/versions/%FF", None),
        ("GET", "/v1/agents/%FF", None),
        ("POST", "/v1/tokens/%FF/revoke", None),
    ] {
        let r = node.call(method, path, Some(&admin), body, &[]);
        assert_error(&r, 400, "invalid_request");
        assert!(
            r.text.contains("path parameter"),
            "{method} {path}: {}",
            r.text
        );
    }
}

/// The (soft, hard) open-file limits of process `pid`.
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[3].to_owned(), fields[4].to_owned())
}

#[test]
fn the_node_raises_its_soft_open_file_limit_to_the_hard_limit() {
    use std::io::{BufRead, BufReader};
    let dir = tempdir();
    let (_, hard) = open_file_limits(std::process::id());
    // Started with a soft limit of 256 (below any hard limit worth testing against).
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -Sn 256 && exec "$0" serve --listen 127.0.0.1:0 --data-dir "$1""#)
        .arg(env!("CARGO_BIN_EXE_weft"))
        .arg(dir.path())
        .env("WEFT_NO_BUILTINS", "true")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("weft: listening on "), "{line:?}");
    let limits = open_file_limits(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(limits, (hard.clone(), hard), "soft limit not raised");
}

#[test]
fn request_spans_are_logged_only_when_debug_logging_asks_for_them() {
    let quiet_dir = tempdir();
    let quiet = Node::start(quiet_dir.path(), &[]);
    let loud_dir = tempdir();
    let loud = Node::start_with_env(
        loud_dir.path(),
        &[],
        &[("WEFT_LOG", "info,tower_http=debug")],
    );
    for node in [&quiet, &loud] {
        assert_eq!(node.call("GET", "/healthz", None, None, &[]).status, 200);
    }
    // The response is written before the span's closing event: wait for it, boundedly.
    let logged = harness::poll(std::time::Duration::from_secs(10), || {
        loud.stderr()
            .contains("finished processing request")
            .then_some(())
    });
    assert!(logged.is_some(), "{}", loud.stderr());
    assert!(
        !quiet.stderr().contains("processing request"),
        "{}",
        quiet.stderr()
    );
}
