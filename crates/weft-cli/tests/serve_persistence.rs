//! `weft serve`: what survives a restart (SIGTERM) and a crash (SIGKILL) on the same data
//! directory, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use harness::{Node, agent, assert_error, descriptor, request, serve_expecting_exit, tempdir};
use serde_json::{Value, json};

#[cfg(unix)]
#[test]
fn the_admin_token_and_url_files_are_written_for_the_operator() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    let data = dir.path().join("nested/data");
    let node = Node::start(&data, &[]);
    let printed = node
        .admin_token
        .clone()
        .expect("a first start prints the token");
    assert!(
        printed.starts_with("weft_") && printed.len() == 48,
        "{printed}"
    );
    let file = data.join("admin.token");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{printed}\n")
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "admin.token mode {mode:o}");
    assert_eq!(
        std::fs::read_to_string(data.join("weft.url")).unwrap(),
        format!("{}\n", node.url)
    );
    assert!(node.url.starts_with("http://127.0.0.1:"), "{}", node.url);
    assert!(data.join("weft.redb").is_file());
    let r = node.get("/v1/tokens", &printed);
    assert_eq!(r.body["tokens"][0]["name"], "bootstrap admin");
    assert_eq!(r.body["tokens"][0]["scopes"], json!(["admin"]));
}

#[test]
fn everything_survives_a_sigterm_restart_and_ids_continue() {
    let dir = tempdir();
    let mut first = Node::start(dir.path(), &[]);
    let admin = first.admin();
    let acme = first.tenant(&admin, "acme");
    let (acme_read, acme_read_id) = first.token_with_id(&acme, None, &["capabilities:read"]);
    let (revoked, revoked_id) = first.token_with_id(&admin, None, &["capabilities:read"]);
    let r = first.call(
        "POST",
        &format!("/v1/tokens/{revoked_id}/revoke"),
        Some(&admin),
        None,
        &[],
    );
    assert_eq!(r.status, 200);
    let v1 = descriptor("echo", "1.0.0", "Echo");
    let mut v2 = v1.clone();
    v2["title"] = json!("Echo, revised");
    let rev_a = first
        .register(&admin, "p1", "n1", std::slice::from_ref(&v1))
        .body["descriptors"][0]["revision"]
        .clone();
    let body = serde_json::to_vec(&json!({"node_id": "n1", "descriptors": [v2]})).unwrap();
    let key = [("idempotency-key", "revise-echo")];
    let revised = first.call("PUT", "/v1/providers/p1", Some(&admin), Some(&body), &key);
    assert_eq!(revised.status, 200);
    let rev_b = revised.body["descriptors"][0]["revision"].clone();
    assert_eq!(
        first
            .register(
                &acme,
                "acme-p",
                "acme-n",
                &[descriptor("acme-cap", "2.0.0", "A")]
            )
            .status,
        201
    );
    // Default tenant: events 1-4; acme: events 1-2.
    let before_list = first.get("/v1/capabilities", &admin).body;
    let before_provider = first.get("/v1/providers/p1", &admin).body;

    let status = first.stop_term().expect("SIGTERM exits within 15 s");
    assert_eq!(
        status.code(),
        Some(0),
        "{status}; stderr:\n{}",
        first.stderr()
    );
    assert!(
        first.stderr().contains("stopped; store closed"),
        "{}",
        first.stderr()
    );
    drop(first);

    let second = Node::start(dir.path(), &[]);
    assert_eq!(
        second.admin_token, None,
        "a restart prints no new admin token"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("weft.url")).unwrap(),
        format!("{}\n", second.url)
    );
    assert_eq!(second.admin(), admin, "admin.token is left as it was");
    // Tokens: valid ones work, the revoked one stays revoked.
    assert_eq!(second.get("/v1/nodes", &admin).status, 200);
    assert_eq!(second.get("/v1/agents", &acme_read).status, 200);
    assert_error(&second.get("/v1/nodes", &revoked), 401, "unauthorized");
    let tokens = second.get("/v1/tokens?tenant=acme", &admin).body;
    let ids: Vec<&str> = tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&acme_read_id.as_str()), "{ids:?}");
    // Tenants, providers, revisions.
    let tenants = second.get("/v1/tenants", &admin).body;
    assert_eq!(tenants["tenants"].as_array().unwrap().len(), 2);
    assert_eq!(second.get("/v1/capabilities", &admin).body, before_list);
    assert_eq!(second.get("/v1/providers/p1", &admin).body, before_provider);
    let view = second
        .get("/v1/capabilities/echo/versions/1.0.0", &admin)
        .body;
    assert_eq!(view["revision"], rev_b);
    let history: Vec<&Value> = view["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["revision"])
        .collect();
    assert_eq!(history, [&rev_a, &rev_b]);
    assert_eq!(
        second.get("/v1/capabilities/acme-cap", &acme).body["versions"][0]["version"],
        "2.0.0"
    );
    assert_error(
        &second.get("/v1/capabilities/acme-cap", &admin),
        404,
        "not_found",
    );
    // The stored idempotent response replays after the restart.
    let replay = second.call("PUT", "/v1/providers/p1", Some(&admin), Some(&body), &key);
    assert_eq!(
        (replay.status, replay.header("x-idempotent-replay")),
        (200, Some("true"))
    );
    assert_eq!(replay.text, revised.text);
    // Events: the history is there, and new ones continue with the next id per tenant.
    let mut feed = second.events(&admin, &[], "?after=0");
    let old: Vec<u64> = feed.take(4).iter().map(|e| e.id).collect();
    assert_eq!(old, [1, 2, 3, 4]);
    let mut acme_feed = second.events(&acme, &[], "?after=0");
    assert_eq!(
        acme_feed.take(2).iter().map(|e| e.id).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(
        second
            .register(&admin, "p2", "n2", &[descriptor("new", "1.0.0", "N")])
            .status,
        201
    );
    let fresh = feed.take(2);
    assert_eq!((fresh[0].id, fresh[1].id), (5, 6));
    assert_eq!(fresh[0].event, "capability.published");
    assert!(acme_feed.next(Duration::from_millis(300)).is_none());
    assert_eq!(second.register(&acme, "acme-q", "acme-n", &[]).status, 201);
    assert_eq!(acme_feed.take(1)[0].id, 3);
}

#[test]
fn a_second_node_on_the_same_data_dir_is_refused_and_the_first_keeps_serving() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let (status, stderr) = serve_expecting_exit(dir.path(), &[]);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("weft serve: registry: "), "{stderr}");
    assert_eq!(node.get("/v1/nodes", &admin).status, 200);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("weft.url")).unwrap(),
        format!("{}\n", node.url)
    );
}

/// How many rounds of the SIGKILL storm to run.
fn rounds() -> usize {
    std::env::var("WEFT_SIGKILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// Counts the default tenant's served capabilities by walking the listing.
fn count_capabilities(node: &Node, token: &str) -> usize {
    let mut count = 0;
    let mut cursor = String::new();
    for _ in 0..1000 {
        let r = node.get(&format!("/v1/capabilities?limit=100{cursor}"), token);
        assert_eq!(r.status, 200, "{}", r.text);
        count += r.body["capabilities"].as_array().unwrap().len();
        match r.body["nextCursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return count,
        }
    }
    panic!("runaway pagination");
}

#[test]
fn acknowledged_publishes_survive_sigkill() {
    let dir = tempdir();
    let mut node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    // provider id → the revision its 2xx answer acknowledged.
    let mut acked: BTreeMap<String, String> = BTreeMap::new();
    for round in 0..rounds() {
        let delay = Duration::from_millis(200 + ((round as u64 * 173 + 57) % 400));
        let url = node.url.clone();
        let round_acks = Mutex::new(Vec::new());
        let stop_at = Instant::now() + delay;
        std::thread::scope(|s| {
            for thread in 0..4 {
                let (url, admin, round_acks) = (&url, &admin, &round_acks);
                s.spawn(move || {
                    let agent = agent(Duration::from_secs(10));
                    // Bounded: at most 5,000 requests or 15 s per thread.
                    let deadline = Instant::now() + Duration::from_secs(15);
                    for i in 0..5000 {
                        if Instant::now() > deadline {
                            break;
                        }
                        let provider = format!("r{round}-t{thread}-{i}");
                        let d = descriptor(&format!("cap-{provider}"), "1.0.0", "Storm");
                        let body = serde_json::to_vec(
                            &json!({"node_id": format!("node-{thread}"), "descriptors": [d]}),
                        )
                        .unwrap();
                        let path = format!("{url}/v1/providers/{provider}");
                        match request(&agent, "PUT", &path, Some(admin), Some(&body), &[]) {
                            Ok(r) if (200..300).contains(&r.status) => {
                                let revision = r.body["descriptors"][0]["revision"]
                                    .as_str()
                                    .unwrap()
                                    .to_owned();
                                round_acks.lock().unwrap().push((provider, revision));
                            }
                            Ok(r) => panic!("{provider}: {} {}", r.status, r.text),
                            // The node was killed: this request may or may not have landed.
                            Err(_) => break,
                        }
                    }
                });
            }
            std::thread::sleep(stop_at.saturating_duration_since(Instant::now()));
            node.kill9();
        });
        let round_acks = round_acks.into_inner().unwrap();
        assert!(
            !round_acks.is_empty(),
            "round {round}: nothing was acknowledged in {delay:?}"
        );
        eprintln!(
            "round {round}: {} publishes acknowledged before SIGKILL at {delay:?}",
            round_acks.len()
        );
        acked.extend(round_acks);

        node = Node::start(dir.path(), &[]);
        assert_eq!(node.admin_token, None);
        assert_eq!(node.call("GET", "/readyz", None, None, &[]).status, 200);
        for (provider, revision) in &acked {
            let r = node.get(&format!("/v1/providers/{provider}"), &admin);
            assert_eq!(
                r.status, 200,
                "round {round}: acknowledged {provider} is missing"
            );
            assert_eq!(
                r.body["descriptors"][0]["revision"],
                revision.as_str(),
                "{provider}"
            );
            let v = node.get(
                &format!("/v1/capabilities/cap-{provider}/versions/1.0.0"),
                &admin,
            );
            assert_eq!(v.body["revision"], revision.as_str(), "{provider}");
        }
        // Each registration wrote its provider and its two events in one batch (each probe
        // one event): the next event id is exactly 2 × registrations + probes + 1.
        let present = count_capabilities(&node, &admin) as u64;
        let acked_count = acked.len() as u64;
        assert!(
            present >= acked_count && present <= acked_count + 4 * (round as u64 + 1),
            "{present}"
        );
        let last = 2 * present + round as u64;
        let mut feed = node.events(&admin, &[("last-event-id", &last.to_string())], "");
        let probe = format!("probe-{round}");
        assert_eq!(node.register(&admin, &probe, "probe", &[]).status, 201);
        let next = feed.take(1);
        assert_eq!(next[0].id, last + 1, "round {round}");
        assert_eq!(next[0].data["data"]["provider_id"], probe.as_str());
        let stderr = node.stderr();
        assert!(
            !stderr.contains("ERROR") && !stderr.contains("WARN"),
            "round {round}:\n{stderr}"
        );
    }
    // Not stopped with SIGTERM here: the dropped event readers may still hold their
    // connections, which keeps a graceful shutdown waiting (see serve_events'
    // `sigterm_ends_open_event_streams_and_exits`). Dropping the node kills it.
}
