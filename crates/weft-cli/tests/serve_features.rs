//! `weft serve`: the feature catalog, config files, and the OpenAPI document, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeSet;
use std::path::Path;

use harness::{Node, assert_error, serve_expecting_exit, tempdir};
use serde_json::{Value, json};

const BUILT_IN: [&str; 13] = [
    "audio-input",
    "audio-output",
    "batch",
    "code-execution",
    "file-search",
    "long-context",
    "parallel-tool-use",
    "streaming",
    "structured-output",
    "thinking",
    "tool-use",
    "vision",
    "web-search",
];

/// Walks `?kind=feature` with `limit`; returns every entry.
fn features(node: &Node, token: &str, limit: usize) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor = String::new();
    for _ in 0..50 {
        let r = node.get(
            &format!("/v1/capabilities?kind=feature&limit={limit}{cursor}"),
            token,
        );
        assert_eq!(r.status, 200, "{}", r.text);
        let page = r.body["capabilities"].as_array().unwrap();
        out.extend(page.iter().cloned());
        match r.body["nextCursor"].as_str() {
            Some(next) => {
                assert_eq!((page.len(), &r.body["hasMore"]), (limit, &json!(true)));
                cursor = format!("&cursor={next}");
            }
            None => {
                assert_eq!(r.body["hasMore"], false);
                assert!(r.body.get("revisions").is_none());
                return out;
            }
        }
    }
    panic!("runaway pagination");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn the_feature_catalog_lists_the_thirteen_built_ins() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let read = node.token(&node.admin(), None, &["capabilities:read"]);
    let all = features(&node, &read, 5);
    let ids: Vec<&str> = all.iter().map(|f| f["id"].as_str().unwrap()).collect();
    let want: Vec<String> = BUILT_IN.iter().map(|n| format!("feature:{n}")).collect();
    assert_eq!(ids, want);
    for f in &all {
        let keys: BTreeSet<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            BTreeSet::from(["id", "feature", "description"]),
            "{f}"
        );
        assert_eq!(
            f["id"],
            format!("feature:{}", f["feature"].as_str().unwrap())
        );
    }
    assert_eq!(features(&node, &read, 100).len(), 13);
    assert_eq!(features(&node, &read, 1).len(), 13);
    let tool = node.get("/v1/capabilities/feature:tool-use", &read);
    assert_eq!(tool.status, 200);
    assert_eq!(
        tool.body,
        json!({"id": "feature:tool-use", "feature": "tool-use",
               "description": "Calls tools the caller declares, returning structured tool calls."})
    );
    assert_eq!(
        node.get("/v1/capabilities/feature%3Avision", &read).body["feature"],
        "vision"
    );
    // The descriptor listing is separate from the feature catalog.
    assert_eq!(
        node.get("/v1/capabilities?kind=descriptor", &read).body["capabilities"],
        json!([])
    );
    assert_error(
        &node.get("/v1/capabilities/feature:teleport", &read),
        404,
        "not_found",
    );
    let publish = node.token(&node.admin(), None, &["capabilities:publish"]);
    assert_error(
        &node.get("/v1/capabilities?kind=feature", &publish),
        403,
        "forbidden",
    );
}

#[test]
fn a_config_file_adds_features_with_params_schemas() {
    let dir = tempdir();
    let config = write(
        dir.path(),
        "weft.toml",
        r#"
[[features]]
feature = "reasoning-effort"
description = "Lets the caller choose how hard the model thinks."
params_schema = { type = "object", properties = { level = { enum = ["low", "high"] } }, required = ["level"] }

[[features]]
feature = "speech"
id = "acme:speech"
kind = "tts"
description = "Speaks."
"#,
    );
    let data = dir.path().join("data");
    let node = Node::start(&data, &["--config", &config]);
    let admin = node.admin();
    let all = features(&node, &admin, 4);
    let ids: Vec<&str> = all.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 15);
    assert_eq!(ids[0], "acme:speech");
    assert!(ids.contains(&"feature:reasoning-effort"));
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted);
    let r = node.get("/v1/capabilities/feature:reasoning-effort", &admin);
    assert_eq!(
        r.body,
        json!({"id": "feature:reasoning-effort", "feature": "reasoning-effort",
               "description": "Lets the caller choose how hard the model thinks.",
               "paramsSchema": {"type": "object", "properties": {"level": {"enum": ["low", "high"]}},
                                "required": ["level"]}})
    );
    let r = node.get("/v1/capabilities/acme:speech", &admin);
    assert_eq!(
        r.body,
        json!({"id": "acme:speech", "feature": "speech", "kind": "tts", "description": "Speaks."})
    );
}

#[test]
fn a_bad_config_stops_weft_serve_with_a_message() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let cases = [
        (
            "bad-schema.toml",
            "[[features]]\nfeature = \"x\"\ndescription = \"d\"\nparams_schema = { type = 12 }\n",
            "features[0].params_schema",
        ),
        (
            "bad-pattern.toml",
            "[[features]]\nfeature = \"x\"\ndescription = \"d\"\nparams_schema = { pattern = \"(?=a)\" }\n",
            "features[0].params_schema",
        ),
        (
            "unknown-key.toml",
            "listen = \"127.0.0.1:0\"\ncolour = \"red\"\n",
            "colour",
        ),
        (
            "unknown-feature-key.toml",
            "[[features]]\nfeature = \"x\"\ndescription = \"d\"\nweight = 3\n",
            "weight",
        ),
        (
            "duplicate.toml",
            "[[features]]\nfeature = \"vision\"\ndescription = \"again\"\n",
            "feature:vision",
        ),
        (
            "blank.toml",
            "[[features]]\nfeature = \" \"\ndescription = \"d\"\n",
            "features[0]",
        ),
        ("syntax.toml", "listen = \n", "syntax.toml"),
        ("range.toml", "max_body_bytes = 10\n", "max_body_bytes"),
    ];
    for (name, text, needle) in cases {
        let config = write(dir.path(), name, text);
        let (status, stderr) = serve_expecting_exit(&data, &["--config", &config]);
        assert!(!status.success(), "{name}: exited {status}");
        assert!(stderr.starts_with("weft serve: "), "{name}: {stderr}");
        assert!(stderr.contains(needle), "{name}: {stderr}");
    }
    let missing = dir.path().join("missing.toml");
    let (status, stderr) = serve_expecting_exit(&data, &["--config", missing.to_str().unwrap()]);
    assert!(!status.success());
    assert!(stderr.contains("cannot read config file"), "{stderr}");
    // The flags are checked the same way.
    for args in [
        ["--event-retention", "0"],
        ["--agents-poll-ms", "10"],
        ["--log-format", "xml"],
    ] {
        let (status, stderr) = serve_expecting_exit(&data, &args);
        assert!(!status.success(), "{args:?}");
        assert!(stderr.starts_with("weft serve: "), "{args:?}: {stderr}");
    }
}

/// `(path with {} for parameters, lowercase method)` of every route registered in `app.rs`.
fn registered_routes() -> BTreeSet<(String, String)> {
    let source = include_str!("../../weft-server/src/app.rs");
    let mut out = BTreeSet::new();
    for chunk in source.split(".route(").skip(1) {
        let path = chunk.split('"').nth(1).unwrap();
        let end = chunk.find(".route(").unwrap_or(chunk.len());
        let end = end.min(chunk.find(".layer(").unwrap_or(end));
        let end = end.min(chunk.find(".merge(").unwrap_or(end));
        let body = &chunk[..end];
        for method in ["get", "put", "post", "delete", "patch"] {
            let needle = format!("{method}(");
            let hit = body.match_indices(&needle).any(|(at, _)| {
                at == 0
                    || !body.as_bytes()[at - 1].is_ascii_alphanumeric()
                        && body.as_bytes()[at - 1] != b'_'
            });
            if hit {
                out.insert((normalize(path), method.to_owned()));
            }
        }
    }
    out
}

fn normalize(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn openapi_documents_every_registered_route_and_its_401() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let r = node.call("GET", "/openapi.json", None, None, &[]);
    assert_eq!(r.status, 200);
    assert!(
        r.body["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        r.body["openapi"]
    );
    assert_eq!(
        r.body["components"]["securitySchemes"]["bearerAuth"],
        json!({"type": "http", "scheme": "bearer"})
    );
    let mut routes = registered_routes();
    assert_eq!(routes.len(), 29, "{routes:?}");
    // The document does not describe itself.
    assert!(routes.remove(&("/openapi.json".to_owned(), "get".to_owned())));
    let paths = r.body["paths"].as_object().unwrap();
    let mut documented = BTreeSet::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            documented.insert((normalize(path), method.clone()));
            let responses = op["responses"].as_object().unwrap();
            if path.starts_with("/v1/") {
                assert!(responses.contains_key("401"), "{method} {path} lacks 401");
                assert!(responses.contains_key("403"), "{method} {path} lacks 403");
                assert_eq!(
                    op["security"],
                    json!([{"bearerAuth": []}]),
                    "{method} {path}"
                );
            } else {
                assert!(op.get("security").is_none(), "{method} {path}");
            }
            assert!(
                // Success is 2xx, or 101 for the WebSocket upgrade.
                responses.keys().any(|s| s.starts_with('2') || s == "101"),
                "{method} {path}"
            );
        }
    }
    for route in &routes {
        assert!(
            documented.contains(route),
            "{route:?} is served but not documented"
        );
    }
    let missing: Vec<_> = documented.difference(&routes).collect();
    assert!(missing.is_empty(), "documented but not served: {missing:?}");
    // Every documented /v1 operation really answers 401 without a token.
    for (path, method) in &routes {
        if path.starts_with("/v1/") {
            let concrete = path.replace("{}", "x");
            let r = node.call(&method.to_uppercase(), &concrete, None, None, &[]);
            assert_error(&r, 401, "unauthorized");
        }
    }
}
