//! `weft serve --agents DIR`: agent catalogs served over real HTTP and reloaded by polling.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::Path;
use std::time::Duration;

use harness::{Node, assert_error, poll, tempdir};
use serde_json::{Value, json};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A node serving a scratch copy of `examples/agents`; returns (tempdir, agents dir, node).
fn serving_examples() -> (tempfile::TempDir, std::path::PathBuf, Node) {
    let dir = tempdir();
    let agents = dir.path().join("agents");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agents"),
        &agents,
    );
    let data = dir.path().join("data");
    let node = Node::start(
        &data,
        &[
            "--agents",
            agents.to_str().unwrap(),
            "--agents-poll-ms",
            "100",
        ],
    );
    (dir, agents, node)
}

fn names(list: &Value) -> Vec<&str> {
    list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect()
}

fn digests(agent: &Value) -> Vec<(String, String)> {
    agent["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["digest"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn is_digest(text: &str) -> bool {
    text.len() == 71
        && text.starts_with("sha256:")
        && text[7..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[test]
fn the_example_agents_are_listed_with_their_catalogs() {
    let (_dir, _agents, node) = serving_examples();
    let read = node.token(&node.admin(), None, &["capabilities:read"]);
    let list = node.get("/v1/agents", &read);
    assert_eq!(list.status, 200);
    assert_eq!(
        names(&list.body),
        ["designer", "release-curator", "reviewer"]
    );
    assert_eq!(
        (&list.body["hasMore"], &list.body["nextCursor"]),
        (&json!(false), &Value::Null)
    );
    assert!(list.body.get("error").is_none());
    let by_name = |name: &str| {
        list.body["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("designer")["catalog"], "directory");
    assert_eq!(by_name("release-curator")["catalog"], "toml");
    assert_eq!(
        by_name("reviewer"),
        json!({"name": "reviewer", "capabilities": []})
    );

    let designer = node.get("/v1/agents/designer", &read);
    assert_eq!(designer.status, 200);
    assert_eq!(designer.body, by_name("designer"));
    let caps = digests(&designer.body);
    let ids: Vec<&str> = caps.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["audit-accessibility", "build-site", "review-copy"]);
    assert!(caps.iter().all(|(_, d)| is_digest(d)), "{caps:?}");
    let distinct: std::collections::BTreeSet<&String> = caps.iter().map(|(_, d)| d).collect();
    assert_eq!(distinct.len(), 3);
    assert_eq!(
        designer.body["capabilities"][2]["requirements"],
        json!(["build-site"])
    );

    let curator = node.get("/v1/agents/release-curator", &read);
    let fix = &curator.body["capabilities"][1];
    assert_eq!(
        (&fix["id"], &fix["version"], &fix["requirements"]),
        (
            &json!("fix-go-migration-tests"),
            &json!("1.2.0"),
            &json!(["collect-failing-tests"])
        )
    );
    // Agents belong to the deployment: another tenant sees the same catalogs.
    let acme = node.tenant(&node.admin(), "acme");
    assert_eq!(node.get("/v1/agents/designer", &acme).body, designer.body);
    // Paging by name.
    let page = node.get("/v1/agents?limit=2", &read);
    assert_eq!(names(&page.body), ["designer", "release-curator"]);
    assert_eq!(
        (&page.body["hasMore"], &page.body["nextCursor"]),
        (&json!(true), &json!("release-curator"))
    );
    let rest = node.get("/v1/agents?limit=2&cursor=release-curator", &read);
    assert_eq!(names(&rest.body), ["reviewer"]);
    assert_eq!(rest.body["hasMore"], false);

    assert_error(&node.get("/v1/agents/ghost", &read), 404, "not_found");
    let publish = node.token(&node.admin(), None, &["capabilities:publish"]);
    assert_error(&node.get("/v1/agents", &publish), 403, "forbidden");
    assert_error(
        &node.get("/v1/agents?sort=name", &read),
        400,
        "invalid_request",
    );
}

#[test]
fn editing_a_record_changes_its_digest_after_a_poll() {
    let (_dir, agents, node) = serving_examples();
    let admin = node.admin();
    let before = digests(&node.get("/v1/agents/designer", &admin).body);
    let file = agents.join("designer/capabilities/build-site.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace(
        "Build the landing page.",
        "Build the landing page, responsive and fast.",
    );
    assert_ne!(text, edited);
    std::fs::write(&file, edited).unwrap();
    let after = poll(Duration::from_secs(10), || {
        let now = digests(&node.get("/v1/agents/designer", &admin).body);
        (now[1].1 != before[1].1).then_some(now)
    })
    .expect("the digest of build-site did not change within 10 s");
    assert_eq!(after[0], before[0], "audit-accessibility is untouched");
    assert_eq!(after[2], before[2], "review-copy is untouched");
    assert!(is_digest(&after[1].1));
    let designer = node.get("/v1/agents/designer", &admin);
    assert_eq!(
        designer.body["capabilities"][1]["summary"],
        "Build the landing page, responsive and fast."
    );
    // Writing the original back restores the original digest.
    std::fs::write(&file, text).unwrap();
    poll(Duration::from_secs(10), || {
        (digests(&node.get("/v1/agents/designer", &admin).body) == before).then_some(())
    })
    .expect("the original digest did not come back within 10 s");
}

#[test]
fn a_broken_agent_is_listed_with_its_error_and_others_keep_loading() {
    let (_dir, agents, node) = serving_examples();
    let admin = node.admin();
    let broken = agents.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("capabilities.toml"),
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\n",
    )
    .unwrap();
    let list = poll(Duration::from_secs(10), || {
        let list = node.get("/v1/agents", &admin);
        (names(&list.body).len() == 4).then_some(list)
    })
    .expect("the broken agent did not appear within 10 s");
    assert_eq!(
        names(&list.body),
        ["broken", "designer", "release-curator", "reviewer"]
    );
    let agent = node.get("/v1/agents/broken", &admin);
    assert_eq!(agent.status, 200);
    assert_eq!(agent.body["capabilities"], json!([]));
    assert!(agent.body.get("catalog").is_none());
    let error = &agent.body["error"];
    assert_eq!(error["code"], "missing_field");
    assert_eq!(error["line"], 1);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("capabilities.toml"), "{message}");
    assert!(message.contains("outcome"), "{message}");
    assert_eq!(
        digests(&node.get("/v1/agents/designer", &admin).body).len(),
        3
    );

    // Fixing it clears the error; removing an agent drops it.
    std::fs::write(
        broken.join("capabilities.toml"),
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\noutcome = \"o\"\n",
    )
    .unwrap();
    let fixed = poll(Duration::from_secs(10), || {
        let a = node.get("/v1/agents/broken", &admin);
        a.body.get("error").is_none().then_some(a)
    })
    .expect("the fixed agent still had an error after 10 s");
    assert_eq!(fixed.body["catalog"], "toml");
    assert_eq!(digests(&fixed.body).len(), 1);
    std::fs::remove_dir_all(agents.join("reviewer")).unwrap();
    poll(Duration::from_secs(10), || {
        (node.get("/v1/agents/reviewer", &admin).status == 404).then_some(())
    })
    .expect("the removed agent was still served after 10 s");
    assert_eq!(
        names(&node.get("/v1/agents", &admin).body),
        ["broken", "designer", "release-curator"]
    );
}

#[test]
fn without_agents_the_listing_is_empty() {
    let dir = tempdir();
    let node = Node::start(dir.path(), &[]);
    let r = node.get("/v1/agents", &node.admin());
    assert_eq!(
        r.body,
        json!({"agents": [], "nextCursor": null, "hasMore": false})
    );
    assert_error(
        &node.get("/v1/agents/designer", &node.admin()),
        404,
        "not_found",
    );
}
