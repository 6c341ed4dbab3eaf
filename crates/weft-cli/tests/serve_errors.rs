//! `weft serve`: every error code the API produces, with its status and envelope, and
//! `invalid_descriptor` details, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::{BTreeMap, BTreeSet};

use harness::{Node, Resp, assert_error, descriptor, tempdir};
use serde_json::{Value, json};

/// `(code, status)` pairs of `ERROR_CODES`, read from the server's source.
fn error_table() -> BTreeMap<String, u16> {
    let source = include_str!("../../weft-server/src/error.rs");
    let start = source.find("pub const ERROR_CODES").unwrap();
    let end = start + source[start..].find("];").unwrap();
    source[start..end]
        .lines()
        .filter_map(|line| {
            let line = line.trim().strip_prefix("(\"")?;
            let (code, rest) = line.split_once("\", ")?;
            let status = rest.trim_end_matches("),").parse().ok()?;
            Some((code.to_owned(), status))
        })
        .collect()
}

/// Codes no request can provoke today, and why; and the one a separate test provokes.
const NOT_PRODUCED: [(&str, &str); 13] = [
    (
        "version_mismatch",
        "provoked by serve_calls::each_guard_answers_with_its_code_and_status",
    ),
    (
        "revision_mismatch",
        "provoked by serve_calls::each_guard_answers_with_its_code_and_status",
    ),
    (
        "invalid_payload",
        "provoked by serve_calls::each_guard_answers_with_its_code_and_status",
    ),
    (
        "overloaded",
        "needs slow providers: weft-fabric tests/guards.rs",
    ),
    (
        "provider_error",
        "needs a failing provider: weft-fabric tests/guards.rs",
    ),
    (
        "invalid_result",
        "needs a misbehaving provider: weft-fabric tests/guards.rs",
    ),
    (
        "unreachable",
        "needs an unreachable provider: weft-fabric tests/guards.rs",
    ),
    (
        "timeout",
        "needs a slow provider: weft-fabric tests/guards.rs",
    ),
    (
        "transport_error",
        "needs a child breaking flow control: weft-managed tests/stream_faults.rs",
    ),
    ("rate_limited", "there is no rate limiter"),
    ("internal", "needs a failing store"),
    (
        "unavailable",
        "only /readyz while draining, when no new connection is accepted",
    ),
    (
        "idempotency_key_in_flight",
        "provoked by serve_routes::racing_requests_on_one_idempotency_key_get_409_in_flight",
    ),
];

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

/// Records `r` as an instance of `code` after checking its envelope.
fn saw(seen: &mut BTreeMap<String, u16>, r: &Resp, status: u16, code: &str) {
    assert_error(r, status, code);
    seen.insert(code.to_owned(), r.status);
}

#[test]
fn every_error_code_in_the_table_is_produced_with_its_status() {
    let dir = tempdir();
    let node = Node::start(
        dir.path(),
        &["--max-body-bytes", "4096", "--event-retention", "2"],
    );
    let admin = node.admin();
    let read = node.token(&admin, None, &["capabilities:read"]);
    let table = error_table();
    assert_eq!(table.len(), 27, "{table:?}");
    let mut seen = BTreeMap::new();
    let put =
        |path: &str, body: &str| node.call("PUT", path, Some(&admin), Some(body.as_bytes()), &[]);
    let post =
        |path: &str, body: &str| node.call("POST", path, Some(&admin), Some(body.as_bytes()), &[]);

    for body in [r#"{"node_id": "n1","#, "", "{]", "nul"] {
        saw(
            &mut seen,
            &put("/v1/providers/p1", body),
            400,
            "invalid_json",
        );
    }
    saw(&mut seen, &post("/v1/tokens", ""), 400, "invalid_json");
    saw(
        &mut seen,
        &put(
            "/v1/providers/p1",
            r#"{"node_id":"n1","descriptors":[],"extra":1}"#,
        ),
        400,
        "unknown_field",
    );
    saw(
        &mut seen,
        &post("/v1/tenants", r#"{"id":"x","owner":"me"}"#),
        400,
        "unknown_field",
    );
    saw(
        &mut seen,
        &post("/v1/tokens", r#"{"name":"x","scopes":[],"ttl":1}"#),
        400,
        "unknown_field",
    );

    for query in [
        "limit=0",
        "limit=101",
        "limit=x",
        "limit=-1",
        "limit=",
        "cursor=!!!",
        "cursor=abc",
        "io_mode=sideways",
        "kind=bogus",
        "provider_id=Not_Valid",
        "colour=red",
        "limit=1&limit=2",
    ] {
        saw(
            &mut seen,
            &node.get(&format!("/v1/capabilities?{query}"), &admin),
            400,
            "invalid_request",
        );
    }
    for path in [
        "/v1/nodes?limit=0",
        "/v1/nodes?cursor=%25%25",
        "/v1/nodes?node_id=n1",
        "/v1/tokens?limit=101",
        "/v1/tenants?cursor=zz",
        "/v1/agents?limit=x",
        "/v1/events?after=x",
        "/v1/events?after=1&since=2",
        "/v1/capabilities?kind=feature&cursor=zz",
    ] {
        saw(&mut seen, &node.get(path, &admin), 400, "invalid_request");
    }
    let h = [("last-event-id", "yesterday")];
    saw(
        &mut seen,
        &node.call("GET", "/v1/events", Some(&admin), None, &h),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &put(
            "/v1/providers/Bad_Id",
            r#"{"node_id":"n1","descriptors":[]}"#,
        ),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &node.call(
            "POST",
            "/v1/providers/Bad_Id/unregister",
            Some(&admin),
            None,
            &[],
        ),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &put("/v1/providers/p1", r#"{"node_id":"N 1","descriptors":[]}"#),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &put("/v1/providers/p1", r#"{"node_id":"n1","descriptors":"x"}"#),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &put("/v1/providers/p1", r#"{"descriptors":[]}"#),
        400,
        "invalid_request",
    );
    let twice = json!({"node_id": "n1", "descriptors": [descriptor("a", "1.0.0", "A"), descriptor("a", "1.0.0", "A")]});
    saw(
        &mut seen,
        &node.send("PUT", "/v1/providers/p1", &admin, &twice),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &post(
            "/v1/tokens",
            r#"{"name":"x","scopes":["capabilities:write"]}"#,
        ),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &post("/v1/tokens", r#"{"name":"x","scopes":[]}"#),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &post("/v1/tokens", r#"{"name":"  ","scopes":["admin"]}"#),
        400,
        "invalid_request",
    );
    saw(
        &mut seen,
        &post("/v1/tenants", r#"{"id":"Acme Corp"}"#),
        400,
        "invalid_request",
    );
    let long_key = "k".repeat(256);
    let r = node.call(
        "POST",
        "/v1/tenants",
        Some(&admin),
        Some(br#"{"id":"k"}"#),
        &[("idempotency-key", &long_key)],
    );
    saw(&mut seen, &r, 400, "invalid_request");

    saw(
        &mut seen,
        &node.get("/v1/nodes", "weft_nope"),
        401,
        "unauthorized",
    );
    saw(&mut seen, &node.get("/v1/tenants", &read), 403, "forbidden");

    for path in [
        "/nope",
        "/v1",
        "/v1/nope",
        "/v1/providers/none",
        "/v1/providers/NOT_VALID",
        "/v1/capabilities/none",
        "/v1/capabilities/none/versions/1.0.0",
        "/v1/capabilities/feature:nope",
        "/v1/nodes/none",
        "/v1/nodes/NOT_VALID",
        "/v1/capabilities?node_id=none",
        "/v1/agents/none",
        "/v1/providers/p1/unregister/x",
    ] {
        saw(&mut seen, &node.get(path, &admin), 404, "not_found");
    }
    saw(
        &mut seen,
        &post("/v1/tokens/tok_0123456789abcdef/revoke", ""),
        404,
        "not_found",
    );
    saw(
        &mut seen,
        &post(
            "/v1/tokens",
            r#"{"name":"x","scopes":["admin"],"tenant":"ghost"}"#,
        ),
        404,
        "not_found",
    );

    for (method, path, allow) in [
        ("DELETE", "/v1/capabilities", "GET,HEAD"),
        ("POST", "/v1/capabilities/echo", "GET,HEAD"),
        ("PATCH", "/v1/providers/p1", "PUT,GET,HEAD"),
        ("GET", "/v1/providers/p1/unregister", "POST"),
        ("PUT", "/v1/tenants", "POST,GET,HEAD"),
        ("POST", "/healthz", "GET,HEAD"),
    ] {
        let r = node.call(method, path, Some(&admin), None, &[]);
        saw(&mut seen, &r, 405, "method_not_allowed");
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
    }

    assert_eq!(post("/v1/tenants", r#"{"id":"acme"}"#).status, 201);
    saw(
        &mut seen,
        &post("/v1/tenants", r#"{"id":"acme","name":"again"}"#),
        409,
        "conflict",
    );

    let key = [("idempotency-key", "k-1")];
    let first = node.call(
        "POST",
        "/v1/tenants",
        Some(&admin),
        Some(br#"{"id":"idem"}"#),
        &key,
    );
    assert_eq!(first.status, 201);
    let other = node.call(
        "POST",
        "/v1/tenants",
        Some(&admin),
        Some(br#"{"id":"idem2"}"#),
        &key,
    );
    saw(&mut seen, &other, 409, "idempotency_key_reused");

    for p in ["a", "b", "c"] {
        assert_eq!(node.register(&admin, p, "n1", &[]).status, 201);
    }
    let r = node.call(
        "GET",
        "/v1/events",
        Some(&admin),
        None,
        &[("last-event-id", "0")],
    );
    saw(&mut seen, &r, 410, "events_gone");
    assert_eq!(
        r.body["error"]["details"],
        json!({"requested": 0, "oldest": 2})
    );

    // The default policy (semver) refuses a breaking re-publish of an `id@version`.
    let before = descriptor("b", "1.0.0", "B");
    assert_eq!(
        node.register(&admin, "pb", "n1", std::slice::from_ref(&before))
            .status,
        201
    );
    let mut after = before;
    after["input_schema"] = json!({"type": "object", "required": ["x"]});
    saw(
        &mut seen,
        &node.register(&admin, "pb", "n1", &[after]),
        409,
        "breaking_change",
    );

    let big = format!(
        r#"{{"node_id":"n1","descriptors":[],"transport":"{}"}}"#,
        "x".repeat(4096)
    );
    saw(
        &mut seen,
        &put("/v1/providers/p1", &big),
        413,
        "payload_too_large",
    );

    let broken = json!({"node_id": "n1", "descriptors": [{"id": "x"}]});
    saw(
        &mut seen,
        &node.send("PUT", "/v1/providers/p1", &admin, &broken),
        422,
        "invalid_descriptor",
    );
    // A standard taxonomy id whose output promises none of the standard's fields.
    let mut off_standard = descriptor("text.rewrite.casual", "1.0.0", "Casual");
    off_standard["output_schema"] = json!({"type": "object"});
    let off = json!({"node_id": "n1", "descriptors": [off_standard]});
    saw(
        &mut seen,
        &node.send("PUT", "/v1/providers/p1", &admin, &off),
        422,
        "taxonomy_mismatch",
    );

    for (code, status) in &seen {
        assert_eq!(table.get(code), Some(status), "{code} answered {status}");
    }
    let mut covered: BTreeSet<&str> = seen.keys().map(String::as_str).collect();
    covered.extend(NOT_PRODUCED.iter().map(|(c, _)| *c));
    assert_eq!(covered, table.keys().map(String::as_str).collect());
}

#[test]
fn invalid_descriptor_lists_every_problem_of_every_descriptor_and_stores_nothing() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let good = descriptor("good", "1.0.0", "Good");
    let body = json!({"node_id": "n1", "descriptors": [
        {"id": "Bad", "version": "1.0", "title": " ", "description": "d", "input_schema": {}},
        good,
        {"id": "s", "version": "1.0.0", "title": "S", "description": "d", "input_schema": {"type": 7},
         "io_mode": "server_streaming"},
        {"id": "u", "version": "1.0.0+build", "title": "U", "description": "d", "input_schema": {}, "colour": 1},
    ]});
    let r = node.send("PUT", "/v1/providers/p1", &admin, &body);
    assert_error(&r, 422, "invalid_descriptor");
    let problems = r.body["error"]["details"]["problems"].as_array().unwrap();
    let triples: BTreeSet<(u64, String, String)> = problems
        .iter()
        .map(|p| {
            assert_eq!(
                keys(p),
                set(&["index", "pointer", "code", "message"]),
                "{p}"
            );
            assert!(!p["message"].as_str().unwrap().is_empty());
            (
                p["index"].as_u64().unwrap(),
                p["pointer"].as_str().unwrap().to_owned(),
                p["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let t = |i: u64, pointer: &str, code: &str| (i, pointer.to_owned(), code.to_owned());
    for expected in [
        t(0, "/descriptors/0/id", "invalid_id"),
        t(0, "/descriptors/0/version", "invalid_version"),
        t(0, "/descriptors/0/title", "blank_field"),
        t(
            2,
            "/descriptors/2/output_chunk_schema",
            "chunk_schema_required",
        ),
        t(3, "/descriptors/3/version", "invalid_version"),
        t(3, "/descriptors/3/colour", "unknown_field"),
    ] {
        assert!(
            triples.contains(&expected),
            "{expected:?} missing from {triples:?}"
        );
    }
    assert!(
        triples
            .iter()
            .any(|(i, p, _)| *i == 2 && p.starts_with("/descriptors/2/input_schema")),
        "{triples:?}"
    );
    assert!(
        triples.iter().all(|(i, _, _)| *i != 1),
        "the valid descriptor has no problem"
    );
    assert_eq!(problems.len(), triples.len());
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{} problem(s)", problems.len())),
        "{message}"
    );
    assert_error(&node.get("/v1/providers/p1", &admin), 404, "not_found");
    assert_error(&node.get("/v1/capabilities/good", &admin), 404, "not_found");
}
