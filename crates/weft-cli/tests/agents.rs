//! `weft agent inspect`, `weft agent select`, and `weft check` on agent directories, run as
//! the real binary against the example agents and scratch copies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .unwrap()
}

fn agents() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agents")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-agents-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn inspect_lists_every_agent_and_capability() {
    let out = weft(&["agent", "inspect", agents().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let headers: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split("  ").next().unwrap())
        .collect();
    assert_eq!(headers, ["designer", "release-curator", "reviewer"]);
    assert!(stdout.contains("(no catalog, 0 capabilities)"));
    let fix = stdout
        .lines()
        .find(|l| l.contains("fix-go-migration-tests"))
        .unwrap();
    assert!(fix.contains("1.2.0") && fix.contains("sha256:"), "{fix}");
}

#[test]
fn inspect_json_carries_all_fields_and_digests() {
    let out = weft(&["agent", "inspect", "--json", agents().to_str().unwrap()]);
    assert!(out.status.success());
    let doc = json(&out);
    let names: Vec<&str> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["designer", "release-curator", "reviewer"]);
    assert_eq!(doc["agents"][2]["catalog"], Value::Null);
    assert_eq!(doc["agents"][2]["capabilities"], serde_json::json!([]));
    let curator = &doc["agents"][1];
    assert_eq!(curator["catalog"], "toml");
    let fix = &curator["capabilities"][1];
    assert_eq!(fix["id"], "fix-go-migration-tests");
    assert_eq!(fix["version"], "1.2.0");
    assert_eq!(
        fix["requirements"],
        serde_json::json!(["collect-failing-tests"])
    );
    assert_eq!(fix["execution_outline"].as_array().unwrap().len(), 3);
    assert!(fix["digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(doc["errors"], serde_json::json!([]));
}

#[test]
fn a_broken_catalog_is_reported_with_its_place_and_others_still_load() {
    let root = scratch("broken");
    let good = root.join("good");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::write(
        good.join("capabilities.toml"),
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\noutcome = \"o\"\n",
    )
    .unwrap();
    let bad = root.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("capabilities.toml"),
        "[[capabilities]]\nid = \"a\"\nsummary = \"s\"\n",
    )
    .unwrap();
    let out = weft(&["agent", "inspect", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).starts_with("good"));
    let stderr = text(&out.stderr);
    let expected = format!("{}:", bad.join("capabilities.toml").display());
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(stderr.contains(": missing_field: "), "{stderr}");
    assert!(stderr.contains("outcome is required"), "{stderr}");

    let out = weft(&["agent", "inspect", "--json", root.to_str().unwrap()]);
    let doc = json(&out);
    assert_eq!(doc["agents"].as_array().unwrap().len(), 1);
    assert_eq!(doc["errors"][0]["code"], "missing_field");
    assert_eq!(doc["errors"][0]["line"], 1);

    // `weft check` reports the same problem in its usual format.
    let out = weft(&["check", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("good/a  sha256:"));
    assert!(text(&out.stderr).contains("missing_field"));
}

#[test]
fn select_orders_by_extra_coverage_then_name_and_explains_rejections() {
    let root = scratch("select");
    for (name, ids) in [
        ("zeta", vec!["go", "sql", "docs", "ci"]),
        ("alpha", vec!["go", "sql"]),
        ("beta", vec!["go", "sql", "docs"]),
        ("gamma", vec!["go"]),
    ] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let body: String = ids
            .iter()
            .map(|id| {
                format!("[[capabilities]]\nid = \"{id}\"\nsummary = \"s\"\noutcome = \"o\"\n")
            })
            .collect();
        std::fs::write(dir.join("capabilities.toml"), body).unwrap();
    }
    let out = weft(&[
        "agent",
        "select",
        "--needs",
        "go,sql",
        "--json",
        root.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = json(&out);
    let order: Vec<&str> = doc["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["zeta", "beta", "alpha"]);
    assert_eq!(
        doc["selected"][0]["extra_ids"],
        serde_json::json!(["docs", "ci"])
    );
    assert_eq!(doc["rejected"][0]["name"], "gamma");
    assert_eq!(doc["rejected"][0]["missing"], serde_json::json!(["sql"]));

    let human = weft(&[
        "agent",
        "select",
        "--needs",
        "go",
        "--needs",
        "sql",
        root.to_str().unwrap(),
    ]);
    let stdout = text(&human.stdout);
    assert!(stdout.contains("gamma  rejected: missing sql"), "{stdout}");

    let none = weft(&["agent", "select", "--needs", "rust", root.to_str().unwrap()]);
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none.stderr).contains("no agent covers every need: rust"));
    let blank = weft(&[
        "agent",
        "select",
        "--needs",
        " , ",
        "--json",
        root.to_str().unwrap(),
    ]);
    assert_eq!(blank.status.code(), Some(1));
    assert_eq!(json(&blank)["errors"][0]["code"], "no_needs");
}

#[test]
fn check_walks_examples_into_descriptors_and_agents() {
    let examples = agents().join("..");
    let out = weft(&["check", "--json", examples.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = json(&out);
    assert_eq!(doc["descriptors"].as_array().unwrap().len(), 4);
    let caps: Vec<String> = doc["agent_capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}/{}",
                c["agent"].as_str().unwrap(),
                c["id"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        caps,
        [
            "designer/audit-accessibility",
            "designer/build-site",
            "designer/review-copy",
            "release-curator/collect-failing-tests",
            "release-curator/fix-go-migration-tests"
        ]
    );
}

#[test]
fn missing_root_is_a_typed_error() {
    let out = weft(&["agent", "inspect", "--json", "/no/such/agents"]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    assert!(doc["errors"][0]["code"].is_string());
}
