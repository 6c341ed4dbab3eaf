//! `GET /v1/diagnostics/node` and `GET /metrics` against a real node with the built-ins:
//! exact counters after known traffic, the same numbers in both formats, a strict parse of
//! the Prometheus text format, counters that never decrease, and who may read what.
//! Overload and the stream probe are covered in `crates/weft-fabric/tests/diagnostics.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeMap;

use harness::{Node, Resp, assert_error, tempdir};
use serde_json::{Value, json};
use weft_server::routes::diagnostics::escape_label;

fn pinned(node: &Node, token: &str) -> String {
    let r = node.get("/v1/capabilities/echo/versions/1.0.0", token);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["revision"].as_str().unwrap().to_owned()
}

fn echo(node: &Node, token: &str, revision: &str, payload: Value) -> Resp {
    let body = json!({"capability_id": "echo", "version": "1.0.0",
                      "descriptor_revision": revision, "payload": payload});
    node.send("POST", "/v1/calls", token, &body)
}

/// `ok` good calls and `invalid` payloads failing `input_schema`.
fn traffic(node: &Node, token: &str, revision: &str, ok: usize, invalid: usize) {
    for i in 0..ok {
        let r = echo(node, token, revision, json!({"text": format!("hello {i}")}));
        assert_eq!(r.status, 200, "{}", r.text);
    }
    for _ in 0..invalid {
        assert_error(
            &echo(node, token, revision, json!({"text": 7})),
            422,
            "invalid_payload",
        );
    }
}

fn diagnostics(node: &Node, token: &str) -> Value {
    let r = node.get("/v1/diagnostics/node", token);
    assert_eq!(r.status, 200, "{}", r.text);
    r.body
}

/// One sample of the text format.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn is_name(text: &str, colon: bool) -> bool {
    let mut chars = text.chars();
    let first = chars.next();
    first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
}

/// `{k="v",…}` from just after `{`; returns the labels and the rest after `}`.
fn parse_labels(mut rest: &str) -> (BTreeMap<String, String>, &str) {
    let mut labels = BTreeMap::new();
    loop {
        let (key, after) = rest.split_once("=\"").expect("label=\"value\"");
        assert!(is_name(key, false), "label name {key:?}");
        let (mut value, mut chars) = (String::new(), after.char_indices());
        let end = loop {
            match chars.next().expect("unterminated label value") {
                (_, '\\') => match chars.next().expect("dangling escape").1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    other => panic!("invalid escape \\{other}"),
                },
                (i, '"') => break i,
                (_, '\n') => panic!("raw newline in a label value"),
                (_, c) => value.push(c),
            }
        };
        assert!(
            labels.insert(key.to_owned(), value).is_none(),
            "{key} twice"
        );
        rest = &after[end + 1..];
        match rest.chars().next() {
            Some(',') => rest = &rest[1..],
            Some('}') => return (labels, &rest[1..]),
            other => panic!("expected , or }} after a label, got {other:?}"),
        }
    }
}

/// Parses the whole exposition strictly: `# HELP`/`# TYPE` once per family and before its
/// samples, families contiguous, every other line `name{labels} value`.
fn parse(text: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    assert!(text.ends_with('\n'), "the exposition ends with a newline");
    let (mut samples, mut types, mut helps) = (Vec::new(), BTreeMap::new(), Vec::new());
    let mut current = String::new();
    for line in text.lines() {
        assert!(!line.is_empty(), "no blank lines");
        if let Some(help) = line.strip_prefix("# HELP ") {
            let (name, doc) = help.split_once(' ').expect("# HELP name text");
            assert!(is_name(name, true) && !doc.is_empty(), "{line}");
            helps.push(name.to_owned());
            continue;
        }
        if let Some(kind) = line.strip_prefix("# TYPE ") {
            let (name, kind) = kind.split_once(' ').expect("# TYPE name type");
            assert!(["counter", "gauge", "summary"].contains(&kind), "{line}");
            assert!(
                types.insert(name.to_owned(), kind.to_owned()).is_none(),
                "{line}"
            );
            assert_eq!(helps.last().map(String::as_str), Some(name), "HELP first");
            current = name.to_owned();
            continue;
        }
        assert!(!line.starts_with('#'), "unexpected comment {line}");
        let (series, value) = line.rsplit_once(' ').expect("name{labels} value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in {line}"));
        assert!(value.is_finite() && value >= 0.0, "{line}");
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => {
                let (labels, after) = parse_labels(rest);
                assert!(after.is_empty(), "trailing text in {line}");
                (name, labels)
            }
            None => (series, BTreeMap::new()),
        };
        assert!(is_name(name, true), "{line}");
        let family = ["_sum", "_count"]
            .iter()
            .filter_map(|s| name.strip_suffix(s))
            .find(|base| types.get(*base).is_some_and(|t| t == "summary"))
            .unwrap_or(name);
        assert_eq!(family, current, "{line} outside its family (TYPE first)");
        samples.push(Sample {
            name: name.to_owned(),
            labels,
            value,
        });
    }
    (samples, types)
}

fn scrape(node: &Node) -> (Vec<Sample>, BTreeMap<String, String>) {
    let r = node.call("GET", "/metrics", None, None, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    let content_type = r.header("content-type").unwrap_or_default();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    parse(&r.text)
}

/// The value of the one sample named `name` whose labels include `labels`.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let hits: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(v))
        })
        .collect();
    assert_eq!(hits.len(), 1, "{name}{labels:?}: {hits:?}");
    hits[0].value
}

#[test]
fn echo_traffic_is_counted_exactly_in_json_and_in_metrics() {
    let dir = tempdir();
    let node = Node::start(
        dir.path(),
        &[
            "--builtins",
            "--node-id",
            "lab-1",
            "--max-concurrent-streams",
            "300",
        ],
    );
    let admin = node.admin();
    let rev = pinned(&node, &admin);
    traffic(&node, &admin, &rev, 4, 2);
    let stale = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    assert_error(
        &echo(&node, &admin, stale, json!({"text": "x"})),
        409,
        "revision_mismatch",
    );
    let unknown = json!({"capability_id": "nope", "version": "1.0.0",
                         "descriptor_revision": rev, "payload": {}});
    assert_error(
        &node.send("POST", "/v1/calls", &admin, &unknown),
        404,
        "not_found",
    );

    let d = diagnostics(&node, &admin);
    assert_eq!(d["node_id"], "lab-1");
    assert_eq!(d["limits"]["max_concurrent_calls"], 64);
    assert_eq!(d["limits"]["max_concurrent_streams"], 300);
    assert_eq!(
        (d["active_calls"].clone(), d["active_streams"].clone()),
        (json!(0), json!(0))
    );
    assert_eq!(d["unresolved_calls"], json!({"not_found": 1}));
    let e = &d["capabilities"]["echo@1.0.0"];
    assert_eq!(e["admitted"], 6, "{e}");
    assert_eq!(e["completed"], 4, "{e}");
    assert_eq!(e["failed"], json!({"invalid_payload": 2}));
    assert_eq!(e["rejected"], json!({"revision_mismatch": 1}));
    for zero in [
        "active_calls",
        "timeouts",
        "cancelled",
        "rejected_overloaded",
    ] {
        assert_eq!(e[zero], 0, "{zero}: {e}");
    }
    assert_eq!(e["call_duration"]["count"], 6);
    let sum = e["call_duration"]["sum_seconds"].as_f64().unwrap();
    assert!(sum > 0.0 && e["call_duration"]["max_seconds"].as_f64().unwrap() <= sum);
    // echo is unary: its stream counters stay at zero.
    for zero in [
        "admitted_streams",
        "active_streams",
        "frames_out",
        "missing_terminals",
    ] {
        assert_eq!(e[zero], 0, "{zero}: {e}");
    }

    let (samples, types) = scrape(&node);
    let echo_is = [("capability", "echo@1.0.0")];
    let outcome = |o: &str| value(&samples, "weft_calls_total", &[echo_is[0], ("outcome", o)]);
    assert_eq!(outcome("completed"), 4.0);
    assert_eq!(outcome("invalid_payload"), 2.0);
    assert_eq!(outcome("cancelled"), 0.0);
    assert_eq!(value(&samples, "weft_calls_admitted_total", &echo_is), 6.0);
    assert_eq!(value(&samples, "weft_calls_active", &echo_is), 0.0);
    let rejected = [echo_is[0], ("code", "revision_mismatch")];
    assert_eq!(value(&samples, "weft_calls_rejected_total", &rejected), 1.0);
    let unresolved = [("code", "not_found")];
    assert_eq!(
        value(&samples, "weft_calls_unresolved_total", &unresolved),
        1.0
    );
    assert_eq!(
        value(&samples, "weft_call_duration_seconds_count", &echo_is),
        6.0
    );
    let seconds = value(&samples, "weft_call_duration_seconds_sum", &echo_is);
    assert!((seconds - sum).abs() < 1e-9, "{seconds} vs {sum}");
    assert_eq!(value(&samples, "weft_limit_concurrent_calls", &[]), 64.0);
    let frames = |d: &str| {
        value(
            &samples,
            "weft_stream_frames_total",
            &[echo_is[0], ("direction", d)],
        )
    };
    assert_eq!((frames("out"), frames("in")), (0.0, 0.0));
    assert_eq!(types["weft_calls_total"], "counter");
    assert_eq!(types["weft_calls_active"], "gauge");
    assert_eq!(types["weft_call_duration_seconds"], "summary");
}

#[test]
fn counters_never_decrease_between_scrapes() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins"]);
    let admin = node.admin();
    let rev = pinned(&node, &admin);
    traffic(&node, &admin, &rev, 2, 1);
    let (before, types) = scrape(&node);
    traffic(&node, &admin, &rev, 3, 2);
    let (after, _) = scrape(&node);
    let monotonic = |name: &str| {
        let family = name.trim_end_matches("_sum").trim_end_matches("_count");
        matches!(
            types.get(family).map(String::as_str),
            Some("counter" | "summary")
        )
    };
    let mut compared = 0;
    for old in before.iter().filter(|s| monotonic(&s.name)) {
        let new = after
            .iter()
            .find(|s| s.name == old.name && s.labels == old.labels)
            .unwrap_or_else(|| panic!("{old:?} disappeared"));
        assert!(new.value >= old.value, "{old:?} fell to {}", new.value);
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} counters compared");
    let echo_is = [("capability", "echo@1.0.0")];
    let completed = [echo_is[0], ("outcome", "completed")];
    assert_eq!(value(&before, "weft_calls_total", &completed), 2.0);
    assert_eq!(value(&after, "weft_calls_total", &completed), 5.0);
    let invalid = [echo_is[0], ("outcome", "invalid_payload")];
    assert_eq!(value(&after, "weft_calls_total", &invalid), 3.0);
    assert_eq!(value(&after, "weft_node_calls_active", &[]), 0.0);
    // The JSON agrees with the later scrape.
    let d = diagnostics(&node, &admin);
    assert_eq!(d["capabilities"]["echo@1.0.0"]["admitted"], 8);
}

#[test]
fn the_json_needs_a_read_token_and_the_metrics_none() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins"]);
    let admin = node.admin();
    let rev = pinned(&node, &admin);
    traffic(&node, &admin, &rev, 1, 0);
    let anonymous = node.call("GET", "/v1/diagnostics/node", None, None, &[]);
    assert_error(&anonymous, 401, "unauthorized");
    assert_eq!(anonymous.header("www-authenticate"), Some("Bearer"));
    assert_error(
        &node.get("/v1/diagnostics/node", "wft_not-a-token"),
        401,
        "unauthorized",
    );
    let publisher = node.token(&admin, None, &["capabilities:publish"]);
    assert_error(
        &node.get("/v1/diagnostics/node", &publisher),
        403,
        "forbidden",
    );
    // Node-wide, as documented: a reader of another tenant sees the default tenant's echo.
    let acme = node.tenant(&admin, "acme");
    let acme_read = node.token(&acme, None, &["capabilities:read"]);
    let seen = diagnostics(&node, &acme_read);
    assert_eq!(seen["capabilities"]["echo@1.0.0"]["completed"], 1);
    let r = node.call("GET", "/metrics", None, None, &[]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.text
            .contains("weft_calls_total{capability=\"echo@1.0.0\",outcome=\"completed\"} 1\n")
    );
}

#[test]
fn openapi_documents_both_routes_with_the_live_shape() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--builtins"]);
    let admin = node.admin();
    let rev = pinned(&node, &admin);
    traffic(&node, &admin, &rev, 1, 0);
    let doc = node.call("GET", "/openapi.json", None, None, &[]).body;
    let json_op = &doc["paths"]["/v1/diagnostics/node"]["get"];
    assert_eq!(json_op["security"], json!([{"bearerAuth": []}]));
    let metrics_op = &doc["paths"]["/metrics"]["get"];
    assert!(metrics_op["responses"]["200"]["content"]["text/plain; version=0.0.4"].is_object());
    assert!(metrics_op.get("security").is_none());
    let schemas = &doc["components"]["schemas"];
    let documented = |schema: &str| -> Vec<String> {
        let properties = schemas[schema]["properties"].as_object();
        let mut keys: Vec<String> = properties
            .unwrap_or_else(|| panic!("{schema}"))
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    let live = |value: &Value| -> Vec<String> {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let d = diagnostics(&node, &admin);
    assert_eq!(documented("NodeSnapshot"), live(&d));
    assert_eq!(documented("LimitsSnapshot"), live(&d["limits"]));
    let echo = &d["capabilities"]["echo@1.0.0"];
    assert_eq!(documented("CapabilitySnapshot"), live(echo));
    assert_eq!(documented("TimingSnapshot"), live(&echo["first_output"]));
}

#[test]
fn label_values_are_escaped_per_the_text_format() {
    for raw in [
        "echo@1.0.0",
        "a\"b",
        "back\\slash",
        "new\nline",
        "\\\"\n",
        "",
    ] {
        let escaped = escape_label(raw);
        assert!(!escaped.contains('\n'), "{escaped:?}");
        let line = format!("m{{capability=\"{escaped}\"}} 1\n");
        let text = format!("# HELP m help\n# TYPE m gauge\n{line}");
        let (samples, _) = parse(&text);
        assert_eq!(samples[0].labels["capability"], raw, "{line}");
    }
    assert_eq!(escape_label("a\\\"\nb"), "a\\\\\\\"\\nb");
}
