//! `weft serve`: the compatibility policy at publish over real HTTP — every policy against
//! every kind of change, overrides, the node default, persistence, all-or-nothing
//! registrations, the dry run, tenant isolation, access and bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Node, Resp, assert_error, tempdir};
use serde_json::{Value, json};

/// `id@version` whose input `text` is at most `max_len` long: raising it is a compatible
/// (minor) change, lowering it a breaking (major) one; the description is documentation.
fn cap(id: &str, version: &str, max_len: u32, description: &str) -> Value {
    json!({"id": id, "version": version, "title": id, "description": description,
           "input_schema": {"type": "object",
                            "properties": {"text": {"type": "string", "maxLength": max_len}}}})
}

fn put_policy(node: &Node, token: &str, tenant: &str, body: &Value) -> Resp {
    node.send(
        "PUT",
        &format!("/v1/tenants/{tenant}/compatibility"),
        token,
        body,
    )
}

fn revision_of(node: &Node, token: &str, id: &str, version: &str) -> Option<String> {
    let r = node.get(&format!("/v1/capabilities/{id}/versions/{version}"), token);
    (r.status == 200).then(|| r.body["revision"].as_str().unwrap().to_owned())
}

/// The first refusal of a 409 `breaking_change`, after checking the envelope.
fn refusal(r: &Resp) -> &Value {
    assert_error(r, 409, "breaking_change");
    let refusals = r.body["error"]["details"]["refusals"].as_array().unwrap();
    assert!(!refusals.is_empty(), "{}", r.text);
    &refusals[0]
}

/// The kinds of change a publish can make over `id@1.0.0` (max 10, "D."), each with the
/// bump it needs and, per policy (semver, immutable, none), the bump allowed.
struct Scenario {
    name: &'static str,
    version: &'static str,
    max_len: u32,
    description: &'static str,
    required: &'static str,
    allowed: [&'static str; 3],
}

const SCENARIOS: [Scenario; 7] = [
    Scenario {
        name: "new minor, compatible",
        version: "1.1.0",
        max_len: 20,
        description: "D.",
        required: "minor",
        allowed: ["minor", "minor", "major"],
    },
    Scenario {
        name: "new minor, breaking",
        version: "1.1.0",
        max_len: 5,
        description: "D.",
        required: "major",
        allowed: ["minor", "minor", "major"],
    },
    Scenario {
        name: "patch, documentation only",
        version: "1.0.1",
        max_len: 10,
        description: "D, better.",
        required: "patch",
        allowed: ["patch", "patch", "major"],
    },
    Scenario {
        name: "patch, compatible schema change (needs a minor)",
        version: "1.0.1",
        max_len: 20,
        description: "D.",
        required: "minor",
        allowed: ["patch", "patch", "major"],
    },
    Scenario {
        name: "same version, documentation only",
        version: "1.0.0",
        max_len: 10,
        description: "D, better.",
        required: "patch",
        allowed: ["patch", "none", "major"],
    },
    Scenario {
        name: "same version, breaking",
        version: "1.0.0",
        max_len: 5,
        description: "D.",
        required: "major",
        allowed: ["patch", "none", "major"],
    },
    Scenario {
        name: "new major, breaking",
        version: "2.0.0",
        max_len: 5,
        description: "D.",
        required: "major",
        allowed: ["major", "major", "major"],
    },
];

const BUMPS: [&str; 4] = ["none", "patch", "minor", "major"];

fn rank(bump: &str) -> usize {
    BUMPS.iter().position(|b| *b == bump).unwrap()
}

#[test]
fn every_policy_judges_every_kind_of_change() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let operator = node.admin();
    for (p, policy) in ["semver", "immutable", "none"].into_iter().enumerate() {
        let tenant = format!("t-{policy}");
        let admin = node.tenant(&operator, &tenant);
        let r = put_policy(&node, &admin, &tenant, &json!({"default": policy}));
        assert_eq!(r.status, 200, "{}", r.text);
        for (i, s) in SCENARIOS.iter().enumerate() {
            let case = format!("{policy}: {}", s.name);
            let id = format!("cap{i}");
            let base = node.register(
                &admin,
                &format!("base{i}"),
                "n1",
                &[cap(&id, "1.0.0", 10, "D.")],
            );
            assert_eq!(base.status, 201, "{case}: {}", base.text);
            let base_revision = revision_of(&node, &admin, &id, "1.0.0").unwrap();
            let next = cap(&id, s.version, s.max_len, s.description);
            let r = node.register(&admin, &format!("next{i}"), "n1", &[next]);
            let allowed = rank(s.required) <= rank(s.allowed[p]);
            let check = if allowed {
                assert_eq!(r.status, 201, "{case}: {}", r.text);
                let outcome = &r.body["descriptors"][0];
                let status = if s.version == "1.0.0" {
                    "revised"
                } else {
                    "new"
                };
                assert_eq!(outcome["status"], status, "{case}");
                outcome["compatibility"].clone()
            } else {
                let refused = refusal(&r).clone();
                assert_eq!(refused["index"], 0, "{case}");
                assert_eq!(
                    (refused["id"].as_str(), refused["version"].as_str()),
                    (Some(id.as_str()), Some(s.version)),
                    "{case}"
                );
                // Nothing was written.
                assert_eq!(
                    revision_of(&node, &admin, &id, "1.0.0").as_deref(),
                    Some(base_revision.as_str()),
                    "{case}"
                );
                if s.version != "1.0.0" {
                    assert_eq!(revision_of(&node, &admin, &id, s.version), None, "{case}");
                }
                assert_error(
                    &node.get(&format!("/v1/providers/next{i}"), &admin),
                    404,
                    "not_found",
                );
                refused
            };
            assert_eq!(
                check["verdict"],
                if allowed { "allowed" } else { "refused" },
                "{case}"
            );
            assert_eq!(check["policy"], policy, "{case}");
            assert_eq!(check["policy_source"], "tenant", "{case}");
            assert_eq!(check["required_bump"], s.required, "{case}");
            assert_eq!(check["allowed_bump"], s.allowed[p], "{case}");
            assert_eq!(
                check["baseline"],
                json!({"id": id, "version": "1.0.0", "revision": base_revision}),
                "{case}"
            );
            let findings = check["findings"].as_array().unwrap();
            assert!(!findings.is_empty(), "{case}");
            for f in findings {
                for key in ["path", "change", "effect", "reason", "bump"] {
                    assert!(f[key].is_string(), "{case}: {key} in {f}");
                }
            }
            let breaking = findings.iter().any(|f| f["effect"] == "breaking");
            assert_eq!(breaking, s.required == "major", "{case}: {findings:?}");
        }
    }
}

#[test]
fn overrides_beat_the_tenant_default_which_beats_the_node_default() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--compatibility-policy", "none"]);
    let admin = node.admin();
    let r = node.get("/v1/tenants/default/compatibility", &admin);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body,
        json!({"tenant": "default", "default": null, "effective_default": "none",
               "overrides": {}, "max_overrides": 1000})
    );
    for id in ["free", "strict", "frozen"] {
        let r = node.register(
            &admin,
            &format!("p-{id}"),
            "n1",
            &[cap(id, "1.0.0", 10, "D.")],
        );
        assert_eq!(r.status, 201, "{}", r.text);
    }
    // The node default (none) lets a breaking re-publish through.
    let r = node.register(&admin, "p-free", "n1", &[cap("free", "1.0.0", 9, "D.")]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["descriptors"][0]["compatibility"]["policy_source"],
        "node"
    );

    let settings =
        json!({"default": "immutable", "overrides": {"free": "none", "strict": "semver"}});
    let r = put_policy(&node, &admin, "default", &settings);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["effective_default"], "immutable");
    assert_eq!(r.body["overrides"], settings["overrides"]);
    // `free`: its override (none) beats the tenant's immutable.
    let r = node.register(&admin, "p-free", "n1", &[cap("free", "1.0.0", 8, "D.")]);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.body["descriptors"][0]["compatibility"]["policy_source"],
        "override"
    );
    // `strict`: semver by override — documentation may change, the schema may not.
    let r = node.register(
        &admin,
        "p-strict",
        "n1",
        &[cap("strict", "1.0.0", 10, "D!")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let refused =
        refusal(&node.register(&admin, "p-strict", "n1", &[cap("strict", "1.0.0", 9, "D!")]))
            .clone();
    assert_eq!(
        (&refused["policy"], &refused["policy_source"]),
        (&json!("semver"), &json!("override"))
    );
    // `frozen`: the tenant default (immutable) refuses even documentation.
    let refused = refusal(&node.register(
        &admin,
        "p-frozen",
        "n1",
        &[cap("frozen", "1.0.0", 10, "D!")],
    ))
    .clone();
    assert_eq!(
        (&refused["policy"], &refused["policy_source"]),
        (&json!("immutable"), &json!("tenant"))
    );
    assert_eq!(refused["allowed_bump"], "none");
    // Back to the node default: an empty document clears the tenant's settings.
    let r = put_policy(&node, &admin, "default", &json!({}));
    assert_eq!(
        (
            r.body["default"].clone(),
            r.body["effective_default"].clone()
        ),
        (Value::Null, json!("none"))
    );
    let r = node.register(
        &admin,
        "p-frozen",
        "n1",
        &[cap("frozen", "1.0.0", 10, "D!")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn settings_survive_a_restart_and_keep_refusing() {
    let dir = tempdir();
    let mut node = Node::start(dir.path(), &[]);
    let operator = node.admin();
    let admin = node.tenant(&operator, "acme");
    let settings = json!({"default": "none", "overrides": {"echo": "immutable"}});
    assert_eq!(put_policy(&node, &admin, "acme", &settings).status, 200);
    let r = node.register(&admin, "p1", "n1", &[cap("echo", "1.0.0", 10, "D.")]);
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(node.stop_term().is_some_and(|s| s.success()));
    let node = Node::start(dir.path(), &[]);
    let r = node.get("/v1/tenants/acme/compatibility", &admin);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["default"], "none");
    assert_eq!(r.body["overrides"], settings["overrides"]);
    let refused =
        refusal(&node.register(&admin, "p1", "n1", &[cap("echo", "1.0.0", 10, "D!")])).clone();
    assert_eq!(refused["policy"], "immutable");
    let r = node.register(
        &admin,
        "p2",
        "n1",
        &[
            cap("other", "1.0.0", 10, "D."),
            cap("other", "1.0.1", 1, "D."),
        ],
    );
    assert_eq!(
        r.status, 201,
        "the tenant default (none) still applies: {}",
        r.text
    );
}

#[test]
fn a_refused_registration_stores_nothing_and_names_every_refused_descriptor() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let operator = node.admin();
    let admin = node.tenant(&operator, "acme");
    let r = node.register(
        &admin,
        "p1",
        "n1",
        &[cap("a", "1.0.0", 10, "A."), cap("b", "1.0.0", 10, "B.")],
    );
    assert_eq!(r.status, 201, "{}", r.text);
    // Events 1–3: two capabilities published, one provider registered.
    let body = [
        cap("a", "1.1.0", 20, "A."),
        cap("b", "1.0.0", 5, "B."),
        cap("c", "1.0.0", 10, "C."),
        cap("a", "1.0.0", 10, "A, better."),
        cap("b", "1.1.0", 1, "B."),
    ];
    let r = node.register(&admin, "p1", "n1", &body);
    assert_error(&r, 409, "breaking_change");
    let refused: Vec<(u64, String)> = r.body["error"]["details"]["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["index"].as_u64().unwrap(),
                format!(
                    "{}@{}",
                    x["id"].as_str().unwrap(),
                    x["version"].as_str().unwrap()
                ),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [(1, "b@1.0.0".to_owned()), (4, "b@1.1.0".to_owned())]
    );
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("b@1.0.0 needs a major bump"), "{message}");
    assert!(message.ends_with("nothing was published"), "{message}");
    // Nothing of the five landed, not even the acceptable ones.
    assert_eq!(revision_of(&node, &admin, "a", "1.1.0"), None);
    assert_eq!(revision_of(&node, &admin, "c", "1.0.0"), None);
    let a = node.get("/v1/capabilities/a/versions/1.0.0", &admin);
    assert_eq!(a.body["history"].as_array().unwrap().len(), 1);
    let provider = node.get("/v1/providers/p1", &admin);
    assert_eq!(provider.body["descriptors"].as_array().unwrap().len(), 2);
    // …and no event: the next one is the next accepted publish's.
    let r = node.register(&admin, "p2", "n1", &[cap("z", "1.0.0", 10, "Z.")]);
    assert_eq!(r.status, 201);
    let mut feed = node.events(&admin, &[], "?after=3");
    let next = feed.take(1).remove(0);
    assert_eq!((next.id, next.event.as_str()), (4, "capability.published"));
    assert_eq!(next.data["data"]["id"], "z");
}

#[test]
fn the_dry_run_answers_like_a_publish_and_writes_nothing() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let operator = node.admin();
    let admin = node.tenant(&operator, "acme");
    let publisher = node.token(&admin, None, &["capabilities:publish"]);
    let check = |descriptor: Value| {
        node.send(
            "POST",
            "/v1/compatibility/check",
            &publisher,
            &json!({"descriptor": descriptor}),
        )
    };
    let first = check(cap("a", "1.0.0", 10, "A."));
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(
        first.body,
        json!({"verdict": "allowed", "policy": "semver", "policy_source": "node", "baseline": null,
               "required_bump": "none", "allowed_bump": "major", "findings": []})
    );
    assert_error(&node.get("/v1/capabilities/a", &admin), 404, "not_found");
    assert_eq!(
        node.register(&admin, "p1", "n1", &[cap("a", "1.0.0", 10, "A.")])
            .status,
        201
    );
    let revision = revision_of(&node, &admin, "a", "1.0.0").unwrap();
    let refused = check(cap("a", "1.0.1", 20, "A."));
    assert_eq!(refused.status, 200, "{}", refused.text);
    assert_eq!(refused.body["verdict"], "refused");
    assert_eq!(
        refused.body["baseline"],
        json!({"id": "a", "version": "1.0.0", "revision": revision})
    );
    assert_eq!(
        (
            &refused.body["required_bump"],
            &refused.body["allowed_bump"]
        ),
        (&json!("minor"), &json!("patch"))
    );
    // The publish answers the same verdict, with the same check in its details.
    let published = node.register(&admin, "p2", "n1", &[cap("a", "1.0.1", 20, "A.")]);
    let mut expected = refused.body.clone();
    let details = refusal(&published);
    for key in ["index", "id", "version"] {
        expected[key] = details[key].clone();
    }
    assert_eq!(details, &expected);
    // Nothing was written by either.
    assert_eq!(revision_of(&node, &admin, "a", "1.0.1"), None);
    let allowed = check(cap("a", "1.1.0", 20, "A."));
    assert_eq!(allowed.body["verdict"], "allowed");
    assert_eq!(revision_of(&node, &admin, "a", "1.1.0"), None);
    // A back-fill is judged against the next version too.
    assert_eq!(
        node.register(&admin, "p3", "n1", &[cap("a", "1.2.0", 30, "A.")])
            .status,
        201
    );
    let between = check(cap("a", "1.1.0", 40, "A."));
    assert_eq!(between.body["verdict"], "refused");
    assert_eq!(between.body["successor"]["successor"]["version"], "1.2.0");
    assert_eq!(between.body["successor"]["verdict"], "refused");
}

#[test]
fn tenants_are_isolated_and_only_admins_manage_policies() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let operator = node.admin();
    let acme = node.tenant(&operator, "acme");
    let globex = node.tenant(&operator, "globex");
    assert_eq!(
        put_policy(&node, &acme, "acme", &json!({"default": "none"})).status,
        200
    );
    assert_eq!(
        node.register(&acme, "p1", "n1", &[cap("echo", "1.0.0", 10, "E.")])
            .status,
        201
    );
    // Another tenant's settings are not found, never forbidden; the operator sees them.
    assert_error(
        &node.get("/v1/tenants/acme/compatibility", &globex),
        404,
        "not_found",
    );
    assert_error(
        &put_policy(&node, &globex, "acme", &json!({})),
        404,
        "not_found",
    );
    assert_error(
        &node.get("/v1/tenants/ghost/compatibility", &operator),
        404,
        "not_found",
    );
    assert_error(
        &put_policy(&node, &operator, "ghost", &json!({})),
        404,
        "not_found",
    );
    assert_eq!(
        node.get("/v1/tenants/acme/compatibility", &operator).body["default"],
        "none"
    );
    assert_eq!(
        node.get("/v1/tenants/globex/compatibility", &globex).body["default"],
        Value::Null
    );
    // globex sees neither acme's capability nor its policy: a first version, under semver.
    let r = node.send(
        "POST",
        "/v1/compatibility/check",
        &globex,
        &json!({"descriptor": cap("echo", "1.0.0", 1, "E.")}),
    );
    assert_eq!(
        (&r.body["baseline"], &r.body["policy"]),
        (&Value::Null, &json!("semver"))
    );
    // Without the admin scope: 403, for one's own tenant and for others alike.
    let publisher = node.token(&acme, None, &["capabilities:publish"]);
    let reader = node.token(&acme, None, &["capabilities:read", "capabilities:call"]);
    for token in [&publisher, &reader] {
        assert_error(
            &node.get("/v1/tenants/acme/compatibility", token),
            403,
            "forbidden",
        );
        assert_error(
            &put_policy(&node, token, "acme", &json!({})),
            403,
            "forbidden",
        );
        assert_error(
            &node.get("/v1/tenants/globex/compatibility", token),
            403,
            "forbidden",
        );
    }
    // The dry run needs the publish scope, like publishing.
    let body = json!({"descriptor": cap("echo", "1.0.1", 10, "E.")});
    assert_error(
        &node.send("POST", "/v1/compatibility/check", &reader, &body),
        403,
        "forbidden",
    );
    assert_eq!(
        node.send("POST", "/v1/compatibility/check", &publisher, &body)
            .status,
        200
    );
}

/// `(pointer, code)` of every problem in a 400 `invalid_request`, sorted.
fn problems(r: &Resp) -> Vec<(String, String)> {
    assert_error(r, 400, "invalid_request");
    let mut found: Vec<(String, String)> = r.body["error"]["details"]["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems: {}", r.text))
        .iter()
        .map(|p| {
            (
                p["pointer"].as_str().unwrap().to_owned(),
                p["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

fn pair(pointer: &str, code: &str) -> (String, String) {
    (pointer.to_owned(), code.to_owned())
}

#[test]
fn bad_settings_and_descriptors_are_typed_errors_with_pointers() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--max-compatibility-overrides", "2"]);
    let admin = node.admin();
    let put = |body: &Value| put_policy(&node, &admin, "default", body);
    assert_eq!(
        problems(&put(
            &json!({"default": "strict", "overrides": {"Echo": "none", "ok": "sometimes", "n": 1}})
        )),
        [
            pair("/default", "unknown_policy"),
            pair("/overrides/Echo", "invalid_capability_id"),
            pair("/overrides/n", "invalid_type"),
            pair("/overrides/ok", "unknown_policy")
        ]
    );
    assert_eq!(
        problems(&put(&json!({"default": ["semver"], "overrides": "semver"}))),
        [
            pair("/default", "invalid_type"),
            pair("/overrides", "invalid_type")
        ]
    );
    assert_error(
        &put(&json!({"default": "semver", "extra": 1})),
        400,
        "unknown_field",
    );
    let raw = node.call(
        "PUT",
        "/v1/tenants/default/compatibility",
        Some(&admin),
        Some(b"{"),
        &[],
    );
    assert_error(&raw, 400, "invalid_json");
    // The override limit, at its boundary.
    let two = json!({"overrides": {"a": "none", "b": "none"}});
    assert_eq!(put(&two).status, 200);
    let three = json!({"overrides": {"a": "none", "b": "none", "c": "none"}});
    let r = put(&three);
    assert_eq!(problems(&r), [pair("/overrides", "too_many_overrides")]);
    assert_eq!(r.body["error"]["details"]["limit"], 2);
    assert_eq!(
        node.get("/v1/tenants/default/compatibility", &admin).body["overrides"],
        two["overrides"]
    );
    // The dry run checks the descriptor as publishing does.
    let r = node.send(
        "POST",
        "/v1/compatibility/check",
        &admin,
        &json!({"descriptor": {"id": "Bad", "version": "1.0"}}),
    );
    assert_error(&r, 422, "invalid_descriptor");
    let pointers: Vec<&str> = r.body["error"]["details"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pointer"].as_str().unwrap())
        .collect();
    assert!(
        pointers.contains(&"/descriptor/id") && pointers.contains(&"/descriptor/version"),
        "{pointers:?}"
    );
    assert_error(
        &node.send("POST", "/v1/compatibility/check", &admin, &json!({})),
        400,
        "invalid_request",
    );
    assert_error(
        &node.send(
            "POST",
            "/v1/compatibility/check",
            &admin,
            &json!({"descriptor": {}, "policy": "none"}),
        ),
        400,
        "unknown_field",
    );
}

#[test]
fn the_node_default_comes_from_flag_environment_or_file_and_is_validated() {
    let dir = tempdir();
    let config = dir.path().join("weft.toml");
    std::fs::write(
        &config,
        "compatibility_policy = \"immutable\"\nmax_compatibility_overrides = 7\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let data = dir.path().join("data");
    {
        let node = Node::start(&data, &["--config", config]);
        let r = node.get("/v1/tenants/default/compatibility", &node.admin());
        assert_eq!(
            (&r.body["effective_default"], &r.body["max_overrides"]),
            (&json!("immutable"), &json!(7))
        );
    }
    {
        // The flag beats the file.
        let node = Node::start(
            &data,
            &["--config", config, "--compatibility-policy", "none"],
        );
        let r = node.get("/v1/tenants/default/compatibility", &node.admin());
        assert_eq!(r.body["effective_default"], "none");
    }
    let (status, stderr) =
        harness::serve_expecting_exit(&data, &["--compatibility-policy", "strict"]);
    assert!(!status.success());
    assert!(
        stderr.contains("invalid compatibility policy \"strict\""),
        "{stderr}"
    );
    let (status, stderr) =
        harness::serve_expecting_exit(&data, &["--max-compatibility-overrides", "100001"]);
    assert!(!status.success());
    assert!(stderr.contains("max_compatibility_overrides"), "{stderr}");
    std::fs::write(
        dir.path().join("bad.toml"),
        "compatibility_policy = \"loose\"\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.toml");
    let (status, stderr) =
        harness::serve_expecting_exit(&data, &["--config", bad.to_str().unwrap()]);
    assert!(!status.success());
    assert!(
        stderr.contains("1:") && stderr.contains("loose"),
        "{stderr}"
    );
}

#[test]
fn under_none_the_findings_are_in_the_response_and_the_change_feed() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &["--compatibility-policy", "none"]);
    let admin = node.admin();
    assert_eq!(
        node.register(&admin, "p1", "n1", &[cap("a", "1.0.0", 10, "A.")])
            .status,
        201
    );
    let r = node.register(&admin, "p1", "n1", &[cap("a", "1.0.0", 2, "A.")]);
    assert_eq!(r.status, 200, "{}", r.text);
    let check = &r.body["descriptors"][0]["compatibility"];
    assert_eq!(
        (&check["verdict"], &check["required_bump"]),
        (&json!("allowed"), &json!("major"))
    );
    // Events 1–2: published, registered; 3: revised, with the same check.
    let mut feed = node.events(&admin, &[], "?after=2");
    let revised = feed.take(1).remove(0);
    assert_eq!(revised.event, "capability.revised");
    assert_eq!(&revised.data["data"]["compatibility"], check);
}
