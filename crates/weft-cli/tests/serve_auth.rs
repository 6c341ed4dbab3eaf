//! `weft serve`: authentication, scopes, tenant isolation and request ids, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Node, Resp, assert_error, descriptor, tempdir};
use serde_json::json;

/// What a route needs beyond a valid token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Read,
    Publish,
    Admin,
    Operator,
}

/// Every `/v1` route registered in `app.rs` except the change feed's success path, with a
/// body where it takes one.
fn routes() -> Vec<(&'static str, &'static str, Option<&'static str>, Need)> {
    let provider = r#"{"node_id":"n1","descriptors":[]}"#;
    vec![
        ("GET", "/v1/capabilities", None, Need::Read),
        ("GET", "/v1/capabilities/echo", None, Need::Read),
        (
            "GET",
            "/v1/capabilities/echo/versions/1.0.0",
            None,
            Need::Read,
        ),
        ("PUT", "/v1/providers/p-auth", Some(provider), Need::Publish),
        ("GET", "/v1/providers/p1", None, Need::Read),
        (
            "POST",
            "/v1/providers/p-auth/unregister",
            None,
            Need::Publish,
        ),
        ("GET", "/v1/nodes", None, Need::Read),
        ("GET", "/v1/nodes/n1", None, Need::Read),
        ("GET", "/v1/agents", None, Need::Read),
        ("GET", "/v1/agents/designer", None, Need::Read),
        ("GET", "/v1/events?after=0", None, Need::Read),
        (
            "POST",
            "/v1/tokens",
            Some(r#"{"name":"x","scopes":["capabilities:read"]}"#),
            Need::Admin,
        ),
        ("GET", "/v1/tokens", None, Need::Admin),
        (
            "POST",
            "/v1/tokens/tok_0000000000000000/revoke",
            None,
            Need::Admin,
        ),
        (
            "POST",
            "/v1/tenants",
            Some(r#"{"id":"t-from-matrix"}"#),
            Need::Operator,
        ),
        ("GET", "/v1/tenants", None, Need::Operator),
    ]
}

fn raw(node: &Node, method: &str, path: &str, body: Option<&str>, auth: Option<&str>) -> Resp {
    let headers: Vec<(&str, &str)> = auth.map(|a| ("authorization", a)).into_iter().collect();
    node.call(method, path, None, body.map(str::as_bytes), &headers)
}

fn seeded() -> (tempfile::TempDir, Node, String) {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let r = node.register(&admin, "p1", "n1", &[descriptor("echo", "1.0.0", "Echo")]);
    assert_eq!(r.status, 201, "{}", r.text);
    (dir, node, admin)
}

#[test]
fn every_v1_route_answers_401_without_a_usable_token() {
    let (_dir, node, admin) = seeded();
    let (revoked, revoked_id) = node.token_with_id(&admin, None, &["admin"]);
    assert_eq!(node.get("/v1/nodes", &revoked).status, 200);
    let r = node.call(
        "POST",
        &format!("/v1/tokens/{revoked_id}/revoke"),
        Some(&admin),
        None,
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["revokedAt"].is_string(), "{}", r.text);

    let bad_auth = [
        format!("Bearer {revoked}"),
        "Bearer weft_not-a-real-token".to_owned(),
        "Basic YWRtaW46YWRtaW4=".to_owned(),
        "Bearer".to_owned(),
        admin.clone(),
        String::new(),
    ];
    for (method, path, body, _) in routes() {
        let r = raw(&node, method, path, body, None);
        assert_error(&r, 401, "unauthorized");
        assert_eq!(
            r.header("www-authenticate"),
            Some("Bearer"),
            "{method} {path}"
        );
        for auth in &bad_auth {
            let r = raw(&node, method, path, body, Some(auth));
            assert_error(&r, 401, "unauthorized");
            assert_eq!(
                r.header("www-authenticate"),
                Some("Bearer error=\"invalid_token\""),
                "{method} {path} with {auth:?}"
            );
        }
    }
    // The admin token is untouched by all that.
    assert_eq!(node.get("/v1/capabilities", &admin).status, 200);
}

#[test]
fn each_scope_guarded_route_refuses_the_wrong_scope_with_403() {
    let (_dir, node, admin) = seeded();
    let read = node.token(&admin, None, &["capabilities:read"]);
    let call = node.token(&admin, None, &["capabilities:call"]);
    let publish = node.token(&admin, None, &["capabilities:publish"]);
    let tenant_admin = node.tenant(&admin, "acme");
    for (method, path, body, need) in routes() {
        let with = |token: &str| node.call(method, path, Some(token), body.map(str::as_bytes), &[]);
        let refused: Vec<&str> = match need {
            Need::Read => vec![&call, &publish],
            Need::Publish => vec![&read, &call],
            Need::Admin => vec![&read, &call, &publish],
            Need::Operator => vec![&read, &call, &publish, &tenant_admin],
        };
        for token in refused {
            let r = with(token);
            assert_error(&r, 403, "forbidden");
            assert!(r.header("www-authenticate").is_none(), "{method} {path}");
        }
        if path.starts_with("/v1/events") {
            continue; // A granted stream never ends; serve_events covers it.
        }
        let granted = match need {
            Need::Read => read.as_str(),
            Need::Publish => publish.as_str(),
            Need::Admin => tenant_admin.as_str(),
            Need::Operator => admin.as_str(),
        };
        let r = with(granted);
        assert!(
            ![401, 403].contains(&r.status),
            "{method} {path}: {} {}",
            r.status,
            r.text
        );
    }
    // Exact answers for the granted calls that have fixed outcomes.
    assert_eq!(
        node.get("/v1/capabilities/echo/versions/1.0.0", &read)
            .status,
        200
    );
    assert_error(&node.get("/v1/agents/designer", &read), 404, "not_found");
    let r = node.register(&publish, "p-auth", "n2", &[]);
    assert_eq!(r.status, 201, "{}", r.text);
    let r = node.call(
        "POST",
        "/v1/providers/p-auth/unregister",
        Some(&publish),
        None,
        &[],
    );
    assert_eq!(
        r.body,
        json!({"provider_id": "p-auth", "unregistered": true})
    );
    assert_eq!(node.get("/v1/tokens", &tenant_admin).status, 200);
}

#[test]
fn another_tenants_resources_are_404_never_403() {
    let (_dir, node, operator) = seeded();
    let acme = node.tenant(&operator, "acme");
    let acme_read = node.token(&acme, None, &["capabilities:read"]);
    let default_token_id = node.get("/v1/tokens", &operator).body["tokens"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for token in [&acme, &acme_read] {
        for path in [
            "/v1/providers/p1",
            "/v1/capabilities/echo",
            "/v1/capabilities/echo/versions/1.0.0",
            "/v1/nodes/n1",
            "/v1/capabilities?node_id=n1",
        ] {
            assert_error(&node.get(path, token), 404, "not_found");
        }
        let r = node.get("/v1/capabilities", token);
        assert_eq!(r.status, 200);
        assert_eq!(r.body["capabilities"], json!([]));
        assert_eq!(node.get("/v1/nodes", token).body["nodes"], json!([]));
    }
    let revoke = format!("/v1/tokens/{default_token_id}/revoke");
    assert_error(
        &node.call("POST", &revoke, Some(&acme), None, &[]),
        404,
        "not_found",
    );
    assert_error(
        &node.get("/v1/tokens?tenant=default", &acme),
        404,
        "not_found",
    );
    let r = node.send(
        "POST",
        "/v1/tokens",
        &acme,
        &json!({"name": "steal", "scopes": ["admin"], "tenant": "default"}),
    );
    assert_error(&r, 404, "not_found");
    // Unregistering another tenant's provider id touches nothing.
    let r = node.call(
        "POST",
        "/v1/providers/p1/unregister",
        Some(&acme),
        None,
        &[],
    );
    assert_eq!(r.body, json!({"provider_id": "p1", "unregistered": false}));
    assert_eq!(node.get("/v1/providers/p1", &operator).status, 200);
    assert_eq!(node.get("/v1/capabilities/echo", &operator).status, 200);
    // The operator's token still works, and the operator sees acme's tokens.
    let r = node.get("/v1/tokens?tenant=acme", &operator);
    assert_eq!(r.status, 200);
    assert_eq!(r.body["tokens"].as_array().unwrap().len(), 2);
    assert_error(
        &node.get("/v1/tokens?tenant=nope", &operator),
        404,
        "not_found",
    );
}

#[test]
fn tokens_are_listed_without_secrets_and_revocation_is_idempotent() {
    let (_dir, node, admin) = seeded();
    let r = node.send(
        "POST",
        "/v1/tokens",
        &admin,
        &json!({"name": "ci", "scopes": ["capabilities:read", "capabilities:read"]}),
    );
    assert_eq!(r.status, 201);
    let secret = r.body["token"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("weft_"), "{secret}");
    let id = r.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("tok_") && id.len() == 20, "{id}");
    assert_eq!(r.body["scopes"], json!(["capabilities:read"]));
    assert_eq!(r.body["tenant"], "default");
    let listed = node.get("/v1/tokens", &admin);
    for token in listed.body["tokens"].as_array().unwrap() {
        let keys: Vec<&String> = token.as_object().unwrap().keys().collect();
        for key in &keys {
            assert!(
                ["id", "tenant", "name", "scopes", "createdAt", "revokedAt"]
                    .contains(&key.as_str()),
                "{key} in {token}"
            );
        }
    }
    assert!(!listed.text.contains(&secret));
    let path = format!("/v1/tokens/{id}/revoke");
    let first = node.call("POST", &path, Some(&admin), None, &[]);
    assert_eq!(first.status, 200, "{}", first.text);
    let second = node.call("POST", &path, Some(&admin), None, &[]);
    assert_eq!(second.status, 200);
    assert_eq!(first.body["revokedAt"], second.body["revokedAt"]);
    assert_error(&node.get("/v1/nodes", &secret), 401, "unauthorized");
}

#[test]
fn request_ids_are_honoured_or_minted_and_match_the_envelope() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    // `req-` + 16 lowercase hex digits (per process) + `-` + a decimal counter.
    let is_minted = |id: &str| {
        let Some((prefix, counter)) = id.strip_prefix("req-").and_then(|r| r.split_once('-'))
        else {
            return false;
        };
        prefix.len() == 16
            && prefix
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && !counter.is_empty()
            && counter.bytes().all(|b| b.is_ascii_digit())
    };
    // Minted on success and on errors, different each time.
    let a = node.call("GET", "/healthz", None, None, &[]);
    let b = node.call("GET", "/v1/nodes", None, None, &[]);
    let c = node.get("/v1/nope", &admin);
    let ids: Vec<&str> = [&a, &b, &c]
        .iter()
        .map(|r| r.header("x-request-id").unwrap())
        .collect();
    assert!(ids.iter().all(|id| is_minted(id)), "{ids:?}");
    assert!(ids[0] != ids[1] && ids[1] != ids[2]);
    assert_error(&b, 401, "unauthorized");
    assert_error(&c, 404, "not_found");
    // Honoured when sane: success, 401, 404, 405, 400.
    let max = "r".repeat(128);
    for sent in ["trace-1", "a!~#:/@x", max.as_str()] {
        let h = [("x-request-id", sent)];
        for (method, path, token) in [
            ("GET", "/readyz", None),
            ("GET", "/v1/capabilities", None),
            ("GET", "/v1/providers/nope", Some(admin.as_str())),
            ("DELETE", "/v1/capabilities", Some(admin.as_str())),
            ("GET", "/v1/capabilities?limit=0", Some(admin.as_str())),
        ] {
            let r = node.call(method, path, token, None, &h);
            assert_eq!(r.header("x-request-id"), Some(sent), "{method} {path}");
            if r.status >= 400 {
                assert_eq!(r.body["error"]["requestId"], sent);
            }
        }
    }
    // Refused (too long, a space, empty): a fresh one is minted instead.
    let long = "r".repeat(129);
    for sent in [long.as_str(), "has space", ""] {
        let r = node.call("GET", "/v1/tenants", None, None, &[("x-request-id", sent)]);
        let got = r.header("x-request-id").unwrap();
        assert!(is_minted(got), "{sent:?} -> {got:?}");
        assert_eq!(r.body["error"]["requestId"], got);
    }
}

#[test]
fn idempotent_replay_still_requires_the_routes_scope() {
    let (_dir, node, admin) = seeded();
    let read = node.token(&admin, None, &["capabilities:read"]);
    let body = br#"{"name":"deploy","scopes":["admin"]}"#;
    let key = [("idempotency-key", "create-deploy-token")];
    let first = node.call("POST", "/v1/tokens", Some(&admin), Some(body), &key);
    assert_eq!(first.status, 201);
    let replay = node.call("POST", "/v1/tokens", Some(&read), Some(body), &key);
    assert!(
        !replay.text.contains(first.body["token"].as_str().unwrap()),
        "a read-only token obtained an admin secret: {} {}",
        replay.status,
        replay.text
    );
    assert_error(&replay, 403, "forbidden");
}

#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let (_dir, node, admin) = seeded();
    for scheme in ["BEARER", "BeArEr"] {
        let auth = format!("{scheme} {admin}");
        let r = raw(&node, "GET", "/v1/capabilities", None, Some(&auth));
        assert_eq!(r.status, 200, "{scheme}: {}", r.text);
    }
}
