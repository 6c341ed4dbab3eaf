//! `weft serve`: pagination walks, discovery filters, revisions and unregistering, over real
//! HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::{BTreeMap, BTreeSet};

use harness::{Node, assert_error, descriptor, tempdir};
use serde_json::{Value, json};

const IDS: [&str; 8] = [
    "cap-a", "cap-b", "cap-c", "cap-d", "cap-e", "cap-f", "cap-g", "cap-h",
];
/// Already in SemVer order (note 1.9.0 < 1.10.0 and the pre-releases before 1.0.0).
const VERSIONS: [&str; 8] = [
    "0.9.0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-beta",
    "1.0.0",
    "1.2.0",
    "1.9.0",
    "1.10.0",
];
const PROVIDERS: usize = 11;

fn provider_of(i: usize, j: usize) -> usize {
    (i * VERSIONS.len() + j) % PROVIDERS
}

fn catalog_descriptor(i: usize, j: usize) -> Value {
    let title = if IDS[i] == "cap-c" {
        "Zebra Crossing"
    } else {
        "Plain"
    };
    let mut d = descriptor(IDS[i], VERSIONS[j], title);
    if VERSIONS[j] == "1.0.0-beta" {
        d["io_mode"] = json!("server_streaming");
        d["output_chunk_schema"] = json!({"type": "string"});
    }
    d
}

/// 64 descriptors over 11 providers on 11 nodes (plus a duplicate publisher); returns the
/// node and `id@version` → revision.
fn seeded() -> (tempfile::TempDir, Node, String, BTreeMap<String, String>) {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let mut revisions = BTreeMap::new();
    for k in 0..PROVIDERS {
        let descriptors: Vec<Value> = (0..IDS.len())
            .flat_map(|i| (0..VERSIONS.len()).map(move |j| (i, j)))
            .filter(|&(i, j)| provider_of(i, j) == k)
            .map(|(i, j)| catalog_descriptor(i, j))
            .collect();
        let r = node.register(
            &admin,
            &format!("prov-{k}"),
            &format!("node-{k:02}"),
            &descriptors,
        );
        assert_eq!(r.status, 201, "{}", r.text);
        for d in r.body["descriptors"].as_array().unwrap() {
            assert_eq!(d["status"], "new");
            let qid = format!(
                "{}@{}",
                d["id"].as_str().unwrap(),
                d["version"].as_str().unwrap()
            );
            revisions.insert(qid, d["revision"].as_str().unwrap().to_owned());
        }
    }
    // A second provider serving an identical cap-a@1.0.0 on node-00: listed once.
    let r = node.register(&admin, "dup", "node-00", &[catalog_descriptor(0, 4)]);
    assert_eq!(
        r.body["descriptors"][0]["status"], "unchanged",
        "{}",
        r.text
    );
    assert_eq!(revisions.len(), 64);
    (dir, node, admin, revisions)
}

/// Every `id@version` in the expected order.
fn expected(filter: impl Fn(usize, usize) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for (i, id) in IDS.iter().enumerate() {
        for (j, version) in VERSIONS.iter().enumerate() {
            if filter(i, j) {
                out.push(format!("{id}@{version}"));
            }
        }
    }
    out
}

/// Walks `path` (which already has a `?`) with `limit`, checking page invariants; returns
/// the items' `id@version` and the number of pages.
fn walk(
    node: &Node,
    token: &str,
    path: &str,
    limit: usize,
    revisions: &BTreeMap<String, String>,
) -> (Vec<String>, usize) {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut url = format!("{path}&limit={limit}");
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let r = node.get(&url, token);
        assert_eq!(r.status, 200, "{url}: {}", r.text);
        pages += 1;
        assert!(pages <= 100, "runaway pagination");
        let page: Vec<String> = r.body["capabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{}@{}",
                    d["id"].as_str().unwrap(),
                    d["version"].as_str().unwrap()
                )
            })
            .collect();
        let map: BTreeMap<String, String> =
            serde_json::from_value(r.body["revisions"].clone()).unwrap();
        assert_eq!(
            map.keys().cloned().collect::<BTreeSet<_>>(),
            page.iter().cloned().collect()
        );
        for (qid, revision) in &map {
            assert_eq!(Some(revision), revisions.get(qid), "{qid}");
        }
        items.extend(page.iter().cloned());
        match r.body["nextCursor"].as_str() {
            Some(next) => {
                assert_eq!(r.body["hasMore"], true);
                assert_eq!(page.len(), limit, "only the last page may be short");
                cursor = Some(next.to_owned());
            }
            None => {
                assert_eq!(r.body["hasMore"], false);
                assert!(page.len() <= limit);
                return (items, pages);
            }
        }
    }
}

#[test]
fn walking_capabilities_seven_at_a_time_yields_each_exactly_once_in_semver_order() {
    let (_dir, node, admin, revisions) = seeded();
    let (items, pages) = walk(&node, &admin, "/v1/capabilities?", 7, &revisions);
    assert_eq!(items, expected(|_, _| true));
    assert_eq!(pages, 10);
    let (all, pages) = walk(&node, &admin, "/v1/capabilities?", 100, &revisions);
    assert_eq!((all.len(), pages), (64, 1));
    let first = node.get("/v1/capabilities", &admin);
    assert_eq!(first.body["capabilities"].as_array().unwrap().len(), 25);
    assert_eq!(first.body["hasMore"], true);
    // Each listed descriptor is the canonical current one, with io_mode always present.
    let beta = node.get("/v1/capabilities/cap-a/versions/1.0.0-beta", &admin);
    assert_eq!(beta.body["descriptor"]["io_mode"], "server_streaming");
    assert_eq!(
        beta.body["descriptor"]["output_chunk_schema"],
        json!({"type": "string"})
    );
    // GET /v1/capabilities/{id} lists every version in SemVer order with its providers.
    let a = node.get("/v1/capabilities/cap-a", &admin);
    let versions: Vec<&str> = a.body["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, VERSIONS);
    let served_by: Vec<&str> = a.body["versions"][4]["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["provider_id"].as_str().unwrap())
        .collect();
    assert_eq!(served_by, ["dup", "prov-4"]);
}

#[test]
fn walking_nodes_three_at_a_time_yields_each_node_once_in_id_order() {
    let (_dir, node, admin, _) = seeded();
    let mut seen = Vec::new();
    let mut cursor = String::new();
    for page in 0.. {
        assert!(page < 20, "runaway pagination");
        let r = node.get(&format!("/v1/nodes?limit=3{cursor}"), &admin);
        assert_eq!(r.status, 200, "{}", r.text);
        let nodes = r.body["nodes"].as_array().unwrap();
        seen.extend(nodes.iter().cloned());
        match r.body["nextCursor"].as_str() {
            Some(next) => {
                assert_eq!((nodes.len(), &r.body["hasMore"]), (3, &json!(true)));
                cursor = format!("&cursor={next}");
            }
            None => {
                assert_eq!(r.body["hasMore"], false);
                break;
            }
        }
    }
    let ids: Vec<&str> = seen
        .iter()
        .map(|n| n["node_id"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (0..PROVIDERS).map(|k| format!("node-{k:02}")).collect();
    assert_eq!(ids, want);
    assert_eq!(seen[0]["providers"], json!(["dup", "prov-0"]));
    for (k, n) in seen.iter().enumerate() {
        let tags: BTreeSet<&str> = (0..IDS.len())
            .flat_map(|i| (0..VERSIONS.len()).map(move |j| (i, j)))
            .filter(|&(i, j)| provider_of(i, j) == k)
            .map(|(i, _)| IDS[i])
            .collect();
        let got: Vec<&str> = n["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert_eq!(got, tags.into_iter().collect::<Vec<_>>(), "node-{k:02}");
        assert_eq!(n["status"], "ready");
    }
}

#[test]
fn filters_narrow_the_listing_and_combine() {
    let (_dir, node, admin, revisions) = seeded();
    let list = |query: &str| {
        walk(
            &node,
            &admin,
            &format!("/v1/capabilities?{query}"),
            7,
            &revisions,
        )
        .0
    };
    assert_eq!(list("id=cap-c"), expected(|i, _| i == 2));
    assert_eq!(list("io_mode=server_streaming"), expected(|_, j| j == 3));
    assert_eq!(list("io_mode=unary"), expected(|_, j| j != 3));
    assert_eq!(list("io_mode=bidirectional"), Vec::<String>::new());
    assert_eq!(
        list("provider_id=prov-3"),
        expected(|i, j| provider_of(i, j) == 3)
    );
    assert_eq!(
        list("node_id=node-03"),
        expected(|i, j| provider_of(i, j) == 3)
    );
    assert_eq!(
        list("node_id=node-00"),
        expected(|i, j| provider_of(i, j) == 0 || (i, j) == (0, 4))
    );
    assert_eq!(list("provider_id=dup"), ["cap-a@1.0.0"]);
    assert_eq!(list("q=zebra"), expected(|i, _| i == 2));
    assert_eq!(list("q=ZEBRA%20cross"), expected(|i, _| i == 2));
    assert_eq!(list("q=%401.10.0."), expected(|_, j| j == 7));
    assert_eq!(list("q=cap-h"), expected(|i, _| i == 7));
    assert_eq!(
        list("id=cap-c&io_mode=server_streaming"),
        ["cap-c@1.0.0-beta"]
    );
    assert_eq!(
        list("id=cap-c&provider_id=prov-3"),
        expected(|i, j| i == 2 && provider_of(i, j) == 3)
    );
    assert_eq!(
        list("q=plain&node_id=node-05&io_mode=unary"),
        expected(|i, j| i != 2 && j != 3 && provider_of(i, j) == 5)
    );
    assert_eq!(list("id=cap-zz"), Vec::<String>::new());
    assert_eq!(list("id=Not%20an%20id"), Vec::<String>::new());
    assert_eq!(list("provider_id=ghost"), Vec::<String>::new());
    let r = node.get("/v1/capabilities?node_id=node-03&limit=2", &admin);
    assert_eq!(r.body["node_id"], "node-03");
    assert!(
        node.get("/v1/capabilities?provider_id=prov-3", &admin)
            .body
            .get("node_id")
            .is_none()
    );
    assert_error(
        &node.get("/v1/capabilities?node_id=node-99", &admin),
        404,
        "not_found",
    );
}

#[test]
fn republishing_is_unchanged_and_changed_content_is_a_new_revision_with_history() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let v1 = descriptor("echo", "1.0.0", "Echo");
    let mut v2 = v1.clone();
    v2["description"] = json!("Echo, now documented better.");
    let publish =
        |provider: &str, d: &Value| node.register(&admin, provider, "n1", std::slice::from_ref(d));

    let a = publish("p1", &v1);
    let rev_a = a.body["descriptors"][0]["revision"]
        .as_str()
        .unwrap()
        .to_owned();
    let same = publish("p1", &v1);
    assert_eq!((same.status, &same.body["changed"]), (200, &json!(false)));
    assert_eq!(
        same.body["descriptors"][0],
        json!({"id": "echo", "version": "1.0.0", "revision": rev_a, "status": "unchanged"})
    );

    let b = publish("p1", &v2);
    assert_eq!((b.status, &b.body["changed"]), (200, &json!(true)));
    assert_eq!(b.body["descriptors"][0]["status"], "revised");
    let rev_b = b.body["descriptors"][0]["revision"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(rev_a, rev_b);
    let view = node.get("/v1/capabilities/echo/versions/1.0.0", &admin);
    assert_eq!(view.body["revision"], rev_b.as_str());
    assert_eq!(
        view.body["descriptor"]["description"],
        "Echo, now documented better."
    );
    let history: Vec<&str> = view.body["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["revision"].as_str().unwrap())
        .collect();
    assert_eq!(history, [rev_a.as_str(), rev_b.as_str()]);
    for h in view.body["history"].as_array().unwrap() {
        assert!(h["published_at"].as_str().unwrap().ends_with('Z'), "{h}");
    }
    let list = node.get("/v1/capabilities", &admin);
    assert_eq!(list.body["revisions"], json!({"echo@1.0.0": rev_b}));
    assert_eq!(
        list.body["capabilities"][0]["description"],
        "Echo, now documented better."
    );
    assert_eq!(
        node.get("/v1/capabilities/echo", &admin).body["versions"][0]["revision"],
        rev_b.as_str()
    );
    assert_eq!(
        node.get("/v1/providers/p1", &admin).body["descriptors"][0]["revision"],
        rev_b.as_str()
    );

    // Going back to an earlier content makes it current again without a third entry.
    let back = publish("p1", &v1);
    assert_eq!(back.body["descriptors"][0]["status"], "revised");
    let view = node.get("/v1/capabilities/echo/versions/1.0.0", &admin);
    assert_eq!(view.body["revision"], rev_a.as_str());
    assert_eq!(view.body["history"].as_array().unwrap().len(), 2);
    // A second provider publishing the other content: each provider keeps its own revision.
    let p2 = publish("p2", &v2);
    assert_eq!(p2.body["descriptors"][0]["status"], "revised");
    let view = node.get("/v1/capabilities/echo/versions/1.0.0", &admin);
    assert_eq!(view.body["revision"], rev_b.as_str());
    assert_eq!(
        view.body["providers"],
        json!([{"provider_id": "p1", "node_id": "n1", "revision": rev_a},
               {"provider_id": "p2", "node_id": "n1", "revision": rev_b}])
    );
    assert_eq!(
        node.get("/v1/capabilities", &admin).body["revisions"],
        json!({"echo@1.0.0": rev_b})
    );
}

#[test]
fn unregistering_is_idempotent_hides_the_provider_and_keeps_history() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let admin = node.admin();
    let echo = descriptor("echo", "1.0.0", "Echo");
    let only = descriptor("only", "1.0.0", "Only");
    assert_eq!(
        node.register(&admin, "p1", "n-a", &[echo.clone(), only])
            .status,
        201
    );
    assert_eq!(node.register(&admin, "p2", "n-b", &[echo]).status, 201);
    let unregister = || {
        node.call(
            "POST",
            "/v1/providers/p1/unregister",
            Some(&admin),
            None,
            &[],
        )
    };
    assert_eq!(
        unregister().body,
        json!({"provider_id": "p1", "unregistered": true})
    );
    let again = unregister();
    assert_eq!(
        (again.status, again.body),
        (200, json!({"provider_id": "p1", "unregistered": false}))
    );
    let never = node.call(
        "POST",
        "/v1/providers/never/unregister",
        Some(&admin),
        None,
        &[],
    );
    assert_eq!(
        never.body,
        json!({"provider_id": "never", "unregistered": false})
    );

    assert_error(&node.get("/v1/providers/p1", &admin), 404, "not_found");
    let list = node.get("/v1/capabilities", &admin);
    assert_eq!(
        list.body["revisions"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["echo@1.0.0"]
    );
    assert_eq!(
        node.get("/v1/capabilities?provider_id=p1", &admin).body["capabilities"],
        json!([])
    );
    let echo_view = node.get("/v1/capabilities/echo/versions/1.0.0", &admin);
    assert_eq!(echo_view.body["providers"].as_array().unwrap().len(), 1);
    let only_view = node.get("/v1/capabilities/only/versions/1.0.0", &admin);
    assert_eq!(only_view.status, 200, "history stays served");
    assert_eq!(only_view.body["providers"], json!([]));
    assert_eq!(only_view.body["history"].as_array().unwrap().len(), 1);
    assert_eq!(
        node.get("/v1/capabilities/only", &admin).body["versions"][0]["providers"],
        json!([])
    );
    assert_error(&node.get("/v1/nodes/n-a", &admin), 404, "not_found");
    assert_error(
        &node.get("/v1/capabilities?node_id=n-a", &admin),
        404,
        "not_found",
    );
    let nodes: Vec<Value> = node.get("/v1/nodes", &admin).body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node_id"].clone())
        .collect();
    assert_eq!(nodes, [json!("n-b")]);

    // Registering again brings it back as a new provider.
    let back = node.register(&admin, "p1", "n-c", &[descriptor("only", "1.0.0", "Only")]);
    assert_eq!(back.status, 201);
    assert_eq!(back.body["descriptors"][0]["status"], "unchanged");
    assert_eq!(
        node.get("/v1/capabilities?node_id=n-c", &admin).body["revisions"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
    // Moving p2 to another node empties (and so removes) its old node.
    assert_eq!(
        node.register(&admin, "p2", "n-d", &[descriptor("echo", "1.0.0", "Echo")])
            .status,
        200
    );
    assert_error(&node.get("/v1/nodes/n-b", &admin), 404, "not_found");
    assert_eq!(
        node.get("/v1/nodes/n-d", &admin).body["providers"],
        json!(["p2"])
    );
}
